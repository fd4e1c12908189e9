"""Measure one run of rasbt/LLMs-from-scratch ch07/01_main-chapter-code/gpt_instruction_finetuning.py (commit 28c65cdf)
on the GPU (vramfit measurement harness; the ch07 sibling of run_train.py and run_finetune.py).

The real script is exec'd as __main__ (its own InstructionDataset, custom_collate_fn putting each batch on the device,
GPTModel / train_model_simple / evaluate_model / generate_and_print_sample / generate of ch07's previous_chapters.py,
AdamW, device = its own choice, cuda), with only these changes:
  * exact text replacements, each asserted to occur once: CHOOSE_MODEL = "gpt2-medium (355M)" -> --model;
    batch_size = 8 -> --batch; num_epochs = 2 -> --epochs (default 1: every epoch repeats the first one's peaks);
    `enumerate(test_data), total=len(test_data)` -> the first --respond (default 2) test entries: the same responses
    (256 new tokens each, or until token 50256) for fewer entries, to save device time;
  * the data: instruction-data.json (1,100 entries, the real file's count: 935 train / 110 test / 55 val) is written into
    a fresh temp cwd, so download_and_load_file() reads it instead of downloading. Every entry is the same length:
    its instruction and output are one-token words (see run_finetune.py) and its input empty, so that each encoded
    example is --len tokens and every batch (padded to its longest) is --len tokens wide (recorded, asserted);
  * tiktoken: always the stub (the device has no network for the BPE files): one id per whitespace-separated word;
    the shapes follow its counts, which the record keeps (batch widths, the sample's and responses' prompts);
  * GPT-2 weights: gpt_download stubbed, load_weights_into_gpt a no-op (random init of the same shapes, fp32);
    its `version(p)` answers 'n/a' for a package not installed (it prints tensorflow's);
    matplotlib and tqdm stubbed where missing; torch.save keeps the object (no file).

Phases (as run_train.py; a phase's peak starts at the allocation when it begins): setup (exec start .. the initial
losses), initial (main's calc_loss_loader over 5 train and 5 val batches, under no_grad, before the optimizer exists),
pre_train, zero_grad, fwd, bwd, post_bwd, opt, post (per step), eval_train / eval_val (evaluate_model every 5 steps
over 5 batches of each), post_eval, generate (generate_and_print_sample after each epoch: 50 tokens from
format_input(val_data[0])), post_generate, respond (main's generate() over the test entries, after training), tail.
EVENTS=<file.json> (optional; issue 27): every allocator event of the run's start (alloc, free, with address, size
and time) up to step 4's zero_grad, as tools/nanogpt-probe's
run_train_expandable.py writes them, to lay beside vramfit's request stream (docs/allocation-order.md §7).
usage: python3 run_instruct.py NAME [--model small|medium|large|xl] [--batch 8] [--epochs 1] [--len 256] [--respond 2]
CAP_GIB=<GiB> (optional; the capped runs of make_jobs_capped.py): before the script runs,
torch.cuda.set_per_process_memory_fraction(CAP_GIB * 2**30 / total_memory); the record gets `allocator_cap_gib`,
`cap_on_purpose` (status `ok` or `oom`, with PyTorch's message in `oom`). The record's `dataset` also gets
`prompt_tokens_of_data`: the sample's and the first test responses' prompt lengths as the script's own format_input
makes them from the data (the same numbers as `sample_prompt_tokens` / `respond_prompt_tokens` when the run gets
there; a run that ran out of memory before does not).
"""
import argparse, json, os, shutil, sys, tempfile, time, types

MODELS = {'small': 'gpt2-small (124M)', 'medium': 'gpt2-medium (355M)', 'large': 'gpt2-large (774M)',
          'xl': 'gpt2-xl (1558M)'}
ap = argparse.ArgumentParser()
ap.add_argument('name')
ap.add_argument('--model', default='medium', choices=sorted(MODELS))
ap.add_argument('--batch', type=int, default=8)
ap.add_argument('--epochs', type=int, default=1)
ap.add_argument('--len', type=int, default=256)
ap.add_argument('--respond', type=int, default=2)
A = ap.parse_args()
for k in ('PYTORCH_ALLOC_CONF', 'PYTORCH_CUDA_ALLOC_CONF'):
    os.environ.pop(k, None)

here = os.path.dirname(os.path.abspath(__file__))
LFS = os.path.abspath(os.environ.get('LFS', os.path.join(here, '..', '..', '.lfs')))
CH07 = os.path.join(LFS, 'ch07', '01_main-chapter-code')
SCRIPT = os.path.join(CH07, 'gpt_instruction_finetuning.py')
COMMIT = '28c65cdfbc3338e2e040016eea4b7fdf556e4d57'

