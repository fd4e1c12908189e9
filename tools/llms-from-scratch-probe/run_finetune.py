"""Measure one run of rasbt/LLMs-from-scratch ch06/01_main-chapter-code/gpt_class_finetune.py (commit 28c65cdf) on the
GPU (vramfit measurement harness; the ch06 sibling of run_train.py).

The real script is exec'd as __main__ (its own SpamDataset, DataLoaders, GPTModel of ch06's previous_chapters.py, the
freezing, the new 2-class out_head, AdamW, train_classifier_simple / evaluate_model / calc_accuracy_loader, device =
its own choice, cuda), with only these changes:
  * exact text replacements in its __main__ block, each asserted to occur once:
    CHOOSE_MODEL = "gpt2-small (124M)" -> --model; batch_size = 8 -> --batch; num_epochs = 5 -> --epochs (default 2).
    lr 5e-5, weight_decay 0.1, eval_freq=50, eval_iter=5, BASE_CONFIG (context 1024, drop 0.0, qkv_bias True) untouched;
  * the SMS Spam Collection download: the file the script would unzip, sms_spam_collection/SMSSpamCollection.tsv, is
    written into a fresh temp cwd before the exec, so download_and_unzip_spam_data() finds it and skips the download;
    the script itself then balances (create_balanced_dataset), splits (random_split 0.7/0.1) and writes
    train/validation/test.csv as it always does. The file has the real dataset's row counts as pandas reads it
    (4,825 ham + 747 spam, ch06.ipynb's value_counts -> balanced 1,494 -> 1,045 / 149 / 300 rows, 130 train batches
    of 8) and synthetic texts: row i has n_i words drawn from a list of words that are each ONE GPT-2 token (checked
    with the real tokenizer by make_ch06_texts_check.py), n_i in 1..L with every 40th row exactly L, so the longest
    encoded training text, which the script takes as max_length (the padded length of every train / val / test
    sequence), is L (--max-len, default 120 = the real dataset's, ch06.ipynb prints 120). Asserted after the run;
  * tiktoken: the real one when tiktoken.get_encoding("gpt2") loads (TOKENIZER=real), else (TOKENIZER=stub) a stub whose
    encode(text) returns one id per whitespace-separated word (the real GPT-2 count for these texts) and whose decode
    returns a string;
  * GPT-2 weights: gpt_download is replaced in sys.modules by a stub (the real module imports tensorflow, absent on the
    device) whose download_and_load_gpt2(model_size, models_dir) downloads nothing and returns (hparams-like settings,
    None); previous_chapters.load_weights_into_gpt is replaced by a no-op before the script imports it. The model
    keeps its random init: the same shapes and dtype (fp32) as the loaded one (load_weights_into_gpt builds new fp32
    Parameters of the same shapes on the CPU, and out_head is replaced afterwards anyway). Recorded in `stubs`;
  * matplotlib / matplotlib.pyplot: no-op stubs (plot_values saves nothing); requests stubbed only if not installed.

Phase marks (torch.cuda.synchronize, max_memory_allocated, memory_allocated, max_memory_reserved, then
reset_peak_memory_stats), set by monkeypatches that do not change what the script allocates:
  setup        exec start .. first model.train() in train_classifier_simple (CSV writing, tokenization, GPTModel build on
               the CPU, freezing, new out_head, model.to(device), AdamW creation)
  pre_train    model.train() at an epoch start .. optimizer.zero_grad()
  zero_grad    optimizer.zero_grad() (set_to_none)
  fwd          end of zero_grad .. loss.backward()   (batch .to(device), forward, [:, -1, :], cross_entropy)
  bwd          loss.backward()
  post_bwd     end of backward .. optimizer.step()
  opt          optimizer.step()  (AdamW, default foreach; state is created at step 0 for the params with a grad)
  post         after optimizer.step() .. next mark
  eval_train   model.eval() in evaluate_model .. len(val_loader) (calc_loss_loader over train_loader, eval_iter=5)
  eval_val     len(val_loader) in evaluate_model .. model.train() (calc_loss_loader over val_loader, eval_iter=5)
  post_eval    model.train() in evaluate_model .. next mark
  acc_train    model.eval() in calc_accuracy_loader(train_loader) at an epoch end .. next mark
  acc_val      model.eval() in calc_accuracy_loader(val_loader) .. next mark (next epoch's model.train() or tail)
  tail         first torch.linspace of the __main__ tail (after train_classifier_simple returned) .. end (plots)
Each phase's peak starts at the memory allocated when it begins. Steps are 0-based (global_step of the script).

usage: python3 run_finetune.py NAME [--model small|medium|large|xl] [--batch 8] [--epochs 2] [--max-len 120]
env:   LFS=<dir with the exported ch06 folder> (default <repo>/.lfs); TOKENIZER=auto|real|stub. No PYTORCH_ALLOC_CONF
       (removed if set), as the script sets none. Prints one line `RESULT {json}`.
       CAP_GIB=<GiB> (optional; the capped runs of make_jobs_capped.py): before the script runs,
       torch.cuda.set_per_process_memory_fraction(CAP_GIB * 2**30 / total_memory); the record gets
       `allocator_cap_gib`, `cap_on_purpose` (status `ok` or `oom`, with PyTorch's message in `oom`).
"""
import argparse, functools, hashlib, json, os, shutil, sys, tempfile, time, types

