"""Measure one run of rasbt/LLMs-from-scratch ch05/10_llm-training-speed/01_opt_single_gpu.py (or, under torchrun,
02_opt_multi_gpu_ddp.py) at commit 28c65cdf on the GPU (vramfit measurement harness; sibling of run_train.py).

The real script is exec'd as __main__ (its own main(): GPTModel with SDPA, `torch.compile(model)`,
`model.to(device).to(torch.bfloat16)`, fused AdamW, set_float32_matmul_precision("high"), its own
GPTDatasetV1 / create_dataloader_v1 with num_workers=4 and pin_memory=True, train_model_simple_with_timing with
eval_freq=10 (02: 5), eval_iter=1, generate_and_print_sample after each epoch (02: rank 0, epochs 0, 5, ..), eager
cross_entropy on the compiled model's bf16 logits), with only these changes:
  * its two config dicts are edited by exact text replacement in the source, each asserted to occur once:
    GPT_CONFIG_124M "context_length" / "emb_dim" / "n_heads" / "n_layers" / "drop_rate" / "qkv_bias" and
    OTHER_SETTINGS "num_epochs" (15, 02: 50 -> --epochs, default 1) / "batch_size"; vocab_size 50304, learning_rate,
    weight_decay, eval_freq, eval_iter untouched;
  * middlemarch.txt (the script downloads it from Gutenberg when absent; the device has no network) is a stand-in
    text of --text-chars characters written into a fresh temp cwd, so the script reads it;
  * tiktoken (no BPE files without network): a stub whose encode(text) returns a deterministic list of fake ids
    (< 50257) whose length is --train-tokens for the script's 90 % train split of that text, --val-tokens for its
    10 % val split (each split is tokenized separately, as the script does), and 4 for the start context
    "Every effort moves you" (its real GPT-2 length); decode returns a string. --steps N caps the train split at
    N*batch*context*world_size + 1 tokens, so an epoch has N optimizer steps (drop_last=True);
  * matplotlib / matplotlib.pyplot replaced by no-op stubs (plot_losses, savefig); requests stubbed only if missing
    (never called: the text file exists).
Each run gets its own Inductor and Triton cache (TORCHINDUCTOR_CACHE_DIR = <cache>/inductor, TRITON_CACHE_DIR =
<cache>/triton; --cache-dir, default a fresh temp dir): `cold` = both empty at the start (a user's first run); a
`_warm` twin runs the same flags again on the dirs its cold twin left.

Phase marks (torch.cuda.synchronize, max_memory_allocated, memory_allocated, max_memory_reserved, memory_reserved,
wall clock, then reset_peak_memory_stats), set by monkeypatches that allocate nothing:
  setup        exec start .. first model.train() in train_model_simple_with_timing (GPTModel build, torch.compile
               wrapper, .to(cuda) fp32 then .to(bf16), fused AdamW creation, CPU datasets / loaders, tokenizer)
  pre_train    model.train() at an epoch start .. optimizer.zero_grad()
  zero_grad    optimizer.zero_grad() (set_to_none)
  fwd          end of zero_grad .. loss.backward()  (batch .to(device), compiled forward -- at step 0 Dynamo +
               AOTAutograd + Inductor compile and Triton autotuning -- and the eager cross_entropy on bf16 logits)
  bwd          loss.backward()  (compiled backward, eager cross_entropy backward)
  post_bwd     end of backward .. optimizer.step()
  opt          optimizer.step()  (fused AdamW; exp_avg / exp_avg_sq state, bf16 like the parameters, created at step 0)
  post         after optimizer.step() .. next mark
  eval_train   model.eval() in evaluate_model .. len(val_loader) (calc_loss_loader over 1 train batch, no_grad: the
               compiled model in eval mode, a recompile at its first call)
  eval_val     len(val_loader) .. model.train() in evaluate_model (1 val batch)
  post_eval    model.train() in evaluate_model .. next mark
  generate     model.eval() .. model.train() in generate_and_print_sample (50 greedy tokens from 4, no KV cache:
               compiled forwards of a growing (1, n) input: recompiles, then dynamic shapes)
  post_generate  after it .. next mark (the script's own memory print, next epoch or the end)
The phase marks fire on the outermost Module.train call (on the compiled wrapper; it recurses into GPTModel), the
caller found by walking the Python frames to the first frame of the script. Each phase's peak starts at the
memory allocated when it begins. Steps are numbered 0.. (the script's global_step).

usage: python3 run_speed.py NAME [--script 01|02] [--ctx 1024] [--emb 768] [--heads 12] [--layers 12] [--drop 0.1]
          [--qkv-bias 0|1] [--batch 32] [--epochs 1] [--train-tokens 432000] [--val-tokens 48000] [--steps 12]
          [--text-chars 1000000] [--cache-dir DIR] [--trace none|python|all] [--trace-file F.pkl]
          [--trace-entries 3000000] [--sdpa default|flash|efficient] [--result-file F]
env:   LFS=<dir with the exported ch05/10_llm-training-speed> (default <repo>/.lfs). No PYTORCH_ALLOC_CONF (removed
       if set), as the script sets none. Under torchrun (02) each rank records its own device's peaks. Prints one
       line `RESULT {json}` (per rank).
--trace: torch.cuda.memory._record_memory_history(enabled='all', context='alloc', stacks=python|all) from before
       the script's first allocation; the snapshot (torch.cuda.memory._snapshot()) is pickled to --trace-file at
       the end; the record's `marks` (with unix-time microseconds, the trace's `time_us` clock) place its events in
       phases (trace_speed.py).
--sdpa (2026-11-29, second batch): flash = torch.backends.cuda.enable_cudnn_sdp(False) before the script runs (what
       an RTX 3060/4090 / A6000 gets: PyTorch prefers cuDNN attention on Hopper only), efficient = that and
       enable_flash_sdp(False) (a T4's memory-efficient kernel); default touches nothing. Nothing else changes; the
       record's config gets `sdpa_backend`, the record `sdpa_flags` (torch's defaults and what was set) and
       `sdpa_ops_in_code` (the fused attention ops Inductor's output code calls: number of code files per op).
--trace-file / --result-file: `{rank}` in the name is replaced by the rank; --result-file writes the `RESULT {json}`
       line to that file instead of stdout (under torchrun the ranks share one stdout, and two long lines written at
       once could interleave); stdout then gets `result_file PATH rank R (N chars)`.
Also recorded (second batch on): `nvml_proc_used_at_marks` (this process's GPU memory as NVML / nvidia-smi shows it,
       one per mark: CUDA context + the allocator's reserved segments + memory that bypasses the allocator, e.g.
       NCCL's buffers; None where NVML is unreadable, -1 where the pid is not listed), `nvml_proc_used_start` (after
       torch.cuda.init, before the script), `device_index`; for 02 `ddp_logging` (DDP's
       _get_ddp_logging_data(): bucket sizes, rebuilt bucket sizes, gradient_as_bucket_view, ...).
CAP_GIB=<GiB> (optional, 2026-11-30; the capped runs of make_jobs_capped.py): right after torch.cuda.init, before the
       script runs, torch.cuda.set_per_process_memory_fraction(CAP_GIB * 2**30 / total_memory); the record gets
       `allocator_cap_gib`, `cap_on_purpose` (status `ok` or `oom`, with PyTorch's message in `oom`; `oom_via`
       names the wrapper when torch.compile re-raised it).
"""
import argparse, hashlib, json, os, sys, tempfile, time, types

