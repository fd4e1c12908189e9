"""What the LLMs-from-scratch probes share (run_train.py, run_finetune.py, run_instruct.py, run_speed.py): the
plotting stub, and the phase marks — monkeypatches that call the probe's `enter(phase, step)` around what the
book's training loops do, and allocate nothing.

  Optimizer.zero_grad  'zero_grad', then 'fwd' (the batch's forward and loss run until backward)
  Tensor.backward      'bwd', then 'post_bwd'
  AdamW.step           'opt', then 'post'; `st['steps']` counts the steps taken
  DataLoader           each loader built is appended to `loaders` (main() builds train, then val); asking the
                       second one's length while in 'eval_train' enters 'eval_val' (evaluate_model's val half);
                       mark_loaders returns the unpatched __len__, for a record's loader sizes without a mark
"""

import sys
import types


def _no_dunder(k):
    if k.startswith('__'):
        raise AttributeError(k)
    return Dummy()


class Dummy:
    """Anything a plotting call returns: every attribute and call gives another, iterating gives two."""

    def __getattr__(self, k):
        return _no_dunder(k)

    def __call__(self, *a, **k):
        return Dummy()

    def __iter__(self):
        return iter([Dummy(), Dummy()])


def stub_matplotlib():
    """matplotlib, matplotlib.pyplot and matplotlib.ticker as no-op modules: the scripts' plots save nothing."""
    plt = types.ModuleType('matplotlib.pyplot')
    plt.__getattr__ = _no_dunder
    ticker = types.ModuleType('matplotlib.ticker')
    ticker.__getattr__ = _no_dunder  # previous_chapters imports MaxNLocator for its plot
    mpl = types.ModuleType('matplotlib')
    mpl.pyplot, mpl.ticker = plt, ticker
    sys.modules['matplotlib'], sys.modules['matplotlib.pyplot'], sys.modules['matplotlib.ticker'] = mpl, plt, ticker


def mark_steps(torch, enter, st):
    zero, backward_, step_ = torch.optim.Optimizer.zero_grad, torch.Tensor.backward, torch.optim.AdamW.step

    def zero_grad(self, *a, **k):
        enter('zero_grad', st['steps'])
        out = zero(self, *a, **k)
        enter('fwd', st['steps'])
        return out

    def backward(self, *a, **k):
        enter('bwd', st['steps'])
        out = backward_(self, *a, **k)
        enter('post_bwd', st['steps'])
        return out

    def step(self, *a, **k):
        enter('opt', st['steps'])
        out = step_(self, *a, **k)
        enter('post', st['steps'])
        st['steps'] += 1
        return out

    torch.optim.Optimizer.zero_grad = zero_grad
    torch.Tensor.backward = backward
    torch.optim.AdamW.step = step


def mark_loaders(torch, enter, cur, loaders):
    length, init = torch.utils.data.DataLoader.__len__, torch.utils.data.DataLoader.__init__

    def dl_len(self):
        if cur['phase'] == 'eval_train' and len(loaders) > 1 and self is loaders[1]:
            enter('eval_val', cur['step'])
        return length(self)

    def dl_init(self, *a, **k):
        init(self, *a, **k)
        loaders.append(self)

    torch.utils.data.DataLoader.__len__ = dl_len
    torch.utils.data.DataLoader.__init__ = dl_init
    return length


# One phase record: [phase that ends, step, epoch, peak allocated, allocated at its start, allocated at its end, …].
TRAIN = ('pre_train', 'zero_grad', 'fwd', 'bwd', 'post_bwd', 'opt', 'post')


def peak(phases, names, pred=lambda p: True):
    """The largest peak of the phases named `names` that `pred` accepts; None when there is none."""
    v = [p[3] for p in phases if p[0] in names and pred(p)]
    return max(v) if v else None