MODELS = {'small': 'gpt2-small (124M)', 'medium': 'gpt2-medium (355M)', 'large': 'gpt2-large (774M)',
          'xl': 'gpt2-xl (1558M)'}
ap = argparse.ArgumentParser()
ap.add_argument('name')
ap.add_argument('--model', default='small', choices=sorted(MODELS))
ap.add_argument('--batch', type=int, default=8)
ap.add_argument('--epochs', type=int, default=2)
ap.add_argument('--max-len', type=int, default=120)
ap.add_argument('--drop-rate', default='0.0')
A = ap.parse_args()
for k in ('PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'):
    os.environ.pop(k, None)

here = os.path.dirname(os.path.abspath(__file__))
LFS = os.path.abspath(os.environ.get('LFS', os.path.join(here, '..', '..', '.lfs')))
CH06 = os.path.join(LFS, 'ch06', '01_main-chapter-code')
SCRIPT = os.path.join(CH06, 'gpt_class_finetune.py')
COMMIT = '28c65cdfbc3338e2e040016eea4b7fdf556e4d57'

# ---- the script's source, edited by exact text replacement -----------------------------------------------------
src = open(SCRIPT).read()
rep = [('CHOOSE_MODEL = "gpt2-small (124M)"', f'CHOOSE_MODEL = "{MODELS[A.model]}"'),
       ('batch_size = 8\n', f'batch_size = {A.batch}\n'), ('num_epochs = 5\n', f'num_epochs = {A.epochs}\n'),
       ('"drop_rate": 0.0,        # Dropout rate', f'"drop_rate": {A.drop_rate},        # Dropout rate')]
for old, new in rep:
    assert src.count(old) == 1, old
    src = src.replace(old, new, 1)

# ---- the raw data file the script would download and unzip, in a fresh cwd -------------------------------------
# Words that are each exactly one GPT-2 token, alone at the start of a text and with a leading space after it
# (make_ch06_texts_check.py checks this with the real tokenizer); none is a pandas NA string.
WORDS = ['you', 'call', 'free', 'to', 'the', 'now', 'text', 'win', 'ok', 'got', 'home', 'love', 'time', 'know',
         'will', 'me', 'your', 'for', 'is', 'and', 'get', 'go', 'just', 'good', 'day', 'send', 'new', 'reply', 'phone',
         'claim', 'stop', 'cash', 'week', 'money', 'back', 'see', 'what', 'when', 'out', 'late']
N_HAM, N_SPAM, L = 4825, 747, A.max_len
assert 1 <= L <= 1024


def make_tsv():
    rows, n = [], N_HAM + N_SPAM
    for i in range(n):
        spam = (i * N_SPAM) // n != ((i + 1) * N_SPAM) // n  # 747 spam rows spread evenly over the 5,572
        k = L if i % 40 == 0 else 1 + (i * 7919) % L
        words = [WORDS[(i * 13 + j * (1 + i % 7)) % len(WORDS)] for j in range(k)]
        rows.append(('spam' if spam else 'ham') + '\t' + ' '.join(words))
    assert sum(r.startswith('spam\t') for r in rows) == N_SPAM
    return '\n'.join(rows) + '\n'


