"""Measure one karpathy/nanochat scripts/base_train.py run on the GPU (vramfit measurement harness).

The real script at nanochat commit 92d63d4, run as is (runpy), with its data, tokenizer, logging, checkpointing and
CORE/sampling stubbed out (synthetic tokens through a loader that, like the real one, keeps one on-device buffer of
2*B*T int64). Prints one line `RESULT {json}`: peaks of torch.cuda.max_memory_allocated per phase (reset at each mark),
in the schema of data/measured/nanochat.jsonl (+ `gpu`, `alloc_at_mark`).

usage:
  NANOCHAT=<dir with nanochat/ and scripts/> python3 run_base.py NAME --depth=.. --device-batch-size=.. \
      --max-seq-len=.. --window-pattern=.. --total-batch-size=.. --num-iterations=3 --eval-every=1000 \
      --eval-tokens=<2*B*T> --core-metric-every=-1 --sample-every=-1 --warmup-steps=1
env:
  ALLOC=expandable (default: PYTORCH_ALLOC_CONF=expandable_segments:True set before torch starts, as a real
        base_train.py run has it) | default (the caching allocator's default mode; reproduces nanochat.jsonl)
  TRACE=<file.pkl>  record the allocator history (_record_memory_history, python stacks) and pickle the snapshot
        there at the end; also pickles a snapshot at the `before_eval` mark to <file>.before_eval.pkl
  VOCAB (32768), NANOCHAT_BASE_DIR (/tmp/nanochat_base)
  SNAPSHOT=<file.pickle>  PyTorch's own memory snapshot of the run (torch.cuda.memory._dump_snapshot, what
        pytorch.org/memory_viz opens), written at the end whether it fit or ran out; its history keeps the last
        SNAPSHOT_ENTRIES allocator events (default 100000), with python stacks; the record gets `snapshot`.
  CAP_GIB=<GiB>  cap the process as a card of that many GiB usable would: torch.cuda.set_per_process_memory_fraction
        (what the allocator may reserve), before the script allocates; the record gets `allocator_cap_gib` and
        `cap_on_purpose` (status `ok` or `oom`, as score-accuracy reads capped runs)

How the data in data/measured/nanochat-expandable.jsonl were taken: PyTorch 2.11.0+cu130 (no FA3: SDPA fallback),
nanochat 92d63d4, one NVIDIA H100 80GB HBM3 (the `gpu` field of each record), several probe processes in parallel
on the one GPU (peaks are per process: torch.cuda.max_memory_allocated), ALLOC=expandable.

run_core.py and run_sft.py import this module (setup()/run_script()).
"""
import json, os, runpy, sys, time, types