def phase_peaks(phases, reserved, also=()):
    """The measured_bytes every probe records: setup, iteration 0, steady steps, evaluate_model (both halves),
    each phase of `also` as peak_allocated_<phase>, the run's peaks, and the allocated bytes after setup, after
    step 0 and at the end."""
    out = {
        'peak_allocated_setup': peak(phases, ('setup',)),
        'peak_allocated_train_iter0': peak(phases, TRAIN, lambda p: p[1] == 0),
        'peak_allocated_train_steady': peak(phases, TRAIN, lambda p: p[1] is not None and p[1] >= 1),
        'peak_allocated_eval': peak(phases, ('eval_train', 'eval_val')),
        'peak_allocated_eval_train': peak(phases, ('eval_train',)),
        'peak_allocated_eval_val': peak(phases, ('eval_val',)),
    }
    for name in also:
        out[f'peak_allocated_{name}'] = peak(phases, (name,))
    out.update({
        'peak_allocated': max([p[3] for p in phases] or [0]),
        'peak_reserved': reserved,
        'alloc_after_setup': next((p[5] for p in phases if p[0] == 'setup'), None),
        'alloc_after_step0': next((p[5] for p in phases if p[0] == 'opt' and p[1] == 0), None),
        'alloc_end': phases[-1][5] if phases else None,
    })
    return out


def step_peaks(phases):
    """Each step's forward, backward and optimizer-step peaks, in step order."""
    steps = sorted({p[1] for p in phases if p[0] == 'opt'})
    return {f'peak_{ph}': [peak(phases, (ph,), lambda p, s=s: p[1] == s) for s in steps] for ph in ('fwd', 'bwd', 'opt')}


# ---- capped runs at a card's edge (2026-11-30; make_jobs_capped.py) ---------------------------------------------
def cap_process(torch, rec, device=None):
    """CAP_GIB=<GiB> in the environment: cap what this process's caching allocator may reserve at that many GiB of
    the current card (torch.cuda.set_per_process_memory_fraction), as a card with that much usable memory would,
    before the script allocates anything. The record gets `allocator_cap_gib`, `cap_on_purpose` and
    `cap_fraction` (as tools/nanochat-probe/run_base.py and tools/build-nanogpt-probe/run_train.py do). Returns the
    cap in GiB, or None when CAP_GIB is not set (the uncapped runs: nothing changes)."""
    import os
    gib = os.environ.get('CAP_GIB')
    if not gib or not torch.cuda.is_available():
        return None
    gib = float(gib)
    dev = torch.cuda.current_device() if device is None else device
    total = torch.cuda.get_device_properties(dev).total_memory
    frac = gib * 2 ** 30 / total
    torch.cuda.set_per_process_memory_fraction(frac, dev)
    rec['allocator_cap_gib'], rec['cap_on_purpose'], rec['cap_fraction'] = gib, True, frac
    rec['device_total_memory'] = total
    return gib


def oom_in(torch, e):
    """The CUDA out-of-memory error behind `e` (itself, or one it was raised from, as torch.compile's wrappers
    re-raise), or None."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, torch.OutOfMemoryError) or 'CUDA out of memory' in str(e):
            return e
        e = e.__cause__ or e.__context__
    return None


def set_failure(torch, rec, e, limit=500):
    """An exception that ended the script: status `oom` with PyTorch's message in `oom` (and the wrapper's type in
    `oom_via` when the OutOfMemoryError came wrapped), else status `error`."""
    o = oom_in(torch, e)
    if o is not None:
        rec['status'], rec['oom'] = 'oom', str(o)[:limit]
        if o is not e:
            rec['oom_via'] = type(e).__name__
    else:
        rec['status'], rec['error'] = 'error', f'{type(e).__name__}: {str(e)[:limit]}'


def record_events(torch):
    """EVENTS=<file.json> (issue 27): start keeping every allocator event (alloc, free; address, size, time)."""
    import os
    if os.environ.get('EVENTS'):
        torch.cuda.memory._record_memory_history(enabled='all', context='alloc', stacks='python',
                                                 max_entries=1_000_000)


def write_events(torch, st):
    """EVENTS: the events so far, written once as tools/nanogpt-probe's run_train_expandable.py writes them, to lay
    beside vramfit's request stream (docs/allocation-order.md §7); recording stops. The probes call it at step 4's
    zero_grad (setup, the first losses, steps 0-3, the first evaluation) and at the end."""
    import json, os
    path = os.environ.get('EVENTS')
    if not path or st.get('events_written'):
        return
    st['events_written'] = True
    trace = torch.cuda.memory._snapshot()['device_traces'][0]
    with open(path, 'w') as f:
        json.dump({'allocator': 'default', 'events': [{'a': e['action'], 'addr': e.get('addr'), 'size': e.get('size'),
                                                      't': e.get('time_us')} for e in trace]}, f)
    torch.cuda.memory._record_memory_history(enabled=None)

