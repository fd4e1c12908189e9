"""Measure one run of rasbt/LLMs-from-scratch ch05/01_main-chapter-code/gpt_train.py (commit 28c65cdf) on the GPU
(vramfit measurement harness).

The real script is exec'd as __main__ (its own main(), train_model_simple, evaluate_model, generate_and_print_sample,
previous_chapters.GPTModel / create_dataloader_v1 / generate_text_simple, its AdamW, device = its own choice, cuda),
with only these changes:
  * its two config dicts are edited by exact text replacement in the source, each asserted to occur once:
    GPT_CONFIG_124M "context_length" / "emb_dim" / "n_heads" / "n_layers" / "drop_rate" / "qkv_bias" and
    OTHER_SETTINGS "num_epochs" (10 -> --epochs, default 2) / "batch_size"; learning_rate, weight_decay, vocab_size,
    eval_freq=5, eval_iter=1 untouched;
  * the-verdict.txt is a local file in a fresh temp cwd (the script then reads it instead of downloading it): the
    real the-verdict.txt (exported from ch02/01_main-chapter-code at the same commit, 5,145 GPT-2 tokens) repeated K
    times (--text verdict_xK);
  * tiktoken: the real one when tiktoken.get_encoding("gpt2") loads (TOKENIZER=real), else (TOKENIZER=stub) a stub
    whose encode(text) returns, for each exact text the script encodes (train split, val split, start context), a
    deterministic list of fake ids (< 50257) as long as the real GPT-2 tokenization (token_counts.json, made by
    make_token_counts.py), and whose decode returns a string: the shapes are those of the real run;
  * matplotlib / matplotlib.pyplot replaced by no-op stubs; torch.save is a no-op that keeps the object and torch.load
    returns that object (the script's final save / reload of model.pth touches no file); requests stubbed only if it
    is not installed (it is never called: the text file exists).

Phase marks (torch.cuda.synchronize, max_memory_allocated, memory_allocated, max_memory_reserved, then
reset_peak_memory_stats), set by monkeypatches that do not change what the script allocates:
  setup        exec start .. first model.train() in train_model_simple (GPTModel build, .to(device), AdamW creation,
               dataloaders built on the CPU, tokenizer)
  pre_train    model.train() at an epoch start .. optimizer.zero_grad()
  zero_grad    optimizer.zero_grad() (set_to_none: frees the previous step's grads)
  fwd          end of zero_grad .. loss.backward()   (batch .to(device), model forward, cross_entropy)
  bwd          loss.backward()
  post_bwd     end of backward .. optimizer.step()
  opt          optimizer.step()  (AdamW, default foreach; its exp_avg / exp_avg_sq state is created at step 0)
  post         after optimizer.step() .. next mark
  eval_train   model.eval() in evaluate_model .. len(val_loader) (calc_loss_loader over train_loader, eval_iter=1 batch)
  eval_val     len(val_loader) in evaluate_model .. model.train() (calc_loss_loader over val_loader; returns nan at
               once when the val loader is empty)
  post_eval    model.train() in evaluate_model .. next mark
  generate     model.eval() in generate_and_print_sample .. its model.train() (generate_text_simple, 50 new tokens)
  post_generate  after it .. next mark (epoch change / end of train_model_simple)
  tail         torch.save(model.state_dict()) in the __main__ tail .. end of the script (CPU GPTModel, load_state_dict)
Each phase's peak starts at the memory allocated when it begins. Steps are numbered 0.. (global_step of the script).

usage: python3 run_train.py NAME [--ctx 256] [--emb 768] [--heads 12] [--layers 12] [--drop 0.1] [--qkv-bias 0|1]
                            [--batch 2] [--epochs 2] [--text verdict_x1]
env:   LFS=<dir with the exported ch02/ch04/ch05 folders> (default <repo>/.lfs); TOKENIZER=auto|real|stub (auto: real
       if tiktoken.get_encoding("gpt2") loads, else stub). No PYTORCH_ALLOC_CONF (removed if set), as the script sets
       none. Prints one line `RESULT {json}`.
       CAP_GIB=<GiB> (optional; the capped runs of make_jobs_capped.py): before the script runs,
       torch.cuda.set_per_process_memory_fraction(CAP_GIB * 2**30 / total_memory), as a card with that much usable
       memory; the record gets `allocator_cap_gib`, `cap_on_purpose` (status `ok` or `oom`, with PyTorch's message
       in `oom`).
"""
import argparse, hashlib, json, os, sys, tempfile, time, types

