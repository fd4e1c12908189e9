"""Measure one run of karpathy/build-nanogpt's train_gpt2.py (commit 6104ab1) on the GPU (vramfit measurement harness).

The real script with only its constants changed by exact text replacement (each asserted to occur once):
  total_batch_size, B, T, use_compile, max_steps=3, val_loss_steps=2, no torch.save of the checkpoint, and
  optionally n_layer/n_head/n_embd passed to GPTConfig(vocab_size=50304, ...) in the `model = GPT(...)` line.
Its data shards are random tokens (np.uint16 .npy files in a temp dir), tiktoken is stubbed (encode -> 8 tokens, as
"Hello, I'm a language model," is), HellaSwag is stubbed (8 examples of (4, 60..130) tokens, tens of tokens as real
rows). With max_steps=3 the script runs: step 0 = validation + HellaSwag + train step; step 1 = train step;
step 2 (last) = validation + HellaSwag + sampling + train step (HellaSwag and sampling skipped when use_compile).

Phase marks (torch.cuda.synchronize, max_memory_allocated, memory_allocated, then reset_peak_memory_stats), set by
monkeypatches that do not change what the script allocates:
  setup       script start .. first model.eval()            (model build, .to(device), AdamW creation)
  val         model.eval() after setup/an optimizer step ..  (validation loss loop, val_loss_steps=2 batches)
  hellaswag   iterate_examples() ..                          (8 stub examples through model + get_most_likely_row)
  sample      enc.encode() ..                                (top-k sampling loop, 4 x up to 32 tokens)
  pre_train   model.train() .. end of optimizer.zero_grad()
  fwd[k]      end of zero_grad / end of backward k-1 .. loss.backward() call   (forward of micro-step k)
  bwd[k]      loss.backward() of micro-step k
  post_bwd    end of the last backward .. clip_grad_norm_()
  clip        clip_grad_norm_() .. optimizer.step()
  opt         optimizer.step()  (fused AdamW; its state is created lazily at step 0)
  post        after optimizer.step() .. next phase (synchronize, logging)
Each phase's peak starts at the memory allocated when it begins (reset_peak_memory_stats).

usage: python3 run_train.py NAME B T TOTAL_BATCH USE_COMPILE(0|1) [N_LAYER N_HEAD N_EMBD]
env:   BNG=<dir with train_gpt2.py> (default <repo>/.bng)
       ALLOC=default (default: no PYTORCH_ALLOC_CONF, as train_gpt2.py sets none) | expandable (expandable_segments:True),
       set before torch starts.
       SNAPSHOT=<file.pickle>  PyTorch's own memory snapshot of the run (torch.cuda.memory._dump_snapshot, what
       pytorch.org/memory_viz opens), written at the end whether it fit or ran out; its history keeps the last
       SNAPSHOT_ENTRIES allocator events (default 100000), with python stacks; the record gets `snapshot`.
       CAP_GIB=<GiB> (optional): cap the process as a card of that many GiB usable would
       (torch.cuda.set_per_process_memory_fraction, what the allocator may reserve); the record gets
       `allocator_cap_gib` and `cap_on_purpose` (status `ok` or `oom`, as score-accuracy reads capped runs).
Prints one line `RESULT {json}`.
"""
import json, os, sys, tempfile, time, types

name, B, T, TB, comp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '1'
model_args = [int(a) for a in sys.argv[6:9]] if len(sys.argv) > 6 else None
ALLOC = os.environ.get('ALLOC', 'default')
for k in ('PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'):
    os.environ.pop(k, None)
if ALLOC == 'expandable':
    os.environ['PYTORCH_ALLOC_CONF'] = 'expandable_segments:True'
elif ALLOC != 'default':
    raise SystemExit(f'ALLOC={ALLOC}?')
import numpy as np
import torch