ROOT = os.environ.get('NANOCHAT', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.nanochat'))
sys.path.insert(0, ROOT)
os.environ.setdefault('NANOCHAT_BASE_DIR', '/tmp/nanochat_base')
# base_train.py sets this at import, but the allocator reads it when CUDA starts, which this harness does first
# (reset_peak_memory_stats): set it before torch, as a real run has it. ALLOC=default measures the default allocator.
if os.environ.get('ALLOC', 'expandable') == 'expandable':
    os.environ['PYTORCH_ALLOC_CONF'] = 'expandable_segments:True'
else:
    os.environ.pop('PYTORCH_ALLOC_CONF', None)
import torch

V = int(os.environ.get('VOCAB', '32768'))
GiB = 2 ** 30
phase_peaks = {}   # phase -> list of peaks
alloc_at_mark = []  # (phase, memory_allocated at the mark)
mark_times_us = []  # (phase, wall clock in us)
TRACE = os.environ.get('TRACE')


device_used_at_mark = []  # (phase, bytes the device has in use: the allocator's reserve + context + NCCL)


# MARK_SYNC=0: marks do not wait for the GPU. The allocator's counters are kept on the host, at
# the time each request is made, so the peaks need no synchronize; but a synchronize before the
# optimizer step delays its first collective until the forward/backward has run on the GPU, which
# changes how many steps' collective tensors NCCL still holds (real runs: no such wait).
MARK_SYNC = os.environ.get('MARK_SYNC', '1') != '0'
# NORESET=1: marks do not reset the peak counters, so each phase's peak is the run's so far. Inductor's autotuner
# reads them (`copy_args_to_cpu_if_needed`: what fits below max_memory_allocated() is copied on the GPU), so a
# reset changes a cold run's requests; base_train.py itself never resets them.
NORESET = os.environ.get('NORESET', '0') == '1'


def mark(phase):
    if MARK_SYNC:
        torch.cuda.synchronize()
    phase_peaks.setdefault(phase, []).append(torch.cuda.max_memory_allocated())
    alloc_at_mark.append((phase, torch.cuda.memory_allocated()))
    mark_times_us.append((phase, time.time_ns() // 1000))
    free, total = torch.cuda.mem_get_info()
    device_used_at_mark.append((phase, total - free, torch.cuda.memory_reserved()))
    if TRACE and phase == 'before_eval' and phase_peaks['before_eval'].__len__() == 1:
        import pickle
        with open(TRACE + '.before_eval.pkl', 'wb') as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
    if not NORESET:
        torch.cuda.reset_peak_memory_stats()


# --- stubs for what needs the network or data ---------------------------------------------------------
def stub(modname, **attrs):
    m = types.ModuleType(modname)
    m.__dict__.update(attrs)
    sys.modules[modname] = m
    return m


class Tok:
    def get_vocab_size(self): return V
    def get_bos_token_id(self): return 0
    def encode_special(self, s): return 0


def token_bytes_fn(device='cuda'):
    return torch.full((V,), 3, dtype=torch.int32, device=device)


def loader(tokenizer, B, T, split='train', device='cuda', resume_state_dict=None, **kw):
    # like the real loader: one persistent on-device buffer of 2*B*T longs (inputs, then targets)
    gpu_buffer = torch.empty(2 * B * T, dtype=torch.long, device=device)
    g = torch.Generator(device=device).manual_seed(0)
    while True:
        gpu_buffer.random_(0, V, generator=g)
        inputs = gpu_buffer[:B * T].view(B, T)
        targets = gpu_buffer[B * T:].view(B, T)
        yield inputs, targets, {'pq_idx': 0, 'rg_idx': 0, 'epoch': 0}


def val_loader(*a, **k):
    for x, y, _ in loader(*a, **k):
        yield x, y


def setup(stub_checkpoints=True, evaluate_core=None):
    stub('wandb', init=lambda **k: None)
    stub('nanochat.tokenizer', get_tokenizer=lambda: Tok(), get_token_bytes=token_bytes_fn)
    stub('nanochat.dataloader', tokenizing_distributed_data_loader_bos_bestfit=val_loader,
         tokenizing_distributed_data_loader_with_state_bos_bestfit=loader)
    if stub_checkpoints:
        stub('nanochat.checkpoint_manager', save_checkpoint=lambda *a, **k: None,
             load_checkpoint=lambda *a, **k: (_ for _ in ()).throw(RuntimeError('no resume here')))
    stub('nanochat.engine', Engine=object)
    stub('scripts.base_eval', evaluate_core=evaluate_core or (lambda *a, **k: {'core_metric': 0.0, 'centered_results': {}}))
    # --- phase marks: eval, each iteration's forward/backward and optimizer step -----------------------
    import nanochat.loss_eval as le
    _eval = le.evaluate_bpb

    def evaluate_bpb(*a, **k):
        mark('before_eval')
        out = _eval(*a, **k)
        mark('eval')
        return out

    le.evaluate_bpb = evaluate_bpb
    import nanochat.optim as opt
    _step = opt.MuonAdamW.step

    def step(self, *a, **k):
        mark('fwd_bwd')
        out = _step(self, *a, **k)
        mark('optimizer_step')
        return out

    opt.MuonAdamW.step = step


def parse_config(argv):
    kv = {}
    for a in argv:
        if a.startswith('--') and '=' in a:
            k, v = a[2:].split('=', 1)
            kv[k] = v
    return {'depth': int(kv.get('depth', 20)), 'device_batch_size': int(kv.get('device-batch-size', 32)),
            'max_seq_len': int(kv.get('max-seq-len', 2048)), 'window_pattern': kv.get('window-pattern', 'SSSL'),
            'total_batch_size': int(kv.get('total-batch-size', -1)), 'vocab_size': V, 'aspect_ratio': 64,
            'head_dim': 128}


def start_snapshot():
    """Starts recording the allocator's history for SNAPSHOT (see the module's doc); its path, or None."""
    path = os.environ.get('SNAPSHOT')
    if path:
        entries = int(os.environ.get('SNAPSHOT_ENTRIES', 100_000))
        torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python', max_entries=entries)
    return path


def end_snapshot(path, rec):
    """Writes the snapshot started by start_snapshot() and stops recording."""
    if path:
        torch.cuda.memory._dump_snapshot(path)
        torch.cuda.memory._record_memory_history(enabled=None)
        rec['snapshot'] = os.path.basename(path)


def cap_process(rec, gib):
    """Caps what this process's allocator may reserve at `gib` GiB of the current card."""
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    torch.cuda.set_per_process_memory_fraction(gib * GiB / total)
    rec['allocator_cap_gib'], rec['cap_on_purpose'] = gib, True


def run_script(name, argv, script='base_train.py', extra=None):
    alloc = 'expandable_segments' if os.environ.get('PYTORCH_ALLOC_CONF') else 'default'
    rec = {'name': name, 'argv': argv, 'vocab_size': V, 'torch': torch.__version__, 'allocator': alloc,
           'rank': int(os.environ.get('RANK', 0)), 'world_size': int(os.environ.get('WORLD_SIZE', 1))}
    rec['status'] = 'ok'
    t0 = time.time()
    if TRACE:
        torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python', max_entries=2_000_000)
    snapshot = start_snapshot()
    try:
        sys.argv = [script] + argv
        if 'LOCAL_RANK' in os.environ:  # under torchrun: measure this rank's GPU, not cuda:0
            torch.cuda.set_device(int(os.environ['LOCAL_RANK']))
        if os.environ.get('CAP_GIB'):
            cap_process(rec, float(os.environ['CAP_GIB']))
        torch.cuda.reset_peak_memory_stats()
        runpy.run_path(os.path.join(ROOT, 'scripts', script), run_name='__main__')
    except torch.OutOfMemoryError as e:
        rec['status'] = 'oom'
        rec['oom'] = str(e)[:600]
    except SystemExit:
        pass
    except Exception as e:  # noqa
        import traceback; traceback.print_exc()
        rec['status'] = 'error'
        rec['error'] = f'{type(e).__name__}: {str(e)[:600]}'
    try:
        mark('end')
    except Exception:
        pass
    end_snapshot(snapshot, rec)
    if TRACE:
        import pickle
        with open(TRACE, 'wb') as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
        torch.cuda.memory._record_memory_history(enabled=None)
    fb, st = phase_peaks.get('fwd_bwd', []), phase_peaks.get('optimizer_step', [])
    rec['measured_bytes'] = {
        'peak_allocated_eval': max(phase_peaks.get('eval', [0])) or None,
        'peak_allocated_train_iter0': max(fb[:1] + st[:1]) if fb else None,
        'peak_allocated_train_steady': max(fb[1:] + st[1:]) if len(fb) > 1 else None,
        'peak_fwd_bwd': fb, 'peak_optimizer_step': st,
        'peak_eval_each': phase_peaks.get('eval', []),
        'peak_before_first_eval': (phase_peaks.get('before_eval') or [None])[0],
        'peak_reserved': torch.cuda.max_memory_reserved(),
    }
    rec['alloc_at_mark'] = alloc_at_mark
    # wall clock at every mark (step times: between optimizer_step marks) and the device's memory
    # beside the allocator's reserve (what NCCL and the CUDA context hold)
    rec['mark_times_us'] = mark_times_us
    rec['start_time_us'] = int(t0 * 1e6)
    rec['device_used_at_mark'] = device_used_at_mark
    rec['mark_sync'] = MARK_SYNC
    cfg = parse_config(argv)
    cfg['allocator'] = alloc
    rec['config'] = cfg
    rec['gpu'] = torch.cuda.get_device_name()
    rec['wall_s'] = round(time.time() - t0, 1)
    if extra:
        rec.update(extra)
    return rec


def main():
    name, argv = sys.argv[1], sys.argv[2:]
    setup()
    rec = run_script(name, argv)
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