work = tempfile.mkdtemp()
os.chdir(work)
os.makedirs('sms_spam_collection')
with open(os.path.join('sms_spam_collection', 'SMSSpamCollection.tsv'), 'w', encoding='utf-8') as f:
    f.write(make_tsv())

# ---- tokenizer -------------------------------------------------------------------------------------------------
TOK = os.environ.get('TOKENIZER', 'auto')
if TOK in ('auto', 'real'):
    try:
        import tiktoken
        assert len(tiktoken.get_encoding('gpt2').encode('you call free')) == 3
        TOK = 'real'
    except Exception as e:  # noqa: no module, or no network for the BPE files
        if TOK == 'real':
            raise
        print('tiktoken gpt2 not available:', type(e).__name__, str(e)[:200], flush=True)
        TOK = 'stub'
if TOK == 'stub':
    WID = {w: int(hashlib.sha256(w.encode()).hexdigest()[:8], 16) % 50000 for w in WORDS}

    class StubEncoding:
        name = 'gpt2-stub'

        def encode(self, text, allowed_special=(), **kw):
            return [WID.get(w, 1) for w in text.split()]  # one id per word = the real count for these texts

        def decode(self, ids):
            return ' '.join(f't{i}' for i in ids)

    sys.modules['tiktoken'] = types.SimpleNamespace(get_encoding=lambda name: StubEncoding(), __stub__=True)

import torch
import book_probe  # noqa: E402 (beside this script)
import torch.utils.data


# ---- matplotlib, requests --------------------------------------------------------------------------------------
book_probe.stub_matplotlib()
try:
    import requests  # noqa: F401
except ImportError:
    class _RE(Exception):
        pass
    sys.modules['requests'] = types.SimpleNamespace(get=None, exceptions=types.SimpleNamespace(RequestException=_RE))

# ---- GPT-2 weights: gpt_download stub, load_weights_into_gpt no-op ---------------------------------------------
sys.path.insert(0, CH06)
stub_calls = {'download_and_load_gpt2': [], 'load_weights_into_gpt': 0}
HP = {'124M': (768, 12, 12), '355M': (1024, 24, 16), '774M': (1280, 36, 20), '1558M': (1600, 48, 25)}


def download_and_load_gpt2(model_size, models_dir):
    stub_calls['download_and_load_gpt2'].append({'model_size': model_size, 'models_dir': models_dir})
    e, l, h = HP[model_size]
    return {'n_vocab': 50257, 'n_ctx': 1024, 'n_embd': e, 'n_head': h, 'n_layer': l}, None


def load_weights_into_gpt(gpt, params):
    stub_calls['load_weights_into_gpt'] += 1  # no-op: the random init stays (same shapes, fp32)


gd = types.ModuleType('gpt_download')
gd.download_and_load_gpt2 = download_and_load_gpt2
sys.modules['gpt_download'] = gd
import previous_chapters  # noqa: E402  (ch06's; its `import tiktoken` gets the module chosen above)
assert os.path.dirname(os.path.abspath(previous_chapters.__file__)) == CH06
previous_chapters.load_weights_into_gpt = load_weights_into_gpt

# ---- phase tracker ---------------------------------------------------------------------------------------------
CUDA = torch.cuda.is_available()
phases = []  # [phase, step, epoch, peak_allocated, allocated_at_start, allocated_at_end, peak_reserved]
cur = {'phase': 'setup', 'step': None, 'epoch': None, 'a0': 0}
st = {'steps': 0, 'epochs': 0, 'reserved': 0}
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
    if CUDA and new == 'zero_grad' and step == 4:
        book_probe.write_events(torch, st)  # EVENTS


def script_frame():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename == SCRIPT:
            return f
        f = f.f_back
    return None


_train = torch.nn.Module.train


