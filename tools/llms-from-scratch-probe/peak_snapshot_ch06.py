"""Where gpt_class_finetune.py's training backward peaks (vramfit measurement harness).

Builds chapter 6's model as the script does (previous_chapters.GPTModel, GPT-2 small BASE_CONFIG, every parameter
frozen, a new Linear(768, 2) out_head, the last block and final_norm unfrozen, model.to('cuda')), runs its
calc_loss_batch + backward + AdamW step twice on a random (B, T) batch, with torch.cuda.memory._record_memory_history
(C++ and Python stacks) during the second step, then replays the trace: prints the backward's peak and every live
block of 1 MiB or more at that moment with the ATen / autograd frames that allocated it.
usage: python3 peak_snapshot_ch06.py B T [B T ...]   env: LFS=<exported book folder>
"""
import os, sys, torch
LFS = os.environ.get('LFS', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.lfs'))
sys.path.insert(0, os.path.join(LFS, 'ch06', '01_main-chapter-code'))
import types
for m in ('tiktoken',):
    try:
        __import__(m)
    except ImportError:
        sys.modules[m] = types.SimpleNamespace(get_encoding=lambda n: None)
sys.modules.setdefault('matplotlib', types.ModuleType('matplotlib'))
from previous_chapters import GPTModel  # noqa: E402

args = [int(a) for a in sys.argv[1:]]
for B, T in zip(args[::2], args[1::2]):
    torch.cuda.empty_cache()
    torch.manual_seed(123)
    cfg = {"vocab_size": 50257, "context_length": 1024, "drop_rate": 0.0, "qkv_bias": True, "emb_dim": 768,
           "n_layers": 12, "n_heads": 12}
    model = GPTModel(cfg)
    for p in model.parameters():
        p.requires_grad = False
    model.out_head = torch.nn.Linear(768, 2)
    model.to('cuda')
    for p in model.trf_blocks[-1].parameters():
        p.requires_grad = True
    for p in model.final_norm.parameters():
        p.requires_grad = True
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.1)
    x = torch.randint(0, 50257, (B, T))
    y = torch.randint(0, 2, (B,))

    def step(record):
        opt.zero_grad()
        xb, yb = x.to('cuda'), y.to('cuda')
        logits = model(xb)[:, -1, :]
        loss = torch.nn.functional.cross_entropy(logits, yb)
        del xb, logits
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        if record:
            torch.cuda.memory._record_memory_history(max_entries=200000, context='all', stacks='all')
        loss.backward()
        torch.cuda.synchronize()
        pk = torch.cuda.max_memory_allocated()
        snap = torch.cuda.memory._snapshot() if record else None
        if record:
            torch.cuda.memory._record_memory_history(enabled=None)
        opt.step()
        return base, pk, snap

    step(False)
    base, pk, snap = step(True)
    print(f'== B={B} T={T} GPU={torch.cuda.get_device_name()} torch={torch.__version__}: backward starts at '
          f'{base/2**20:.2f} MiB, peaks at {pk/2**20:.2f} MiB (+{(pk-base)/2**20:.2f})', flush=True)
    trace = [e for t in snap['device_traces'] for e in t]
    live, cur, best, best_live = {}, 0, -1, None
    for e in trace:
        if e['action'] == 'alloc':
            live[e['addr']] = e
            cur += e['size']
        elif e['action'] == 'free_completed' and e['addr'] in live:
            cur -= live.pop(e['addr'])['size']
        if cur > best:
            best, best_live = cur, dict(live)
    print(f'   traced peak +{best/2**20:.2f} MiB over the blocks alive when recording began')
    for e in sorted(best_live.values(), key=lambda e: -e['size']):
        if e['size'] < 2**20:
            continue
        fr = [f['name'] for f in e.get('frames', []) if any(k in f['name'] for k in (
            'at::native::', 'at::_ops::', 'torch::autograd::generated::', 'Backward', 'at::cuda::'))]
        print(f'   {e["size"]/2**20:10.2f} MiB  ' + ' | '.join(list(dict.fromkeys(fr))[:6]))
    del model, opt