ap = argparse.ArgumentParser()
ap.add_argument('name')
ap.add_argument('--script', default='01', choices=['01', '02'])
ap.add_argument('--ctx', type=int, default=1024)
ap.add_argument('--emb', type=int, default=768)
ap.add_argument('--heads', type=int, default=12)
ap.add_argument('--layers', type=int, default=12)
ap.add_argument('--drop', type=float, default=0.1)
ap.add_argument('--qkv-bias', type=int, default=0)
ap.add_argument('--batch', type=int, default=32)
ap.add_argument('--epochs', type=int, default=1)
ap.add_argument('--train-tokens', type=int, default=432000)
ap.add_argument('--val-tokens', type=int, default=48000)
ap.add_argument('--steps', type=int, default=0)
ap.add_argument('--text-chars', type=int, default=1000000)
ap.add_argument('--cache-dir', default=None)
ap.add_argument('--trace', default='none', choices=['none', 'python', 'all'])
ap.add_argument('--trace-file', default=None)
ap.add_argument('--trace-entries', type=int, default=3000000)
ap.add_argument('--sdpa', default='default', choices=['default', 'flash', 'efficient'])
ap.add_argument('--result-file', default=None)
A = ap.parse_args()
for k in ('PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'):
    os.environ.pop(k, None)