ap = argparse.ArgumentParser()
ap.add_argument('name')
ap.add_argument('--ctx', type=int, default=256)
ap.add_argument('--emb', type=int, default=768)
ap.add_argument('--heads', type=int, default=12)
ap.add_argument('--layers', type=int, default=12)
ap.add_argument('--drop', type=float, default=0.1)
ap.add_argument('--qkv-bias', type=int, default=0)
ap.add_argument('--batch', type=int, default=2)
ap.add_argument('--epochs', type=int, default=2)
ap.add_argument('--text', default='verdict_x1')
A = ap.parse_args()
for k in ('PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'):
    os.environ.pop(k, None)

here = os.path.dirname(os.path.abspath(__file__))
LFS = os.path.abspath(os.environ.get('LFS', os.path.join(here, '..', '..', '.lfs')))
CH05 = os.path.join(LFS, 'ch05', '01_main-chapter-code')
SCRIPT = os.path.join(CH05, 'gpt_train.py')
COMMIT = '28c65cdfbc3338e2e040016eea4b7fdf556e4d57'
TC = json.load(open(os.path.join(here, 'token_counts.json')))

import torch
import book_probe  # noqa: E402 (beside this script)
import torch.utils.data

# ---- the script's source, config dicts edited by exact text replacement ----------------------------------------
src = open(SCRIPT).read()
rep = [('"context_length": 256,  # Shortened', f'"context_length": {A.ctx},  # Shortened'),
       ('"emb_dim": 768, ', f'"emb_dim": {A.emb}, '), ('"n_heads": 12, ', f'"n_heads": {A.heads}, '),
       ('"n_layers": 12, ', f'"n_layers": {A.layers}, '), ('"drop_rate": 0.1, ', f'"drop_rate": {A.drop!r}, '),
       ('"qkv_bias": False ', f'"qkv_bias": {bool(A.qkv_bias)} '),
       ('"num_epochs": 10,', f'"num_epochs": {A.epochs},'), ('"batch_size": 2,', f'"batch_size": {A.batch},')]
for old, new in rep:
    assert src.count(old) == 1, old
    src = src.replace(old, new, 1)

# ---- the text file, in a fresh cwd -----------------------------------------------------------------------------
K = int(A.text.split('_x')[1])
assert A.text == f'verdict_x{K}' and A.text in TC['texts'], A.text
with open(os.path.join(LFS, 'ch02', '01_main-chapter-code', 'the-verdict.txt'), encoding='utf-8') as f:
    text = f.read() * K
work = tempfile.mkdtemp()
os.chdir(work)
with open('the-verdict.txt', 'w', encoding='utf-8') as f:
    f.write(text)

# ---- tokenizer -------------------------------------------------------------------------------------------------
TOK = os.environ.get('TOKENIZER', 'auto')
if TOK in ('auto', 'real'):
    try:
        import tiktoken
        tiktoken.get_encoding('gpt2').encode('Every effort moves you')
        TOK = 'real'
    except Exception as e:  # noqa: no module, or no network for the BPE files
        if TOK == 'real':
            raise
        print('tiktoken gpt2 not available:', type(e).__name__, str(e)[:200], flush=True)
        TOK = 'stub'
if TOK == 'stub':
    class StubEncoding:
        name = 'gpt2-stub'

        def encode(self, text, allowed_special=(), **kw):
            h = hashlib.sha256(text.encode('utf-8')).hexdigest()
            n = TC['by_sha256'][h]  # KeyError: a text whose real token count is not in token_counts.json
            s = int(h[:8], 16)
            return [(s + 7919 * i) % 50257 for i in range(n)]

        def decode(self, ids):
            return ' '.join(f't{i}' for i in ids)

    sys.modules['tiktoken'] = types.SimpleNamespace(get_encoding=lambda name: StubEncoding(), __stub__=True)


# ---- matplotlib, requests, torch.save / torch.load -------------------------------------------------------------
book_probe.stub_matplotlib()
try:
    import requests  # noqa: F401
except ImportError:
    sys.modules['requests'] = types.SimpleNamespace(get=None)

# ---- phase tracker ---------------------------------------------------------------------------------------------
CUDA = torch.cuda.is_available()
phases = []  # [phase, step, epoch, peak_allocated, allocated_at_start, allocated_at_end, peak_reserved]
cur = {'phase': 'setup', 'step': None, 'epoch': None, 'a0': 0}
st = {'steps': 0, 'epochs': 0, 'reserved': 0}
saved = {}
loaders = []


