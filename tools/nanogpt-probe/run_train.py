"""Measure one run of karpathy/nanoGPT's own train.py on the GPU (vramfit measurement harness).

The real train.py (runpy) with its own command-line overrides; only its data are synthetic: a work dir with
data/<dataset>/train.bin and val.bin of random uint16 tokens in [0, V) (and a meta.pkl with vocab_size 65 for the
char runs, as data/shakespeare_char/prepare.py writes it). Phases are marked by monkeypatching, with
torch.cuda.reset_peak_memory_stats() at every mark:
  model           GPT.configure_optimizers called (the model is on the device): after_model_to_device
  optimizer_init  configure_optimizers returned
  pre_eval        model.eval() at the top of estimate_loss()
  eval            model.train() at the end of estimate_loss()
  fwd_bwd         AdamW.step called (after the micro-steps' forward/backward, unscale and clip)
  optimizer_step  AdamW.step returned (scaler.update and zero_grad follow, in the next window)
Prints `RESULT {json}` in the schema of shared/data/measured/calibration.jsonl (+ torch, gpu, nanogpt_commit,
peak_fwd_bwd, peak_optimizer_step).

usage:  NANOGPT=<dir with train.py, model.py, configurator.py> python3 run_train.py NAME VOCAB --compile=True \
            --dtype=bfloat16 --batch_size=4 --block_size=1024 --gradient_accumulation_steps=1 ...
  VOCAB: 50304 (dataset openwebtext, no meta.pkl) or 65 (dataset shakespeare_char, meta.pkl)
  The harness adds --max_iters=3 --eval_iters=2 --eval_interval=1000 --out_dir=<work>/out --dataset=... unless given.
env:
  TRACE=<summary.json>  record the allocator history (_record_memory_history, python stacks) and write a compact
        summary: per phase window the replayed peak of live requested bytes and the live allocations at that peak,
        grouped by (size, allocation site), with the source line of Inductor output-code frames.
  SNAPSHOT=<file.pickle>  PyTorch's own memory snapshot of the run (torch.cuda.memory._dump_snapshot, what
        pytorch.org/memory_viz opens), written at the end whether it fit or ran out; its history keeps the last
        SNAPSHOT_ENTRIES allocator events (default 100000), with python stacks; the record gets `snapshot`.
  CAP_GIB  cap the caching allocator (set_per_process_memory_fraction) to keep parallel runs apart.
  NANOGPT_COMMIT  recorded in the record.
  PAUSE=<seconds>  sleep that long after each AdamW step (after its mark's synchronize): gives ProcessGroupNCCL's
        watchdog time to release the last all-reduce's tensors before the next iteration (DDP runs).
Under torchrun (LOCAL_RANK set) each rank runs on its own GPU in its own work dir and its record gets `rank` and
`config.world_size`; a trace is the rank's own device's.
"""
import json, linecache, os, pickle, runpy, sys, time
from collections import defaultdict