here = os.path.dirname(os.path.abspath(__file__))
LFS = os.path.abspath(os.environ.get('LFS', os.path.join(here, '..', '..', '.lfs')))
FOLDER = os.path.join(LFS, 'ch05', '10_llm-training-speed')
SNAME = {'01': '01_opt_single_gpu.py', '02': '02_opt_multi_gpu_ddp.py'}[A.script]
SCRIPT = os.path.join(FOLDER, SNAME)
COMMIT = '28c65cdfbc3338e2e040016eea4b7fdf556e4d57'
WORLD = int(os.environ.get('WORLD_SIZE', '1'))
RANK = int(os.environ.get('LOCAL_RANK', os.environ.get('RANK', '0')))
# per-rank file names ({rank} in --trace-file / --result-file), absolute (the run chdirs to a temp cwd)
if A.trace_file:
    A.trace_file = os.path.abspath(A.trace_file.format(rank=RANK))
if A.result_file:
    A.result_file = os.path.abspath(A.result_file.format(rank=RANK))

# ---- a private Inductor / Triton cache (before torch is imported) ----------------------------------------------
cache = os.path.abspath(A.cache_dir) if A.cache_dir else tempfile.mkdtemp(prefix='spdcache_')
if WORLD > 1 and A.cache_dir:
    cache = os.path.join(cache, f'rank{RANK}')  # torchrun: one cache per rank, as separate users' first runs


def nfiles(d):
    return sum(len(fs) for _, _, fs in os.walk(d)) if os.path.isdir(d) else 0


IND, TRI = os.path.join(cache, 'inductor'), os.path.join(cache, 'triton')
cache_files_at_start = {'inductor': nfiles(IND), 'triton': nfiles(TRI)}
COLD = cache_files_at_start == {'inductor': 0, 'triton': 0}
os.makedirs(IND, exist_ok=True)
os.makedirs(TRI, exist_ok=True)
os.environ['TORCHINDUCTOR_CACHE_DIR'], os.environ['TRITON_CACHE_DIR'] = IND, TRI

import torch
import book_probe  # noqa: E402 (beside this script)
import torch.utils.data

# ---- the script's source, config dicts edited by exact text replacement ----------------------------------------
src = open(SCRIPT).read()
EP0 = {'01': 15, '02': 50}[A.script]
rep = [('"context_length": 1024,  #', f'"context_length": {A.ctx},  #'),
       ('"emb_dim": 768,          #', f'"emb_dim": {A.emb},          #'),
       ('"n_heads": 12,           #', f'"n_heads": {A.heads},           #'),
       ('"n_layers": 12,          #', f'"n_layers": {A.layers},          #'),
       ('"drop_rate": 0.1,        #', f'"drop_rate": {A.drop!r},        #'),
       ('"qkv_bias": False        #', f'"qkv_bias": {bool(A.qkv_bias)}        #'),
       (f'"num_epochs": {EP0},', f'"num_epochs": {A.epochs},'), ('"batch_size": 32,', f'"batch_size": {A.batch},')]
