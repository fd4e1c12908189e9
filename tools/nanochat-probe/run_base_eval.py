"""Measure one karpathy/nanochat scripts/base_eval.py run on the GPU (nanochat 92d63d4), vramfit measurement harness.

The real script, run as is (runpy), on a real base checkpoint (made first by the real scripts/base_train.py through
run_sft.py, see stages_call.sh), with only data, tokenizer and network stubbed:
  * tokenizer: StageTok below: one token per whitespace-separated word (crc32 of the word), nine special tokens at the
    top of the vocabulary (V-9 .. V-1), so prefixes stay prefixes as core_eval.py asserts;
  * CORE: a synthetic eval bundle written by `--make-bundle` (core.yaml, eval_data/*.jsonl, eval_meta_data.csv) that
    the REAL evaluate_core / core_eval.evaluate_task / evaluate_example / forward_model read, render (Jinja) and run;
    item lengths in words (= tokens) follow CORE_TASKS below (see README "Eval, SFT-eval and RL stages");
  * bpb: run_base.py's loader (one on-device buffer of 2*B*T int64, as the real bestfit loader), token_bytes all 3;
  * sampling: the real Engine (KV cache, SDPA fallback) on StageTok's prompts.
Phases (each mark = the peak of torch.cuda.max_memory_allocated since the previous mark, named after the phase that
ended): init, load (checkpoint_manager.load_model), post_load (token_bytes, Engine), sample_n1 (x7) / sample_n8,
bpb_train, bpb_val, core:<task> (one per task), cleanup (CSV write + compute_cleanup).
Besides the phase peaks the record has `forward_calls` (every GPT.forward, aggregated per phase and shape:
[phase, kind, B, T, kv_len, has_targets, count, min_alloc_before, max_alloc_before, max_peak, max_extra_peak]) and
`generate_calls` (every Engine.generate_batch: [phase, prompt_len, num_samples, max_tokens, generated, alloc_before,
peak, alloc_after]). Nested peaks are exact: every reset of the peak counter first folds it into all open
measurements and the phase's running maximum.

usage:
  python3 run_base_eval.py --make-bundle            (once, writes $NANOCHAT_BASE_DIR/eval_bundle)
  NANOCHAT=<dir> python3 run_base_eval.py NAME <base_eval flags, incl. --model-tag=TAG>
Shared helpers for run_chat_eval.py and run_chat_rl.py live here too.
"""
import csv, json, os, random, sys, time, zlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_base as rb
from argv import argval
import torch

V = rb.V
SPECIALS = ['<|bos|>', '<|user_start|>', '<|user_end|>', '<|assistant_start|>', '<|assistant_end|>',
            '<|python_start|>', '<|python_end|>', '<|output_start|>', '<|output_end|>']
SPECIAL_ID = {s: V - len(SPECIALS) + i for i, s in enumerate(SPECIALS)}
NORMAL = V - len(SPECIALS)


class StageTok:
    """Word-level stand-in for nanochat's tokenizer (one token per word, stable ids)."""

    def get_vocab_size(self): return V
    def get_bos_token_id(self): return SPECIAL_ID['<|bos|>']
    def encode_special(self, s): return SPECIAL_ID[s]

    def _enc(self, text):
        return [zlib.crc32(w.encode()) % NORMAL for w in text.split()]

    def encode(self, text, prepend=None, append=None, num_threads=8):
        pre = [] if prepend is None else [prepend if isinstance(prepend, int) else self.encode_special(prepend)]
        post = [] if append is None else [append if isinstance(append, int) else self.encode_special(append)]
        if isinstance(text, str):
            return pre + self._enc(text) + post
        return [pre + self._enc(t) + post for t in text]

    __call__ = encode

    def decode(self, ids):
        return ' '.join('w%d' % i for i in ids)

    def render_for_completion(self, conversation):
        # a chat prompt of conversation['prompt_len'] tokens: <|bos|> <|user_start|> ... <|user_end|> <|assistant_start|>
        n, r = conversation['prompt_len'], random.Random(conversation['seed'])
        return ([SPECIAL_ID['<|bos|>'], SPECIAL_ID['<|user_start|>']] + [r.randrange(NORMAL) for _ in range(n - 4)]
                + [SPECIAL_ID['<|user_end|>'], SPECIAL_ID['<|assistant_start|>']])


# --- exact nested peak accounting ------------------------------------------------------------------------------
ACC = {'peak': 0, 'reserved': 0}
OPEN = []          # running peaks of open measurements (begin/end)
CUR = ['init']     # the phase now running
FWD = {}           # (phase, kind, B, T, kv_len, has_targets) -> [count, min_before, max_before, max_peak, max_extra]
GEN = []           # generate_batch calls
SEQ = []           # every mark in order: [phase, peak since the previous mark, memory_allocated at the mark]