BNG = os.environ.get('BNG', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.bng'))
src = open(os.path.join(BNG, 'train_gpt2.py')).read()
rep = [('total_batch_size = 524288', f'total_batch_size = {TB}'), ('B = 64 ', f'B = {B} '),
       ('T = 1024 ', f'T = {T} '), ('use_compile = False', f'use_compile = {comp}'),
       ('max_steps = 19073', 'max_steps = 3'), ('val_loss_steps = 20', 'val_loss_steps = 2'),
       ('torch.save(checkpoint, checkpoint_path)', 'pass')]
n_layer, n_head, n_embd = model_args or (12, 12, 768)
if model_args:
    rep.append(('model = GPT(GPTConfig(vocab_size=50304))',
                f'model = GPT(GPTConfig(vocab_size=50304, n_layer={n_layer}, n_head={n_head}, n_embd={n_embd}))'))
for old, new in rep:
    assert src.count(old) == 1, old
    src = src.replace(old, new, 1)

work = tempfile.mkdtemp()
os.chdir(work)
os.makedirs('edu_fineweb10B')
ws = int(os.environ.get('WORLD_SIZE', 1))
GA = TB // (B * T * ws)
n = B * T * ws * GA * 4 + B * T * ws * 3 + 2
rng = np.random.default_rng(0)
for split in ('train', 'val'):
    np.save(f'edu_fineweb10B/edufineweb_{split}_000000.npy', rng.integers(0, 50257, n, dtype=np.uint16))

# ---- phase tracker ---------------------------------------------------------------------------------------------
phases = []  # [phase, step, micro, peak_allocated, allocated_at_start, allocated_at_end]
cur = {'phase': 'setup', 'step': 0, 'micro': None, 'a0': 0}
st = {'opt_steps': 0, 'micro': 0, 'reserved': 0}


def enter(new, micro=None):
    torch.cuda.synchronize()
    a = torch.cuda.memory_allocated()
    phases.append([cur['phase'], cur['step'], cur['micro'], torch.cuda.max_memory_allocated(), cur['a0'], a])
    st['reserved'] = max(st['reserved'], torch.cuda.max_memory_reserved())
    torch.cuda.reset_peak_memory_stats()
    cur.update(phase=new, step=st['opt_steps'], micro=micro, a0=a)


class Enc:
    def encode(self, s):
        enter('sample')
        return [15496, 11, 314, 1101, 257, 3303, 2746, 11]  # 8 tokens, as GPT-2's "Hello, I'm a language model,"

    def decode(self, t):
        return ''


sys.modules['tiktoken'] = types.SimpleNamespace(get_encoding=lambda name: Enc())


def iterate_examples(split):
    enter('hellaswag')
    for i in range(8):
        yield {'i': i}


def render_example(example):
    g = torch.Generator().manual_seed(example['i'])
    L = 60 + example['i'] * 10  # HellaSwag rows: context + ending, tens of tokens
    tokens = torch.randint(0, 50257, (4, L), generator=g)
    mask = torch.zeros((4, L), dtype=torch.long)
    mask[:, L // 2:] = 1
    return {}, tokens, mask, 0


sys.modules['hellaswag'] = types.SimpleNamespace(iterate_examples=iterate_examples, render_example=render_example)

_train = torch.nn.Module.train


def train(self, mode=True):
    if type(self).__name__ in ('GPT', 'DistributedDataParallel', 'OptimizedModule'):
        if not mode and cur['phase'] in ('setup', 'post'):
            enter('val')
        elif mode and cur['phase'] != 'pre_train':
            enter('pre_train')
    return _train(self, mode)


torch.nn.Module.train = train
_zero = torch.optim.Optimizer.zero_grad


def zero_grad(self, *a, **k):
    out = _zero(self, *a, **k)
    st['micro'] = 0
    enter('fwd', 0)
    return out


torch.optim.Optimizer.zero_grad = zero_grad
_backward = torch.Tensor.backward


def backward(self, *a, **k):
    enter('bwd', st['micro'])
    out = _backward(self, *a, **k)
    st['micro'] += 1
    enter('fwd', st['micro'])  # renamed post_bwd below when no forward follows
    return out


torch.Tensor.backward = backward
_clip = torch.nn.utils.clip_grad_norm_


def clip(*a, **k):
    enter('clip')
    return _clip(*a, **k)


torch.nn.utils.clip_grad_norm_ = clip
_step = torch.optim.AdamW.step


def step(self, *a, **k):
    enter('opt')
    out = _step(self, *a, **k)
    st['opt_steps'] += 1
    enter('post')
    cur['step'] -= 1  # the post-optimizer window belongs to the step that just ended
    return out


torch.optim.AdamW.step = step

CAP_GIB = float(os.environ['CAP_GIB']) if os.environ.get('CAP_GIB') else None
if CAP_GIB:
    torch.cuda.set_per_process_memory_fraction(CAP_GIB * 2**30 / torch.cuda.get_device_properties(0).total_memory)
rec = {'name': name, 'config': {'B': B, 'T': T, 'total_batch_size': TB, 'grad_accum_steps': GA, 'use_compile': comp,
                                'n_layer': n_layer, 'n_head': n_head, 'n_embd': n_embd, 'vocab_size': 50304,
                                'block_size': 1024, 'allocator': ALLOC, 'world_size': ws,
                                'torchrun': 'RANK' in os.environ},
       'torch': torch.__version__, 'gpu': torch.cuda.get_device_name(), 'bng_commit': '6104ab1', 'status': 'ok'}
if CAP_GIB:
    rec['allocator_cap_gib'], rec['cap_on_purpose'] = CAP_GIB, True
t0 = time.time()
SNAPSHOT = os.environ.get('SNAPSHOT')
if SNAPSHOT:
    torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python',
                                             max_entries=int(os.environ.get('SNAPSHOT_ENTRIES', 100_000)))
try:
    g = {'__name__': '__main__'}
    code = compile(src, 'train_gpt2.py', 'exec')
    torch.cuda.reset_peak_memory_stats()
    exec(code, g)
except torch.OutOfMemoryError as e:
    rec['status'], rec['oom'] = 'oom', str(e)[:500]
except Exception as e:  # noqa
    import traceback; traceback.print_exc()
    rec['status'], rec['error'] = 'error', f'{type(e).__name__}: {str(e)[:500]}'
enter('end')
if SNAPSHOT:
    torch.cuda.memory._dump_snapshot(SNAPSHOT)
    torch.cuda.memory._record_memory_history(enabled=None)
    rec['snapshot'] = os.path.basename(SNAPSHOT)
rec['wall_s'] = round(time.time() - t0, 1)
for p in phases:  # fwd window after the last backward: no forward in it
    if p[0] == 'fwd' and p[2] == GA:
        p[0], p[2] = 'post_bwd', None


def peaks(ph, step=None):
    return [p[3] for p in phases if p[0] == ph and (step is None or p[1] == step)]


steps = sorted({p[1] for p in phases if p[0] == 'opt'})
TRAIN = ('pre_train', 'fwd', 'bwd', 'post_bwd', 'clip')
fb = [max(p[3] for p in phases if p[1] == s and p[0] in TRAIN) for s in steps]
op = [max(peaks('opt', s)) for s in steps]
post = [max(peaks('post', s) or [0]) for s in steps]
ev = peaks('val') + peaks('hellaswag') + peaks('sample')
rec['measured_bytes'] = {
    'peak_allocated_eval': max(ev) if ev else None,  # validation, HellaSwag and sampling windows
    'peak_allocated_train_iter0': max(fb[0], op[0], post[0]) if fb else None,
    'peak_allocated_train_steady': max(fb[1:] + op[1:] + post[1:]) if len(fb) > 1 else None,
    'peak_setup': max(peaks('setup') or [0]),
    'peak_val': peaks('val'), 'peak_hellaswag': peaks('hellaswag'), 'peak_sample': peaks('sample'),
    'peak_fwd_bwd': fb, 'peak_optimizer_step': op, 'peak_post_step': post,
    'peak_fwd': [peaks('fwd', s) for s in steps], 'peak_bwd': [peaks('bwd', s) for s in steps],
    'peak_clip': [max(peaks('clip', s)) for s in steps],
    'peak_reserved': st['reserved'],
    'alloc_after_setup': next((p[5] for p in phases if p[0] == 'setup'), None),
    'alloc_end': phases[-1][5] if phases else None,
}
rec['phases'] = phases  # [phase, step, micro, peak_allocated, allocated_at_start, allocated_at_end]
print('RESULT ' + json.dumps(rec), flush=True)