for old, new in rep:
    assert src.count(old) == 1, old
    src = src.replace(old, new, 1)

# ---- the stand-in text, in a fresh cwd; token counts -----------------------------------------------------------
train_tokens = A.train_tokens
if A.steps:
    train_tokens = min(train_tokens, A.steps * A.batch * A.ctx * WORLD + 1)
LINE = ('Stand-in for middlemarch.txt (Project Gutenberg #145) written by the vramfit probe; '
        'its token ids come from the tokenizer stub. ')
text = (LINE * (A.text_chars // len(LINE) + 1))[:A.text_chars]
split_idx = int(0.90 * len(text))  # as the script splits
train_text, val_text = text[:split_idx], text[split_idx:]
START = 'Every effort moves you'
COUNTS = {'train': train_tokens, 'val': A.val_tokens, 'start': 4}
work = tempfile.mkdtemp(prefix='spdcwd_')
os.chdir(work)
with open('middlemarch.txt', 'w', encoding='utf-8') as f:
    f.write(text)
encoded = []


class StubEncoding:
    name = 'gpt2-stub'

    def encode(self, t, allowed_special=(), **kw):
        if t == START:
            which = 'start'
        elif len(t) == len(train_text) and t == train_text:
            which = 'train'
        elif len(t) == len(val_text) and t == val_text:
            which = 'val'
        else:
            raise KeyError(f'tokenizer stub: unexpected text of {len(t)} characters')
        n = COUNTS[which]
        encoded.append([which, n])
        s = int(hashlib.sha256(which.encode()).hexdigest()[:8], 16)
        return [(s + 7919 * i) % 50257 for i in range(n)]

    def decode(self, ids):
        return ' '.join(f't{i}' for i in ids)


sys.modules['tiktoken'] = types.SimpleNamespace(get_encoding=lambda name: StubEncoding(), __stub__=True)


# ---- matplotlib, requests --------------------------------------------------------------------------------------
book_probe.stub_matplotlib()
try:
    import requests  # noqa: F401
except ImportError:
    sys.modules['requests'] = types.SimpleNamespace(get=None)


# ---- the script's prints (eval lines, per-epoch memory) ------------------------------------------------------------
class Tee:
    def __init__(self, f):
        self.f, self.lines = f, []

    def write(self, x):
        if 'memory:' in x or x.startswith('Ep '):
            self.lines.append(x.strip())
        return self.f.write(x)

    def __getattr__(self, k):
        return getattr(self.f, k)


REAL_STDOUT = sys.stdout
tee = Tee(sys.stdout)

# ---- SDPA backend (--sdpa): the global backend switches, set before the script runs ----------------------------
def sdpa_flags():
    b = torch.backends.cuda
    return {'cudnn': b.cudnn_sdp_enabled(), 'flash': b.flash_sdp_enabled(),
            'mem_efficient': b.mem_efficient_sdp_enabled(), 'math': b.math_sdp_enabled()}


SDPA_DEFAULT_FLAGS = sdpa_flags()
if A.sdpa in ('flash', 'efficient'):  # as a consumer card's choice: no cuDNN attention (and for efficient no flash)
    torch.backends.cuda.enable_cudnn_sdp(False)
    if A.sdpa == 'efficient':
        torch.backends.cuda.enable_flash_sdp(False)
SDPA_FLAGS = sdpa_flags()

# ---- phase tracker ---------------------------------------------------------------------------------------------
CUDA = torch.cuda.is_available()
if CUDA and WORLD > 1:
    torch.cuda.set_device(RANK)  # the script's ddp_setup does the same later; marks read this rank's device
DEV = torch.cuda.current_device() if CUDA else None
PID = os.getpid()
NV = {'h': None, 'error': None, 'index': None}


def nvml_init():
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            idx = torch.cuda._get_nvml_device_index(DEV)
        except Exception:  # noqa
            idx = DEV
        NV.update(h=pynvml.nvmlDeviceGetHandleByIndex(idx), index=idx, mod=pynvml)
    except Exception as e:  # noqa
        NV['error'] = f'{type(e).__name__}: {str(e)[:200]}'


def nvml_used():
    # this process's memory on its GPU as NVML (nvidia-smi) reports it: CUDA context, the caching allocator's
    # reserved segments and memory that bypasses the allocator (NCCL buffers, cuBLAS/cuDNN handles' own)
    if NV['h'] is None:
        return None
    try:
        for p in NV['mod'].nvmlDeviceGetComputeRunningProcesses(NV['h']):
            if p.pid == PID:
                return p.usedGpuMemory
        return -1
    except Exception:  # noqa
        return None


nvml_at_marks = []  # one per mark (same order as `marks`)
ddps = []
if A.script == '02':
    import torch.nn.parallel
    _ddp_init = torch.nn.parallel.DistributedDataParallel.__init__

    def ddp_init(self, *a, **k):
        _ddp_init(self, *a, **k)
        ddps.append(self)

    torch.nn.parallel.DistributedDataParallel.__init__ = ddp_init
phases = []  # [phase, step, epoch, peak_allocated, allocated_at_start, allocated_at_end, peak_reserved]
marks = []   # [phase that ends, step, t_unix_us, allocated, reserved (current), t_since_start_s]
cur = {'phase': 'setup', 'step': None, 'epoch': None, 'a0': 0}
st = {'steps': 0, 'epochs': 0, 'reserved': 0, 'depth': 0}
loaders = []
T0 = time.time()


def enter(new, step=None):
    if CUDA:
        torch.cuda.synchronize(DEV)
        a, pk = torch.cuda.memory_allocated(DEV), torch.cuda.max_memory_allocated(DEV)
        rs, rn = torch.cuda.max_memory_reserved(DEV), torch.cuda.memory_reserved(DEV)
    else:
        a = pk = rs = rn = 0
    t = time.time_ns() // 1000
    phases.append([cur['phase'], cur['step'], cur['epoch'], pk, cur['a0'], a, rs])
    marks.append([cur['phase'], cur['step'], t, a, rn, round(t / 1e6 - T0, 3)])
    nvml_at_marks.append(nvml_used())
    st['reserved'] = max(st['reserved'], rs)
    if CUDA:
        torch.cuda.reset_peak_memory_stats(DEV)
    cur.update(phase=new, step=step, epoch=st['epochs'] - 1, a0=a)


def caller():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename == SCRIPT:
            return f.f_code.co_name
        f = f.f_back
    return None


_train = torch.nn.Module.train


def train(self, mode=True):
    if st['depth'] == 0:  # the outermost call (on the compiled wrapper / DDP); it recurses into the children
        c = caller()
        if c == 'train_model_simple_with_timing' and mode:
            st['epochs'] += 1
            enter('pre_train', st['steps'])
        elif c == 'evaluate_model':
            enter('eval_train' if not mode else 'post_eval', st['steps'] - 1)
        elif c == 'generate_and_print_sample':
            enter('generate' if not mode else 'post_generate', st['steps'] - 1)
    st['depth'] += 1
    try:
        return _train(self, mode)
    finally:
        st['depth'] -= 1


torch.nn.Module.train = train
_len = book_probe.mark_loaders(torch, enter, cur, loaders)  # the loaders and the eval_val mark (book_probe.py)
book_probe.mark_steps(torch, enter, st)  # zero_grad / backward / AdamW.step marks (book_probe.py)
try:
    torch._logging.set_logs(recompiles=True)  # the reasons of each recompile go to the log (stderr)
except Exception as e:  # noqa
    print('set_logs:', e)

# ---- run -------------------------------------------------------------------------------------------------------
cfg = {'vocab_size': 50304, 'context_length': A.ctx, 'emb_dim': A.emb, 'n_heads': A.heads, 'n_layers': A.layers,
       'drop_rate': A.drop, 'qkv_bias': bool(A.qkv_bias), 'batch_size': A.batch, 'num_epochs': A.epochs,
       'learning_rate': 5e-4, 'weight_decay': 0.1, 'eval_freq': {'01': 10, '02': 5}[A.script], 'eval_iter': 1,
       'text': 'middlemarch_standin', 'text_chars': len(text), 'train_text_tokens': train_tokens,
       'val_text_tokens': A.val_tokens, 'train_tokens_flag': A.train_tokens, 'steps_cap': A.steps or None,
       'tokenizer': 'stub', 'allocator': 'default', 'dtype': 'bfloat16', 'compile': True, 'fused_adamw': True,
       'num_workers': 4, 'world_size': WORLD, 'sdpa_backend': A.sdpa,
       'compile_threads_env': os.environ.get('TORCHINDUCTOR_COMPILE_THREADS')}
rec = {'name': A.name, 'script': f'ch05/10_llm-training-speed/{SNAME}', 'commit': COMMIT, 'config': cfg,
       'torch': torch.__version__, 'gpu': torch.cuda.get_device_name(DEV) if CUDA else None, 'cold': COLD,
       'inductor_cache': {'dir': cache, 'files_at_start': cache_files_at_start}, 'rank': RANK, 'world_size': WORLD,
       'traced': A.trace != 'none', 'status': 'ok', 'device_index': DEV,
       'sdpa_flags': {'torch_default': SDPA_DEFAULT_FLAGS, 'set': SDPA_FLAGS}}
sys.path.insert(0, FOLDER)
sys.argv = [SCRIPT]
g = {'__name__': '__main__', '__file__': SCRIPT}
tr_on = False
try:
    code = compile(src, SCRIPT, 'exec')
    if CUDA:
        torch.cuda.init()
        book_probe.cap_process(torch, rec, DEV)  # CAP_GIB (capped runs): the allocator's cap, before the script
        torch.cuda.reset_peak_memory_stats(DEV)
        nvml_init()
        rec['nvml_proc_used_start'] = nvml_used()
        if A.trace != 'none':
            torch.cuda.memory._record_memory_history(enabled='all', context='alloc', stacks=A.trace,
                                                     max_entries=A.trace_entries)
            tr_on = True
    rec['start_time_us'] = time.time_ns() // 1000
    sys.stdout = tee
    exec(code, g)
except torch.OutOfMemoryError as e:
    rec['status'], rec['oom'] = 'oom', str(e)[:500]
except BaseException as e:  # noqa (SystemExit too)
    import traceback; traceback.print_exc()
    book_probe.set_failure(torch, rec, e)  # status error, or oom when an OutOfMemoryError is behind it
finally:
    sys.stdout = REAL_STDOUT
enter('end')
rec['wall_s'] = round(time.time() - T0, 1)
try:
    rec['script_dicts'] = {k: g.get(k) for k in ('GPT_CONFIG_124M', 'OTHER_SETTINGS')}
    json.dumps(rec['script_dicts'])
except Exception:  # noqa
    rec['script_dicts'] = None
if tr_on:
    try:
        import pickle
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        n = len(snap['device_traces'][DEV])
        rec['trace'] = {'file': A.trace_file, 'stacks': A.trace, 'context': 'alloc', 'entries': n,
                        'max_entries': A.trace_entries, 'truncated': n >= A.trace_entries}
        if A.trace_file:
            os.makedirs(os.path.dirname(os.path.abspath(A.trace_file)), exist_ok=True)
            with open(A.trace_file, 'wb') as f:
                pickle.dump(snap, f)
        del snap
    except Exception as e:  # noqa
        rec['trace_error'] = f'{type(e).__name__}: {str(e)[:300]}'
if len(loaders) >= 2:
    tl, vl = loaders[0], loaders[1]
    rec['loaders'] = {'train_sequences': len(tl.dataset), 'train_batches': _len(tl), 'val_sequences': len(vl.dataset),
                      'val_batches': _len(vl), 'val_empty': _len(vl) == 0}
rec['tokenizer_calls'] = encoded
rec['steps'] = st['steps']


pg = [i for i, p in enumerate(phases) if p[0] == 'post_generate']
try:
  rec['measured_bytes'] = {
    **book_probe.phase_peaks(phases, st['reserved'], also=('generate',)),
    **book_probe.step_peaks(phases),
    'peak_eval': [p[3] for p in phases if p[0] in ('eval_train', 'eval_val')],
    'peak_generate': [p[3] for p in phases if p[0] == 'generate'],
    # what the script prints after each epoch (memory_allocated / memory_reserved right after generate)
    'epoch_end_allocated': [phases[i][4] for i in pg],
    'epoch_end_reserved': [marks[i - 1][4] for i in pg],
    'reserved_end': torch.cuda.memory_reserved(DEV) if CUDA else None,
  }
except Exception as e:  # noqa: the phases below still hold every measurement
    rec['derive_error'] = f'{type(e).__name__}: {e}'
rec['evals'] = sum(p[0] == 'eval_train' for p in phases)
rec['generates'] = sum(p[0] == 'generate' for p in phases)
rec['script_prints'] = tee.lines
try:
    from torch._dynamo.utils import counters
    rec['dynamo_counters'] = {k: dict(v) for k, v in counters.items() if k in ('stats', 'frames', 'inductor', 'aot_autograd')}
    json.dumps(rec['dynamo_counters'])
except Exception as e:  # noqa
    rec['dynamo_counters'] = f'{type(e).__name__}: {e}'
rec['cache_files_at_end'] = {'inductor': nfiles(IND), 'triton': nfiles(TRI)}


def sdpa_ops():
    # which fused attention ops Inductor's output code calls (the backend the graphs were traced with)
    import re
    ops = {}
    for d, _, fs in os.walk(IND):
        for fn in fs:
            if fn.endswith('.py'):
                try:
                    txt = open(os.path.join(d, fn), errors='replace').read()
                except OSError:
                    continue
                for m in set(re.findall(r'aten\.(_scaled_dot_product_\w+|_flash_attention_\w+|_efficient_attention_\w+)'
                                        r'\.default\(', txt)):
                    ops[m] = ops.get(m, 0) + 1  # number of output-code files that call it
    return ops


try:
    rec['sdpa_ops_in_code'] = sdpa_ops()
except Exception as e:  # noqa
    rec['sdpa_ops_in_code'] = f'{type(e).__name__}: {e}'
rec['nvml'] = {'index': NV['index'], 'error': NV['error']}
rec['nvml_proc_used_at_marks'] = nvml_at_marks  # bytes, one per mark; None: NVML unreadable, -1: pid not listed
if ddps:
    try:
        rec['ddp_logging'] = {k: v for k, v in ddps[0]._get_ddp_logging_data().items()
                              if isinstance(v, (int, float, str, bool))}
    except Exception as e:  # noqa
        rec['ddp_logging'] = f'{type(e).__name__}: {str(e)[:300]}'
rec['phases'] = phases  # [phase, step, epoch, peak_allocated, allocated_at_start, allocated_at_end, peak_reserved]
rec['marks'] = marks    # [phase that ends here, step, t_unix_us, allocated, reserved (current), seconds since start]
line = 'RESULT ' + json.dumps(rec, default=str) + '\n'
if A.result_file:  # torchrun: the ranks share one stdout, where two long lines could interleave
    os.makedirs(os.path.dirname(A.result_file), exist_ok=True)
    with open(A.result_file, 'w') as f:
        f.write(line)
    print(f'result_file {A.result_file} rank {RANK} ({len(line)} chars)', flush=True)
else:
    print(line, end='', flush=True)