def _fold():
    p = torch.cuda.max_memory_allocated()
    ACC['peak'] = max(ACC['peak'], p)
    ACC['reserved'] = max(ACC['reserved'], torch.cuda.max_memory_reserved())
    for i in range(len(OPEN)):
        OPEN[i] = max(OPEN[i], p)


def begin():
    _fold()
    # with NORESET=1 a call's recorded peak is the run's so far (forward_calls' peaks then say nothing per call)
    if not rb.NORESET:
        torch.cuda.reset_peak_memory_stats()
    a = torch.cuda.memory_allocated()
    OPEN.append(a)
    return a


def end():
    _fold()
    return OPEN.pop()


def mark(name):
    """run_base.mark with the folded maxima (replaces it: run_base.run_script's final mark goes through here)."""
    if name == 'end':
        name = CUR[0]
    if rb.MARK_SYNC:
        torch.cuda.synchronize()
    _fold()
    rb.phase_peaks.setdefault(name, []).append(ACC['peak'])
    rb.alloc_at_mark.append((name, torch.cuda.memory_allocated()))
    SEQ.append([name, ACC['peak'], rb.alloc_at_mark[-1][1]])
    rb.mark_times_us.append((name, time.time_ns() // 1000))
    free, total = torch.cuda.mem_get_info()
    rb.device_used_at_mark.append((name, total - free, torch.cuda.memory_reserved()))
    snapshot_at(name)
    if not rb.NORESET:  # run_base.NORESET: leave the counters as the script leaves them
        torch.cuda.reset_peak_memory_stats()
    ACC['peak'] = 0


# SNAPSHOT_AT=NAME:K with SNAPSHOT_FILE=<json.gz>: at the K-th mark called NAME (1-based), write the allocator's
# segments as they are then — [address, total_size, segment_type, [[offset, size, state, site], ...]] each, `site` the
# allocating line where the history is recorded (TRACE=) — the layout a replay can be laid beside, block by block.
SNAP_AT = os.environ.get('SNAPSHOT_AT')
SNAP_SEEN = {}


def snapshot_at(name):
    if not SNAP_AT:
        return
    want, k = SNAP_AT.rsplit(':', 1)
    SNAP_SEEN[name] = SNAP_SEEN.get(name, 0) + 1
    if name != want or SNAP_SEEN[name] != int(k):
        return
    import gzip
    from trace_tools import site
    segs = [[seg['address'], seg['total_size'], seg['segment_type'],
             [[b['address'] - seg['address'], b['size'], b['state'], site(b.get('frames') or [])]
              for b in seg['blocks']]]
            for seg in torch.cuda.memory._snapshot()['segments']]
    with gzip.open(os.environ['SNAPSHOT_FILE'], 'wt') as f:
        json.dump({'mark': SNAP_AT, 'memory_allocated': torch.cuda.memory_allocated(),
                   'memory_reserved': torch.cuda.memory_reserved(), 'segments': segs}, f)


def phase(new):
    mark(CUR[0])
    CUR[0] = new


rb.mark = mark


# --- setup ------------------------------------------------------------------------------------------------------
def private_base(name):
    """A private NANOCHAT_BASE_DIR per job (outputs: CSV, RL checkpoints), its inputs linked from the shared one."""
    shared = os.environ.get('NANOCHAT_BASE_DIR', '/tmp/nanochat_base')
    priv = os.path.join(shared + '_jobs', name)
    os.makedirs(priv, exist_ok=True)
    for d in ('base_checkpoints', 'chatsft_checkpoints', 'eval_bundle'):
        src, dst = os.path.join(shared, d), os.path.join(priv, d)
        if os.path.exists(src) and not os.path.lexists(dst):
            os.symlink(src, dst)
    os.environ['NANOCHAT_BASE_DIR'] = priv
    return shared


def install(tok, gen_label=None, train_phases=False):
    """Stubs (wandb, tokenizer, dataloader) and the phase/peak instrumentation. gen_label(num_samples, kwargs) names
    the phase of an Engine.generate_batch call (None: keep the current phase)."""
    try:
        import yaml  # noqa: F401
    except ImportError:  # core.yaml is written as JSON, which is YAML
        rb.stub('yaml', safe_load=lambda f: json.load(f))
    rb.stub('wandb', init=lambda **k: None)
    rb.stub('nanochat.tokenizer', get_tokenizer=lambda: tok, get_token_bytes=rb.token_bytes_fn)
    rb.stub('nanochat.dataloader', tokenizing_distributed_data_loader_bos_bestfit=rb.val_loader,
            tokenizing_distributed_data_loader_with_state_bos_bestfit=rb.loader)
    import nanochat.checkpoint_manager as cm
    import nanochat.common as common
    import nanochat.gpt as gpt
    import nanochat.engine as engine
    _load = cm.load_model

    def load_model(*a, **k):
        phase('load')
        out = _load(*a, **k)
        phase('post_load')
        return out

    cm.load_model = load_model
    _cleanup = common.compute_cleanup

    def compute_cleanup(*a, **k):
        phase('cleanup')
        return _cleanup(*a, **k)

    common.compute_cleanup = compute_cleanup
    _fwd = gpt.GPT.forward

    def forward(self, idx, targets=None, kv_cache=None, loss_reduction='mean'):
        train = self.training and torch.is_grad_enabled()
        if train and train_phases:
            phase('fwd')
        before = begin()
        out = _fwd(self, idx, targets=targets, kv_cache=kv_cache, loss_reduction=loss_reduction)
        peak = end()
        B, T = idx.shape
        kind = 'train' if train else ('forward' if kv_cache is None else ('decode' if T == 1 else 'prefill'))
        key = (CUR[0], kind, B, T, 0 if kv_cache is None else kv_cache.max_seq_len, targets is not None)
        e = FWD.get(key)
        if e is None:
            FWD[key] = [1, before, before, peak, peak - before]
        else:
            e[0] += 1
            e[1], e[2], e[3], e[4] = min(e[1], before), max(e[2], before), max(e[3], peak), max(e[4], peak - before)
        return out

    gpt.GPT.forward = forward
    _gb = engine.Engine.generate_batch

    def generate_batch(self, tokens, num_samples=1, **kw):
        if gen_label:
            lab = gen_label(num_samples, kw)
            if lab:
                phase(lab)
        before = begin()
        res = _gb(self, tokens, num_samples, **kw)
        peak = end()
        GEN.append([CUR[0], len(tokens), num_samples, kw.get('max_tokens'), max(len(r) for r in res[0]) - len(tokens),
                    before, peak, torch.cuda.memory_allocated()])
        return res

    engine.Engine.generate_batch = generate_batch
    if train_phases:
        import nanochat.optim as opt
        _step = opt.MuonAdamW.step

        def step(self, *a, **k):
            phase('optimizer_step')
            out = _step(self, *a, **k)
            phase('post_step')
            return out

        opt.MuonAdamW.step = step
        _bw = torch.Tensor.backward

        def backward(self, *a, **k):
            phase('bwd')
            out = _bw(self, *a, **k)
            phase('post_bwd')
            return out

        torch.Tensor.backward = backward


def model_meta(source, tag):
    d = os.path.join(os.environ['NANOCHAT_BASE_DIR'], {'base': 'base_checkpoints', 'sft': 'chatsft_checkpoints'}[source], tag)
    metas = sorted(f for f in os.listdir(d) if f.startswith('meta_'))
    return json.load(open(os.path.join(d, metas[-1])))


def finalize(rec, source, tag, summary=None):
    """Replaces run_base's training-phase summary with this harness's phases."""
    pp = rb.phase_peaks
    allp = [p for v in pp.values() for p in v]
    mb = {'peak_allocated': max(allp) if allp else None, 'phase_peaks': pp,
          'peak_reserved': max(ACC['reserved'], torch.cuda.max_memory_reserved())}
    if summary:
        mb.update(summary(pp, SEQ))
    rec['measured_bytes'] = mb
    rec['phase_seq'] = SEQ
    rec['forward_calls'] = [list(k) + v for k, v in FWD.items()]
    rec['generate_calls'] = GEN
    try:
        meta = model_meta(source, tag)
        mc = meta['model_config']
        rec['checkpoint'] = {'source': source, 'tag': tag, 'step': meta.get('step'), 'model_config': mc}
        rec['config'] = {'depth': mc['n_layer'], 'max_seq_len': mc['sequence_len'], 'window_pattern': mc['window_pattern'],
                         'n_embd': mc['n_embd'], 'n_head': mc['n_head'], 'n_kv_head': mc['n_kv_head'],
                         'vocab_size': mc['vocab_size'], 'allocator': rec['allocator']}
    except Exception as e:  # noqa
        rec['checkpoint_error'] = repr(e)
    rec['stubbed'] = 'tokenizer (word level), data/tasks (synthetic), wandb'
    return rec


# --- the synthetic CORE bundle ----------------------------------------------------------------------------------
# (label, icl_task_type, num_fewshot, choices, (query/context words lo, hi), (choice/continuation words lo, hi),
#  random baseline %). One word = one StageTok token. Lengths approximate the DCLM CORE tasks (see README).
CORE_TASKS = [
    ('hellaswag_zeroshot', 'multiple_choice', 0, 4, (40, 90), (15, 40), 25),
    ('hellaswag', 'multiple_choice', 10, 4, (40, 90), (15, 40), 25),
    ('arc_easy', 'multiple_choice', 10, 4, (15, 45), (2, 10), 25),
    ('copa', 'multiple_choice', 0, 2, (8, 16), (5, 12), 50),
    ('winogrande', 'schema', 0, 2, (15, 30), (5, 12), 50),
    ('lambada_openai', 'language_modeling', 0, 1, (50, 140), (1, 2), 0),
    ('squad', 'language_modeling', 10, 1, (120, 220), (1, 6), 0),
    ('agi_eval_lsat_ar', 'multiple_choice', 3, 5, (180, 300), (10, 25), 25),
    ('boolq', 'multiple_choice', 10, 2, (90, 180), (1, 1), 62),
]
N_ITEMS = 100


def make_bundle(base_dir):
    root = os.path.join(base_dir, 'eval_bundle')
    os.makedirs(os.path.join(root, 'eval_data'), exist_ok=True)
    r = random.Random(1234)
    words = lambda lo, hi: ' '.join('w%d' % r.randrange(20000) for _ in range(r.randint(lo, hi)))
    tasks = []
    for label, typ, shots, nc, ql, cl, _ in CORE_TASKS:
        with open(os.path.join(root, 'eval_data', label + '.jsonl'), 'w') as f:
            for _ in range(N_ITEMS):
                if typ == 'multiple_choice':
                    it = {'query': words(*ql), 'choices': [words(*cl) for _ in range(nc)], 'gold': r.randrange(nc)}
                elif typ == 'schema':
                    it = {'context_options': [words(*ql) for _ in range(nc)], 'continuation': words(*cl),
                          'gold': r.randrange(nc)}
                else:
                    it = {'context': words(*ql), 'continuation': words(*cl)}
                f.write(json.dumps(it) + '\n')
        tasks.append({'label': label, 'icl_task_type': typ, 'dataset_uri': label + '.jsonl', 'num_fewshot': [shots],
                      'continuation_delimiter': ' '})
    with open(os.path.join(root, 'core.yaml'), 'w') as f:
        json.dump({'icl_tasks': tasks}, f, indent=1)  # JSON is YAML
    with open(os.path.join(root, 'eval_meta_data.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['Eval Task', 'Random baseline'])
        for t in CORE_TASKS:
            w.writerow([t[0], t[6]])
    print('bundle at', root, len(tasks), 'tasks')


def main():
    if sys.argv[1] == '--make-bundle':
        make_bundle(os.environ.get('NANOCHAT_BASE_DIR', '/tmp/nanochat_base'))
        return
    name, argv = sys.argv[1], sys.argv[2:]
    private_base(name)
    tok = StageTok()
    install(tok, gen_label=lambda n, kw: f'sample_n{n}')
    import nanochat.loss_eval as le
    import nanochat.core_eval as ce
    _bpb, splits = le.evaluate_bpb, ['train', 'val']

    def evaluate_bpb(*a, **k):
        phase('bpb_' + (splits.pop(0) if splits else 'extra'))
        return _bpb(*a, **k)

    le.evaluate_bpb = evaluate_bpb
    _task = ce.evaluate_task

    def evaluate_task(model, tokenizer, data, device, task_meta):
        phase('core:' + task_meta['dataset_uri'].rsplit('.', 1)[0])
        return _task(model, tokenizer, data, device, task_meta)

    ce.evaluate_task = evaluate_task
    tag = argval(argv, '--model-tag')
    rec = rb.run_script(name, argv, script='base_eval.py', extra={'script': 'scripts/base_eval.py'})

    def summary(pp, seq):
        core = {k: max(v) for k, v in pp.items() if k.startswith('core:')}
        return {'peak_load': max(pp.get('load', [0])) or None,
                'peak_sample': max(pp.get('sample_n1', []) + pp.get('sample_n8', []) or [0]) or None,
                'peak_bpb': max(pp.get('bpb_train', []) + pp.get('bpb_val', []) or [0]) or None,
                'peak_core': max(core.values()) if core else None, 'peak_core_per_task': core}

    finalize(rec, 'base', tag, summary)
    rec['core_tasks'] = [list(t) for t in CORE_TASKS]
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