ROOT = os.path.abspath(os.environ.get('NANOGPT', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.nanogpt')))
os.environ.pop('PYTORCH_CUDA_ALLOC_CONF', None)
os.environ.pop('PYTORCH_ALLOC_CONF', None)
import numpy as np
import torch

TRACE = os.environ.get('TRACE', '').replace('{rank}', os.environ.get('RANK', '0')) or None
marks, phase_peaks = [], defaultdict(list)
max_reserved = [0]
mark_times_us = []


def mark(tag):
    torch.cuda.synchronize()
    pk, pr = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    max_reserved[0] = max(max_reserved[0], pr)
    marks.append({'tag': tag, 'alloc': torch.cuda.memory_allocated(), 'peak_alloc': pk,
                  'reserved': torch.cuda.memory_reserved(), 'peak_reserved': pr})
    phase_peaks[tag].append(pk)
    mark_times_us.append((tag, time.time_ns() // 1000))
    # NORESET=1: leave the counters alone, as train.py does (Inductor's autotuner reads them: what a kernel writes
    # is copied onto the GPU only while it fits below max_memory_allocated()); each phase's peak is then the run's so far
    if os.environ.get('NORESET', '0') != '1':
        torch.cuda.reset_peak_memory_stats()


def make_data(work, dataset, V):
    d = os.path.join(work, 'data', dataset)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    for s in ('train', 'val'):
        rng.integers(0, V, size=1 << 20, dtype=np.uint16).tofile(os.path.join(d, f'{s}.bin'))
    if V != 50304:
        with open(os.path.join(d, 'meta.pkl'), 'wb') as f:
            pickle.dump({'vocab_size': V, 'itos': {}, 'stoi': {}}, f)


def patch():
    sys.path.insert(0, ROOT)
    import model as M
    _co = M.GPT.configure_optimizers

    def configure_optimizers(self, *a, **k):
        mark('model')
        out = _co(self, *a, **k)
        mark('optimizer_init')
        return out
    M.GPT.configure_optimizers = configure_optimizers

    _step = torch.optim.AdamW.step

    pause = float(os.environ.get('PAUSE', '0'))

    def step(self, *a, **k):
        mark('fwd_bwd')
        out = _step(self, *a, **k)
        mark('optimizer_step')
        if pause:
            time.sleep(pause)
        return out
    torch.optim.AdamW.step = step

    nn = torch.nn.Module
    _eval, _train = nn.eval, nn.train
    state = {'in_eval': False}

    def eval_(self):
        if not state['in_eval']:
            mark('pre_eval')
            state['in_eval'] = True
        return _eval(self)

    def train_(self, mode=True):
        if mode and state['in_eval']:
            state['in_eval'] = False
            out = _train(self, mode)
            mark('eval')
            return out
        return _train(self, mode)
    nn.eval, nn.train = eval_, train_


# ---- trace summary ------------------------------------------------------------------------------------------
INTEREST = ('torchinductor', 'output_code', '.nanogpt', 'nanogpt', 'run_train')


def site(frames):
    if not frames:
        return {'site': '?'}
    inner = frames[0]
    fr = [f for f in frames if any(k in f.get('filename', '') for k in INTEREST)][:3]
    s = ' <- '.join(f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for f in ([inner] + [f for f in fr if f is not inner]))
    out = {'site': s}
    for f in frames:
        fn = f.get('filename', '')
        if 'torchinductor' in fn:
            out['code'] = linecache.getline(fn, f['line']).strip()[:200]
            out['code_file'] = fn.split('/')[-1]
            break
    return out


def summarize(snap, top=30):
    entries = snap['device_traces'][torch.cuda.current_device()]
    windows, prev = [], entries[0].get('time_us', 0) if entries else 0
    for tag, t in mark_times_us:
        windows.append((tag, prev, t)); prev = t
    live, total = {}, 0
    res = [[-1, None] for _ in windows]
    fa = 'free_completed' if any(e['action'] == 'free_completed' for e in entries) else 'free_requested'
    wi = 0
    for e in entries:
        a = e['action']
        if a == 'alloc':
            live[e['addr']] = (e['size'], e.get('frames', []))
            total += e['size']
        elif a == fa:
            v = live.pop(e['addr'], None)
            if v:
                total -= v[0]
        else:
            continue
        t = e.get('time_us', 0)
        while wi < len(windows) and t > windows[wi][2]:
            wi += 1
        if wi < len(windows) and total > res[wi][0]:
            res[wi] = [total, dict(live)]
    sitecache = {}
    out = []
    for (tag, t0, t1), (pk, lv) in zip(windows, res):
        if lv is None:
            out.append({'phase': tag, 'peak_replayed': None}); continue
        g = defaultdict(lambda: [0, 0, None])
        for size, frames in lv.values():
            key = tuple((f.get('filename'), f.get('line')) for f in frames[:12])
            if key not in sitecache:
                sitecache[key] = site(frames)
            st = sitecache[key]
            k = (size, st['site'], st.get('code', ''))
            g[k][0] += 1; g[k][1] += size; g[k][2] = st
        groups = sorted(g.items(), key=lambda kv: -kv[1][1])
        out.append({'phase': tag, 'peak_replayed': pk, 'n_live': len(lv),
                    'groups': [dict({'bytes': v[1], 'count': v[0], 'size': k[0]}, **v[2]) for k, v in groups[:top]]})
    return out


def main():
    name, V, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    rank = os.environ.get('RANK')
    work = f'/tmp/ngw/{name}' + (f'/rank{rank}' if rank is not None else '')
    os.makedirs(work, exist_ok=True)
    dataset = 'openwebtext' if V == 50304 else 'shakespeare_char'
    kv = {a[2:].split('=', 1)[0]: a.split('=', 1)[1] for a in argv if a.startswith('--')}
    add = {'max_iters': '3', 'eval_iters': '2', 'eval_interval': '1000', 'out_dir': f'{work}/out', 'dataset': dataset,
           'log_interval': '1'}
    for k, v in add.items():
        if k not in kv:
            argv.append(f'--{k}={v}'); kv[k] = v
    make_data(work, kv['dataset'], V)
    os.chdir(work)
    if not os.path.exists('configurator.py'):
        os.symlink(os.path.join(ROOT, 'configurator.py'), 'configurator.py')
    cap = os.environ.get('CAP_GIB')
    if os.environ.get('LOCAL_RANK') is not None:
        # before CUDA starts, so that this rank's context, counters and cap are its own GPU's (train.py sets it too)
        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))
    torch.cuda.init()
    if cap:
        torch.cuda.set_per_process_memory_fraction(float(cap) * 2**30 / torch.cuda.get_device_properties().total_memory)
    patch()
    rec = {'name': name, 'status': 'ok'}
    if rank is not None:
        rec['rank'] = int(rank)
    t0 = time.time()
    if TRACE:
        torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python', max_entries=3_000_000)
    SNAPSHOT = os.environ.get('SNAPSHOT')
    if SNAPSHOT:
        torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python',
                                                 max_entries=int(os.environ.get('SNAPSHOT_ENTRIES', 100_000)))
    torch.cuda.reset_peak_memory_stats()
    try:
        sys.argv = ['train.py'] + argv
        runpy.run_path(os.path.join(ROOT, 'train.py'), run_name='__main__')
    except torch.OutOfMemoryError as e:
        rec['status'] = 'oom'; rec['oom_message'] = str(e)[:800]
    except SystemExit:
        pass
    except Exception as e:  # noqa
        import traceback; traceback.print_exc()
        rec['status'] = 'error'; rec['error'] = f'{type(e).__name__}: {str(e)[:600]}'
    try:
        mark('end')
    except Exception:
        pass
    if SNAPSHOT:
        torch.cuda.memory._dump_snapshot(SNAPSHOT)
        torch.cuda.memory._record_memory_history(enabled=None)
        rec['snapshot'] = os.path.basename(SNAPSHOT)
    G = lambda k, d: type(d)(kv.get(k, d)) if not isinstance(d, bool) else kv.get(k, str(d)) == 'True'
    cfg = {'eval_iters': int(kv['eval_iters']), 'compile': G('compile', True),
           'gradient_accumulation_steps': G('gradient_accumulation_steps', 40), 'dtype': kv.get('dtype', 'bfloat16'),
           'n_layer': G('n_layer', 12), 'n_head': G('n_head', 12), 'n_embd': G('n_embd', 768),
           'block_size': G('block_size', 1024), 'batch_size': G('batch_size', 12), 'dropout': G('dropout', 0.0),
           'bias': G('bias', False), 'vocab_size': V,
           # train.py's own attention runs where torch has no scaled_dot_product_attention (ATTENTION=manual)
           'attention': 'flash' if hasattr(torch.nn.functional, 'scaled_dot_product_attention') else 'manual',
           'allocator': 'expandable_segments' if 'expandable_segments:True' in os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')
           else 'default'}
    fb, st, ev = phase_peaks['fwd_bwd'], phase_peaks['optimizer_step'], phase_peaks['eval']
    mod = [m for m in marks if m['tag'] == 'model']
    if rank is not None:
        cfg['world_size'] = int(os.environ['WORLD_SIZE'])
    rec.update({'config': cfg, 'allocator_cap_gib': float(cap) if cap else None, 'cap_on_purpose': False})
    rec['measured_bytes'] = {
        'after_model_to_device': mod[0]['alloc'] if mod else None,
        'peak_allocated_eval': max(ev) if ev else None,
        'peak_allocated_train_iter0': max(fb[:1] + st[:1]) if fb else None,
        'peak_allocated_train_steady': max(fb[1:] + st[1:]) if len(fb) > 1 else None,
        'peak_reserved': max_reserved[0],
        'peak_fwd_bwd': fb, 'peak_optimizer_step': st}
    rec['marks'] = marks
    rec['num_alloc_retries'] = torch.cuda.memory_stats().get('num_alloc_retries')
    rec['device'] = rec['gpu'] = torch.cuda.get_device_name()
    rec['torch'] = torch.__version__
    rec['nanogpt_commit'] = os.environ.get('NANOGPT_COMMIT')
    rec['seconds'] = round(time.time() - t0, 1)
    rec['script_argv'] = argv  # not 'argv': score-accuracy reads that as nanochat's flags
    if TRACE:
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        try:
            summ = {'name': name, 'cfg': cfg, 'measured_bytes': rec['measured_bytes'], 'marks': marks,
                    'phases': summarize(snap)}
            with open(TRACE, 'w') as f:
                json.dump(summ, f, indent=0)
            rec['trace'] = os.path.basename(TRACE)
        except Exception as e:  # noqa
            import traceback; traceback.print_exc()
            rec['trace_error'] = repr(e)
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