def train(self, mode=True):
    if type(self).__name__ == 'GPTModel':
        fr = script_frame()
        c = fr.f_code.co_name if fr is not None else None
        if c == 'train_classifier_simple' and mode:
            st['epochs'] += 1
            enter('pre_train', st['steps'])
        elif c == 'evaluate_model':
            enter('eval_train' if not mode else 'post_eval', st['steps'] - 1)
        elif c == 'calc_accuracy_loader' and not mode:
            dl = fr.f_locals.get('data_loader')
            which = 'acc_train' if loaders and dl is loaders[0] else 'acc_val' if len(loaders) > 1 and dl is loaders[
                1] else 'acc_other'
            enter(which, st['steps'] - 1)
    return _train(self, mode)


torch.nn.Module.train = train
_len = torch.utils.data.DataLoader.__len__


def dl_len(self):
    if cur['phase'] == 'eval_train' and len(loaders) > 1 and self is loaders[1]:
        enter('eval_val', cur['step'])
    return _len(self)


torch.utils.data.DataLoader.__len__ = dl_len
_dl_init = torch.utils.data.DataLoader.__init__


def dl_init(self, *a, **k):
    _dl_init(self, *a, **k)
    loaders.append(self)  # the script builds train_loader, val_loader, test_loader in this order


torch.utils.data.DataLoader.__init__ = dl_init
book_probe.mark_steps(torch, enter, st)  # zero_grad / backward / AdamW.step marks (book_probe.py)
_linspace = torch.linspace


def linspace(*a, **k):
    if cur['phase'] != 'tail':
        fr = script_frame()
        if fr is not None and fr.f_code.co_name == '<module>':
            enter('tail')
    return _linspace(*a, **k)


torch.linspace = linspace

# ---- run -------------------------------------------------------------------------------------------------------
E, NL, NH = {'small': (768, 12, 12), 'medium': (1024, 24, 16), 'large': (1280, 36, 20), 'xl': (1600, 48, 25)}[A.model]
cfg = {'choose_model': MODELS[A.model], 'emb_dim': E, 'n_layers': NL, 'n_heads': NH, 'vocab_size': 50257,
       'context_length': 1024, 'drop_rate': float(A.drop_rate), 'qkv_bias': True, 'num_classes': 2, 'batch_size': A.batch,
       'num_epochs': A.epochs, 'learning_rate': 5e-5, 'weight_decay': 0.1, 'eval_freq': 50, 'eval_iter': 5,
       'target_max_length': L, 'raw_rows': {'ham': N_HAM, 'spam': N_SPAM}, 'tokenizer': TOK, 'allocator': 'default'}
rec = {'name': A.name, 'script': 'ch06/01_main-chapter-code/gpt_class_finetune.py', 'commit': COMMIT, 'config': cfg,
       'torch': torch.__version__, 'gpu': torch.cuda.get_device_name() if CUDA else None, 'status': 'ok'}
sys.argv = [SCRIPT]
t0 = time.time()
g = {'__name__': '__main__', '__file__': SCRIPT}
try:
    code = compile(src, SCRIPT, 'exec')
    if CUDA:
        torch.cuda.init()
        book_probe.cap_process(torch, rec)  # CAP_GIB (capped runs): the allocator's cap, before the script allocates
        torch.cuda.reset_peak_memory_stats()
        book_probe.record_events(torch)  # EVENTS
    exec(code, g)
except torch.OutOfMemoryError as e:
    rec['status'], rec['oom'] = 'oom', str(e)[:500]
except Exception as e:  # noqa
    import traceback; traceback.print_exc()
    book_probe.set_failure(torch, rec, e)  # status error, or oom when an OutOfMemoryError is behind it
enter('end')
if CUDA:
    book_probe.write_events(torch, st)  # a run that stopped before step 4
rec['wall_s'] = round(time.time() - t0, 1)
rec['stubs'] = {'weights': 'random init: download_and_load_gpt2 stub (no download) + load_weights_into_gpt no-op',
                'calls': stub_calls, 'data': 'synthetic SMSSpamCollection.tsv in a fresh cwd (no download)',
                'tokenizer': TOK, 'matplotlib': 'no-op stub'}