src = open(SCRIPT).read()
rep = [('CHOOSE_MODEL = "gpt2-medium (355M)"', f'CHOOSE_MODEL = "{MODELS[A.model]}"'),
       ('batch_size = 8\n', f'batch_size = {A.batch}\n'), ('num_epochs = 2\n', f'num_epochs = {A.epochs}\n'),
       ('enumerate(test_data), total=len(test_data)', f'enumerate(test_data[:{A.respond}]), total={A.respond}'),
       # the versions it prints: 'n/a' for a package not installed (tensorflow); a global patch of
       # importlib.metadata would make torch believe optree is installed
       ('from importlib.metadata import version\n',
        'from importlib.metadata import version as _version\n'
        'def version(p):\n    try:\n        return _version(p)\n    except Exception:\n        return "n/a"\n')]
for old, new in rep:
    assert src.count(old) == 1, old
    src = src.replace(old, new, 1)

# ---- the data: 1,100 entries of --len stub tokens each ----------------------------------------------------------
WORDS = ['you', 'call', 'free', 'to', 'the', 'now', 'text', 'win', 'ok', 'got', 'home', 'love', 'time', 'know',
         'will', 'me', 'your', 'for', 'is', 'and', 'get', 'go', 'just', 'good', 'day', 'send', 'new', 'reply', 'phone',
         'claim', 'stop', 'cash', 'week', 'money', 'back', 'see', 'what', 'when', 'out', 'late']
TEMPLATE = ("Below is an instruction that describes a task. Write a response that appropriately completes the request."
            "\n\n### Instruction:\n" + "\n\n### Response:\n")
BASE = len(TEMPLATE.split())  # 20 words of format_input and the response header
N = 1100
assert BASE + 2 <= A.len <= 1024
k = (A.len - BASE) // 2
m = A.len - BASE - k
data = [{'instruction': ' '.join(WORDS[(i + j) % len(WORDS)] for j in range(k)), 'input': '',
         'output': ' '.join(WORDS[(3 * i + j) % len(WORDS)] for j in range(m))} for i in range(N)]
work = tempfile.mkdtemp()
os.chdir(work)
with open('instruction-data.json', 'w', encoding='utf-8') as f:
    json.dump(data, f)


# ---- tokenizer stub, metadata, matplotlib, tqdm, requests ----------------------------------------------------------
class StubEncoding:
    name = 'gpt2-stub'

    def encode(self, text, allowed_special=(), **kw):
        return [(hash(w) & 0xffff) % 50000 for w in text.split()]

    def decode(self, ids):
        return ' '.join(f't{i}' for i in ids)


sys.modules['tiktoken'] = types.SimpleNamespace(get_encoding=lambda name: StubEncoding(), __stub__=True)
import torch  # noqa: E402
import book_probe  # noqa: E402 (beside this script)
import torch.utils.data  # noqa: E402


book_probe.stub_matplotlib()
try:
    import tqdm  # noqa: F401
except ImportError:
    sys.modules['tqdm'] = types.SimpleNamespace(tqdm=lambda it, **k: it)
try:
    import requests  # noqa: F401
except ImportError:
    sys.modules['requests'] = types.SimpleNamespace(get=None)

# ---- GPT-2 weights ----------------------------------------------------------------------------------------------
sys.path.insert(0, CH07)
HP = {'124M': (768, 12, 12), '355M': (1024, 24, 16), '774M': (1280, 36, 20), '1558M': (1600, 48, 25)}
stub_calls = {'download_and_load_gpt2': [], 'load_weights_into_gpt': 0}


def download_and_load_gpt2(model_size, models_dir):
    stub_calls['download_and_load_gpt2'].append(model_size)
    e, l, h = HP[model_size]
    return {'n_vocab': 50257, 'n_ctx': 1024, 'n_embd': e, 'n_head': h, 'n_layer': l}, None


gd = types.ModuleType('gpt_download')
gd.download_and_load_gpt2 = download_and_load_gpt2
sys.modules['gpt_download'] = gd
import previous_chapters as pc  # noqa: E402

assert os.path.dirname(os.path.abspath(pc.__file__)) == CH07


def load_weights_into_gpt(gpt, params):
    stub_calls['load_weights_into_gpt'] += 1


pc.load_weights_into_gpt = load_weights_into_gpt

# ---- phase tracker ---------------------------------------------------------------------------------------------
CUDA = torch.cuda.is_available()
phases = []  # [phase, step, epoch, peak_allocated, allocated_at_start, allocated_at_end, peak_reserved]
cur = {'phase': 'setup', 'step': None, 'epoch': None, 'a0': 0}
st = {'steps': 0, 'epochs': 0, 'reserved': 0}
widths, prompts, responses, saved, loaders = set(), [], [], {}, []


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
        book_probe.write_events(torch, st)


def caller():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename in (SCRIPT, pc.__file__):
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
_calc_loss_loader = pc.calc_loss_loader


