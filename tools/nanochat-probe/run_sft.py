"""Measure one karpathy/nanochat scripts/chat_sft.py run on the GPU (nanochat 92d63d4), vramfit measurement harness.

Two processes:
 1. `mkckpt`: the real scripts/base_train.py (data/tokenizer stubbed as in run_base.py) with the REAL
    checkpoint_manager, 1 iteration, saving a genuine base checkpoint (model_000001.pt, optim_000001_rank0.pt,
    meta_000001.json) under $NANOCHAT_BASE_DIR/base_checkpoints/<tag>.
 2. the real scripts/chat_sft.py, loading that checkpoint through the real load_model / load_optimizer_state
    (torch.load(map_location=cuda), to_empty + init_weights + load_state_dict(assign=True); the optimizer state is
    loaded before step 0 unless --load-optimizer=0), with the task data stubbed: SmolTalk/MMLU/GSM8K/TaskMixture
    replaced by synthetic conversations, tokenizer.render_conversation returning random ids (length 16..T) and a
    loss mask; the real bestfit-pad packing loader (int32 inputs, int64 targets with -1, fresh tensors per batch,
    one batch prefetched), ChatCORE off (--chatcore-every=-1).
Marks and phase peaks as run_base.py (eval = evaluate_bpb at step 0 and the last step; fwd_bwd; optimizer_step);
`peak_before_first_eval` includes checkpoint loading.
Note: chat_sft's loader sets last_step once num_iterations batches were fetched (the prefetch counts), so
--num-iterations=3*GA+1 gives 3 optimizer steps.

usage:
  NANOCHAT=<dir> python3 run_sft.py NAME --depth=D --base-seq-len=T0 -- <chat_sft flags>
  (internally: python3 run_sft.py --mkckpt TAG <base_train flags>)
Data in data/measured/nanochat-sft.jsonl: PyTorch 2.11.0+cu130, NVIDIA H100 80GB HBM3, ALLOC=expandable,
nanochat 92d63d4; via `bash tools/nanochat-probe/device_call.sh sft|sft2 ...` (make_jobs.py lists the configs).
"""
import json, os, random, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_base as rb
import torch


class SftTok(rb.Tok):
    def __init__(self, T):
        self.T = T
        self.rng = random.Random(0)

    def render_conversation(self, conversation, max_tokens=2048):
        n = self.rng.randint(16, max(17, self.T))
        ids = [0] + [self.rng.randrange(1, rb.V) for _ in range(n - 1)]
        k = n // 3
        mask = [0] * k + [1] * (n - k)
        return ids, mask

    def __call__(self, *a, **k): return [0]
    def decode(self, ids): return ''


class Task:
    def __init__(self, *a, **k):
        self.n = 2000

    def __len__(self): return self.n

    def __getitem__(self, i): return {'messages': []}


class TaskMixture:
    def __init__(self, tasks):
        self.n = sum(len(t) for t in tasks)

    def __len__(self): return self.n

    def __getitem__(self, i): return {'messages': []}


def main():
    if sys.argv[1] == '--mkckpt':
        tag, argv = sys.argv[2], sys.argv[3:]
        rb.setup(stub_checkpoints=False)
        rec = rb.run_script('mkckpt_' + tag, argv + [f'--model-tag={tag}'])
        print('CKPT ' + json.dumps(rec), flush=True)
        return
    name = sys.argv[1]
    i = sys.argv.index('--')
    pre, argv = sys.argv[2:i], sys.argv[i + 1:]
    kv = dict(a[2:].split('=', 1) for a in pre)
    depth, T0 = int(kv['depth']), int(kv['base-seq-len'])
    tag = f'sft_{name}'
    base_argv = [f'--depth={depth}', '--device-batch-size=1', f'--max-seq-len={T0}', f'--total-batch-size={T0}',
                 '--num-iterations=1', '--eval-every=-1', '--core-metric-every=-1', '--sample-every=-1',
                 '--warmup-steps=1', f'--window-pattern={kv.get("window-pattern", "SSSL")}']
    p = subprocess.run([sys.executable, os.path.abspath(__file__), '--mkckpt', tag] + base_argv,
                       capture_output=True, text=True)
    if p.returncode != 0 or 'CKPT ' not in p.stdout:
        print(p.stdout[-3000:], p.stderr[-5000:])
        print('RESULT ' + json.dumps({'name': name, 'status': 'ckpt_error'}), flush=True)
        return
    T = int([a.split('=')[1] for a in argv if a.startswith('--max-seq-len=')][0])
    tok = SftTok(T)
    rb.stub('nanochat.tokenizer', get_tokenizer=lambda: tok, get_token_bytes=rb.token_bytes_fn)
    rb.setup(stub_checkpoints=False)
    rb.stub('nanochat.tokenizer', get_tokenizer=lambda: tok, get_token_bytes=rb.token_bytes_fn)
    rb.stub('scripts.chat_eval', run_chat_eval=lambda *a, **k: 0.0)
    rb.stub('tasks', __path__=[])
    rb.stub('tasks.common', TaskMixture=TaskMixture)
    rb.stub('tasks.gsm8k', GSM8K=Task)
    rb.stub('tasks.mmlu', MMLU=Task)
    rb.stub('tasks.smoltalk', SmolTalk=Task)
    rec = rb.run_script(name, argv + [f'--model-tag={tag}'], script='chat_sft.py',
                        extra={'script': 'scripts/chat_sft.py', 'base_checkpoint': {'depth': depth, 'max_seq_len': T0}})
    rec['config'].update(depth=depth, window_pattern=kv.get('window-pattern', 'SSSL'))
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