try:
    ds = {}
    if 'df' in g:
        ds['raw_rows'] = int(len(g['df']))
        ds['raw_label_counts'] = {str(k): int(v) for k, v in g['df']['Label'].value_counts().items()}
    if 'balanced_df' in g:
        ds['balanced_rows'] = int(len(g['balanced_df']))
    for k in ('train_dataset', 'val_dataset', 'test_dataset'):
        if k in g:
            ds[k.split('_')[0] + '_rows'] = len(g[k])
            ds[k.split('_')[0] + '_max_length'] = g[k].max_length
    if 'train_dataset' in g:
        cfg['max_length'] = g['train_dataset'].max_length  # the padded length of every batch
        ds['train_longest_unpadded'] = int(max((g['train_dataset'].data['Text'].map(lambda s: len(str(s).split())))))
    if len(loaders) >= 3:
        ds['train_batches'], ds['val_batches'], ds['test_batches'] = _len(loaders[0]), _len(loaders[1]), _len(loaders[2])
    rec['dataset'] = ds
    if 'model' in g:
        m = g['model']
        rec['params'] = {'total': sum(p.numel() for p in m.parameters()),
                         'trainable': sum(p.numel() for p in m.parameters() if p.requires_grad),
                         'buffers': sum(b.numel() for b in m.buffers()),
                         'trainable_tensors': sum(1 for p in m.parameters() if p.requires_grad)}
    if 'optimizer' in g:
        rec['params']['adamw_state_tensors'] = len(g['optimizer'].state)
    if 'BASE_CONFIG' in g:
        rec['script_base_config'] = g['BASE_CONFIG']
    rec['script_settings'] = {k: g.get(k) for k in ('CHOOSE_MODEL', 'batch_size', 'num_epochs', 'num_workers')}
except Exception as e:  # noqa
    rec['record_error'] = f'{type(e).__name__}: {e}'
if rec['status'] == 'ok' and cfg.get('max_length') != L:
    rec['status'], rec['error'] = 'error', f'max_length {cfg.get("max_length")} != target {L}'
rec['steps'] = st['steps']


TRAIN = book_probe.TRAIN
pk = functools.partial(book_probe.peak, phases)
steps = sorted({p[1] for p in phases if p[0] == 'opt'})


def per_step(ph):
    v = {s: pk((ph,), lambda p, s=s: p[1] == s) for s in steps}
    sv = [x for s, x in v.items() if s >= 1 and x is not None]
    return {'step0': v.get(0), 'step1': v.get(1), 'steady_min': min(sv) if sv else None,
            'steady_max': max(sv) if sv else None}


rec['measured_bytes'] = {
    **book_probe.phase_peaks(phases, st['reserved'], also=('acc_train', 'acc_val', 'tail')),
    'peak_allocated_accuracy': pk(('acc_train', 'acc_val')),
    'fwd': per_step('fwd'), 'bwd': per_step('bwd'), 'opt': per_step('opt'),
    'peak_eval': [p[3] for p in phases if p[0] in ('eval_train', 'eval_val')],
    'peak_accuracy': [p[3] for p in phases if p[0] in ('acc_train', 'acc_val')],
    'reserved_end': torch.cuda.memory_reserved() if CUDA else None,
}
rec['evals'] = sum(p[0] == 'eval_train' for p in phases)
rec['eval_steps'] = [p[1] for p in phases if p[0] == 'eval_train']
rec['accuracy_passes'] = sum(p[0] in ('acc_train', 'acc_val') for p in phases)
# phases: all but the per-step training windows of the "ordinary" steps (kept: steps 0, 1, 2, the last, every step
# that an eval follows and the step after it); the dropped ones are summarised in steady_phases (max/min per phase).
keep = {0, 1, 2, steps[-1] if steps else 0} | {s for e in rec['eval_steps'] for s in (e, e + 1)}
rec['phases'] = [p for p in phases if p[0] not in TRAIN or p[1] in keep]
rec['phases_dropped'] = len(phases) - len(rec['phases'])


def steady(ph):
    v = [p for p in phases if p[0] == ph and p[1] is not None and p[1] >= 1]
    return {'n': len(v), 'peak_max': max((p[3] for p in v), default=None), 'peak_min': min((p[3] for p in v), default=None),
            'alloc_start_max': max((p[4] for p in v), default=None)}


rec['steady_phases'] = {ph: steady(ph) for ph in TRAIN}
os.chdir('/')
shutil.rmtree(work, ignore_errors=True)
print('RESULT ' + json.dumps(rec), flush=True)