def calc_loss_loader(*a, **k):
    if cur['phase'] == 'setup':
        enter('initial')  # main's initial losses
    return _calc_loss_loader(*a, **k)


pc.calc_loss_loader = calc_loss_loader
_calc_loss_batch = pc.calc_loss_batch


def calc_loss_batch(input_batch, *a, **k):
    widths.add(int(input_batch.shape[1]))
    return _calc_loss_batch(input_batch, *a, **k)


pc.calc_loss_batch = calc_loss_batch
_generate = pc.generate


def generate(model, idx, *a, **k):
    if cur['phase'] != 'respond':
        enter('respond')
    prompts.append(int(idx.shape[1]))
    out = _generate(model, idx, *a, **k)
    responses.append(int(out.shape[1]) - int(idx.shape[1]))
    return out


pc.generate = generate
_gen_simple = pc.generate_text_simple


def generate_text_simple(model, idx, *a, **k):
    prompts.append(('sample', int(idx.shape[1])))
    return _gen_simple(model, idx, *a, **k)


pc.generate_text_simple = generate_text_simple
book_probe.mark_steps(torch, enter, st)  # zero_grad / backward / AdamW.step marks (book_probe.py)


def save(obj, f, *a, **k):
    enter('tail')
    saved[str(f)] = obj


torch.save = save

# ---- run -------------------------------------------------------------------------------------------------------
E, NL, NH = HP[MODELS[A.model].split('(')[1].rstrip(')')]
cfg = {'choose_model': MODELS[A.model], 'emb_dim': E, 'n_layers': NL, 'n_heads': NH, 'vocab_size': 50257,
       'context_length': 1024, 'drop_rate': 0.0, 'qkv_bias': True, 'batch_size': A.batch, 'num_epochs': A.epochs,
       'learning_rate': 5e-5, 'weight_decay': 0.1, 'eval_freq': 5, 'eval_iter': 5, 'allowed_max_length': 1024,
       'target_len': A.len, 'entries': N, 'respond_entries': A.respond, 'tokenizer': 'stub', 'allocator': 'default'}
rec = {'name': A.name, 'script': 'ch07/01_main-chapter-code/gpt_instruction_finetuning.py', 'commit': COMMIT,
       'config': cfg, 'torch': torch.__version__, 'gpu': torch.cuda.get_device_name() if CUDA else None, 'status': 'ok'}
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
rec['stubs'] = {'weights': 'random init (download_and_load_gpt2 stub, load_weights_into_gpt no-op)', 'calls': stub_calls,
                'data': f'{N} synthetic entries of {A.len} stub tokens', 'tokenizer': 'stub: one id per word'}
sample_prompts = [p[1] for p in prompts if isinstance(p, tuple)]
rec['dataset'] = {'batch_widths': sorted(widths), 'sample_prompt_tokens': sample_prompts[:1],
                  'respond_prompt_tokens': [p for p in prompts if not isinstance(p, tuple)],
                  'respond_new_tokens': responses}
try:  # the prompts the script would give generate, from its own format_input and split (85 / 10 / 5 %)
    fi, ntr, nte = g['format_input'], int(N * 0.85), int(N * 0.1)
    rec['dataset']['prompt_tokens_of_data'] = {
        'sample': len(StubEncoding().encode(fi(data[ntr + nte]))),
        'respond': [len(StubEncoding().encode(fi(e))) for e in data[ntr:ntr + nte][:A.respond]]}
except Exception as e:  # noqa
    rec['dataset']['prompt_tokens_of_data'] = f'{type(e).__name__}: {e}'
if len(loaders) >= 2:
    rec['dataset'].update(train_rows=len(loaders[0].dataset), train_batches=_len(loaders[0]),
                          val_rows=len(loaders[1].dataset), val_batches=_len(loaders[1]))
cfg['max_length'] = max(widths) if widths else None
cfg['start_tokens'] = sample_prompts[0] if sample_prompts else None
if rec['status'] == 'ok' and sorted(widths) != [A.len]:
    rec['status'], rec['error'] = 'error', f'batch widths {sorted(widths)} != [{A.len}]'
rec['steps'] = st['steps']


rec['measured_bytes'] = book_probe.phase_peaks(phases, st['reserved'], also=('initial', 'generate', 'respond', 'tail'))
rec['evals'] = sum(p[0] == 'eval_train' for p in phases)
rec['generates'] = sum(p[0] == 'generate' for p in phases)
steps = sorted({p[1] for p in phases if p[0] == 'opt'})
keep = {0, 1, 2, 3, 5, 6, steps[-1] if steps else 0}
rec['phases'] = [p for p in phases if p[0] not in book_probe.TRAIN or p[1] in keep]
os.chdir('/')
shutil.rmtree(work, ignore_errors=True)
print('RESULT ' + json.dumps(rec), flush=True)