def enter(new, step=None):
    if CUDA:
        torch.cuda.synchronize()
        a, pk, rs = torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    else:
        a = pk = rs = 0
    phases.append([cur['phase'], cur['step'], cur['epoch'], pk, cur['a0'], a, rs])
    st['reserved'] = max(st['reserved'], rs)
    if CUDA:
        torch.cuda.reset_peak_memory_stats()
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
    if type(self).__name__ == 'GPTModel':
        c = caller()
        if c == 'train_model_simple' and mode:
            st['epochs'] += 1
            enter('pre_train', st['steps'])
        elif c == 'evaluate_model':
            enter('eval_train' if not mode else 'post_eval', st['steps'] - 1)
        elif c == 'generate_and_print_sample':
            enter('generate' if not mode else 'post_generate', st['steps'] - 1)
    return _train(self, mode)


torch.nn.Module.train = train
_len = book_probe.mark_loaders(torch, enter, cur, loaders)  # the loaders and the eval_val mark (book_probe.py)
book_probe.mark_steps(torch, enter, st)  # zero_grad / backward / AdamW.step marks (book_probe.py)


def save(obj, f, *a, **k):
    enter('tail')
    saved[str(f)] = obj


def load(f, *a, **k):
    return saved[str(f)]


torch.save, torch.load = save, load

# ---- run -------------------------------------------------------------------------------------------------------
cfg = {'vocab_size': 50257, 'context_length': A.ctx, 'emb_dim': A.emb, 'n_heads': A.heads, 'n_layers': A.layers,
       'drop_rate': A.drop, 'qkv_bias': bool(A.qkv_bias), 'batch_size': A.batch, 'num_epochs': A.epochs,
       'learning_rate': 5e-4, 'weight_decay': 0.1, 'eval_freq': 5, 'eval_iter': 1,
       'text': A.text, 'text_tokens': TC['texts'][A.text]['full'], 'train_text_tokens': TC['texts'][A.text]['train'],
       'val_text_tokens': TC['texts'][A.text]['val'], 'tokenizer': TOK, 'allocator': 'default'}
rec = {'name': A.name, 'script': 'ch05/01_main-chapter-code/gpt_train.py', 'commit': COMMIT, 'config': cfg,
       'torch': torch.__version__, 'gpu': torch.cuda.get_device_name() if CUDA else None, 'status': 'ok'}
sys.path.insert(0, CH05)
sys.argv = [SCRIPT]
t0 = time.time()
g = {'__name__': '__main__', '__file__': SCRIPT}
try:
    code = compile(src, SCRIPT, 'exec')
    if CUDA:
        torch.cuda.init()
        book_probe.cap_process(torch, rec)  # CAP_GIB (capped runs): the allocator's cap, before the script allocates
        torch.cuda.reset_peak_memory_stats()
    exec(code, g)
except torch.OutOfMemoryError as e:
    rec['status'], rec['oom'] = 'oom', str(e)[:500]
except Exception as e:  # noqa
    import traceback; traceback.print_exc()
    book_probe.set_failure(torch, rec, e)  # status error, or oom when an OutOfMemoryError is behind it
enter('end')
rec['script_dicts'] = {k: g.get(k) for k in ('GPT_CONFIG_124M', 'OTHER_SETTINGS')}  # as the edited script defined them
rec['wall_s'] = round(time.time() - t0, 1)
if len(loaders) >= 2:
    tl, vl = loaders[0], loaders[1]
    rec['loaders'] = {'train_sequences': len(tl.dataset), 'train_batches': _len(tl), 'val_sequences': len(vl.dataset),
                      'val_batches': _len(vl), 'val_empty': _len(vl) == 0}
rec['steps'] = st['steps']


rec['measured_bytes'] = {
    **book_probe.phase_peaks(phases, st['reserved'], also=('generate', 'tail')),
    **book_probe.step_peaks(phases),
    'peak_eval': [p[3] for p in phases if p[0] in ('eval_train', 'eval_val')],
    'peak_generate': [p[3] for p in phases if p[0] == 'generate'],
    'reserved_end': torch.cuda.memory_reserved() if CUDA else None,
}
rec['evals'] = sum(p[0] == 'eval_train' for p in phases)
rec['generates'] = sum(p[0] == 'generate' for p in phases)
rec['phases'] = phases  # [phase, step, epoch, peak_allocated, allocated_at_start, allocated_at_end, peak_reserved]
print('RESULT ' + json.dumps(rec), flush=True)
