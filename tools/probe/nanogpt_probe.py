#!/usr/bin/env python3
"""Run nanoGPT's train.py loop on a real GPU and record every caching-allocator event.

A development probe for vramfit: it checks the allocation-sequence generator and the allocator
simulation (crates/estimator/src/sequence.rs, allocator.rs) against the real CUDA caching
allocator. Needs PyTorch and a CUDA GPU; nothing in vramfit's build or tests runs it.

The model and the loop are karpathy/nanoGPT's model.py and train.py (MIT licence), retyped with
their memory-relevant behaviour intact: the same modules in the same order, tied wte/lm_head,
fused AdamW in two groups, autocast around forward and loss only, GradScaler for float16,
estimate_loss() under no_grad at iteration 0, the next batch fetched between forward and backward,
clip_grad_norm_, zero_grad(set_to_none=True). Data are random tokens (memory does not depend on
them, except the embedding backward's small data-dependent buffer).

usage: nanogpt_probe.py OUT_DIR NAME key=value ...   (keys as train.py's, plus vocab_size,
       attention=flash|manual, allocator=default|expandable_segments, cap_gib=X, iters=N)
"""
import inspect
import json
import math
import os
import sys
import time

cfg = dict(n_layer=12, n_head=12, n_embd=768, block_size=1024, batch_size=12,
           gradient_accumulation_steps=2, dropout=0.0, bias=False, dtype='bfloat16', compile=False,
           eval_iters=2, vocab_size=50304, attention='flash', allocator='default', cap_gib=0.0, iters=4)
out_dir, name = sys.argv[1], sys.argv[2]
for kv in sys.argv[3:]:
    k, v = kv.split('=', 1)
    old = cfg[k]
    cfg[k] = (v == 'True') if isinstance(old, bool) else type(old)(v)
if cfg['allocator'] == 'expandable_segments':
    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'

import torch  # noqa: E402  (after the allocator environment variable)
import torch.nn as nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c['n_embd'], 3 * c['n_embd'], bias=c['bias'])
        self.c_proj = nn.Linear(c['n_embd'], c['n_embd'], bias=c['bias'])
        self.attn_dropout = nn.Dropout(c['dropout'])
        self.resid_dropout = nn.Dropout(c['dropout'])
        self.n_head, self.n_embd, self.dropout = c['n_head'], c['n_embd'], c['dropout']
        self.flash = c['attention'] == 'flash'
        if not self.flash:
            bs = c['block_size']
            self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c['n_embd'], 4 * c['n_embd'], bias=c['bias'])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c['n_embd'], c['n_embd'], bias=c['bias'])
        self.dropout = nn.Dropout(c['dropout'])

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = LayerNorm(c['n_embd'], bias=c['bias'])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c['n_embd'], bias=c['bias'])
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c['vocab_size'], c['n_embd']),
            wpe=nn.Embedding(c['block_size'], c['n_embd']),
            drop=nn.Dropout(c['dropout']),
            h=nn.ModuleList([Block(c) for _ in range(c['n_layer'])]),
            ln_f=LayerNorm(c['n_embd'], bias=c['bias']),
        ))
        self.lm_head = nn.Linear(c['n_embd'], c['vocab_size'], bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        groups = [{'params': [p for p in params.values() if p.dim() >= 2], 'weight_decay': weight_decay},
                  {'params': [p for p in params.values() if p.dim() < 2], 'weight_decay': 0.0}]
        fused = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **(dict(fused=True) if fused else {}))


def main():
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = 'cuda'
    if cfg['cap_gib']:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(cfg['cap_gib'] * 2**30 / total)
    ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[cfg['dtype']]
    ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)
    B, T, V, GA = cfg['batch_size'], cfg['block_size'], cfg['vocab_size'], cfg['gradient_accumulation_steps']
    data = torch.randint(V, (max(4 * B * T, 1_000_000),), dtype=torch.int64)

    def get_batch(split):
        ix = torch.randint(len(data) - T, (B,))
        x = torch.stack([data[i:i + T] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + T] for i in ix])
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)

    torch.cuda.memory._record_memory_history(max_entries=2_000_000)
    marks = []

    def mark(tag):
        torch.cuda.synchronize()
        marks.append(dict(tag=tag, alloc=torch.cuda.memory_allocated(), peak_alloc=torch.cuda.max_memory_allocated(),
                          reserved=torch.cuda.memory_reserved(), peak_reserved=torch.cuda.max_memory_reserved()))
        torch.cuda.reset_peak_memory_stats()

    model = GPT(cfg)
    model.to(device)
    mark('model')
    scaler = torch.amp.GradScaler('cuda', enabled=(cfg['dtype'] == 'float16'))
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95))
    if cfg['compile']:
        model = torch.compile(model)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(cfg['eval_iters'])
            for k in range(cfg['eval_iters']):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
        model.train()

    status, oom = 'ok', None
    try:
        X, Y = get_batch('train')
        mark('pre_eval')
        estimate_loss()
        mark('eval')
        for it in range(cfg['iters']):
            for micro in range(GA):
                with ctx:
                    logits, loss = model(X, Y)
                    loss = loss / GA
                X, Y = get_batch('train')
                scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            loss.item()
            mark('train_iter')
    except torch.OutOfMemoryError as e:
        status, oom = 'oom', str(e)
    snap = torch.cuda.memory._snapshot()
    codes = {'alloc': 'a', 'free_requested': 'f', 'free_completed': 'F', 'segment_alloc': 's',
             'segment_free': 'S', 'oom': 'o', 'segment_map': 'm', 'segment_unmap': 'u'}
    events = [[codes.get(e['action'], e['action']), e['addr'], e['size']] for e in snap['device_traces'][0]]
    with open(os.path.join(out_dir, name + '.json'), 'w') as f:
        json.dump(dict(name=name, cfg=cfg, marks=marks, status=status, oom=oom, events=events,
                       torch=torch.__version__, device=torch.cuda.get_device_name(0)), f)
    print(name, status, [round(m['peak_alloc'] / 2**30, 3) for m in marks],
          [round(m['reserved'] / 2**30, 3) for m in marks], len(events), 'events')


if __name__ == '__main__':
    t0 = time.time()
    main()
    print(f'{time.time() - t0:.1f}s')
