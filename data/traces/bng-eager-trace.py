"""How data/traces/bng-eager-segments.json was taken (issue 27). Runs tools/build-nanogpt-probe/run_train.py (build-nanogpt train_gpt2.py, eager) with the CUDA caching
allocator's history recorded; write a compact trace: events [action, addr, size] with action
s=segment_alloc S=segment_free a=alloc f=free_completed o=oom, and marks (every phase boundary of the
probe: name, index of the first event after it, allocated, reserved, max_reserved since the last mark).
usage: python3 data/traces/bng-eager-trace.py OUTFILE.json.gz NAME B T TOTAL_BATCH USE_COMPILE
env: BNG=<build-nanogpt checkout at 6104ab1> (default <repo>/.bng), NOEXTRA=1 skips HellaSwag and sampling.
The device call ran, from the repository root: e.g.
  python3 data/traces/bng-eager-trace.py /tmp/tr/e_b8_t1024_ga1.json.gz e_b8_t1024_ga1 8 1024 8192 0
  NOEXTRA=1 python3 data/traces/bng-eager-trace.py /tmp/tr/e_b8_t1024_ga1_noextra.json.gz e_b8_t1024_ga1 8 1024 8192 0
  (likewise B=8 TOTAL_BATCH=32768, B=32 32768, B=64 524288, B=56 458752)
The full traces stayed off the repository; the summary was written from them."""
import gzip, json, os, sys, time
out_path = sys.argv[1]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
os.environ.setdefault('BNG', os.path.join(ROOT, '.bng'))
import torch
torch.cuda.memory._record_memory_history(enabled='all', context=None, stacks='python', max_entries=5_000_000)
marks = []
_reset = torch.cuda.reset_peak_memory_stats
def reset(*a, **k):
    f = sys._getframe(1)
    name = f.f_locals.get('new', '?') if f.f_code.co_name == 'enter' else 'start'
    torch.cuda.synchronize()
    marks.append({'tag': name, 't_us': time.time() * 1e6, 'alloc': torch.cuda.memory_allocated(),
                  'reserved': torch.cuda.memory_reserved(), 'max_reserved': torch.cuda.max_memory_reserved(),
                  'max_alloc': torch.cuda.max_memory_allocated()})
    return _reset(*a, **k)
torch.cuda.reset_peak_memory_stats = reset
PROBE = os.path.join(ROOT, 'tools', 'build-nanogpt-probe', 'run_train.py')
src = open(PROBE).read()
if os.environ.get('NOEXTRA') == '1':
    old = "       ('torch.save(checkpoint, checkpoint_path)', 'pass')]"
    assert src.count(old) == 1
    src = src.replace(old, "       ('torch.save(checkpoint, checkpoint_path)', 'pass'),\n"
                      "       ('if (step % 250 == 0 or last_step) and (not use_compile):', 'if False:'),\n"
                      "       ('if ((step > 0 and step % 250 == 0) or last_step) and (not use_compile):', 'if False:')]")
sys.argv = ['run_train.py'] + sys.argv[2:]
g = {'__name__': '__main__', '__file__': os.path.abspath(PROBE)}
try:
    exec(compile(src, 'run_train.py', 'exec'), g)
finally:
    snap = torch.cuda.memory._snapshot()
    tr = snap['device_traces'][0]
    code = {'segment_alloc': 's', 'segment_free': 'S', 'alloc': 'a', 'free_completed': 'f', 'oom': 'o'}
    ev, times = [], []
    for e in tr:
        c = code.get(e['action'])
        if c:
            ev.append([c, e['addr'], e['size']]); times.append(e['time_us'])
    import bisect
    for m in marks:
        m['at'] = bisect.bisect_right(times, m['t_us'])
    segs_at_end = [{'address': s['address'], 'total_size': s['total_size'], 'allocated_size': s['allocated_size'],
                    'is_large': s['segment_type'] == 'large' if 'segment_type' in s else None,
                    'blocks': [[b['size'], b['state']] for b in s['blocks']]} for s in snap['segments']]
    with gzip.open(out_path, 'wt') as fh:
        json.dump({'name': sys.argv[1], 'argv': sys.argv[1:], 'noextra': os.environ.get('NOEXTRA') == '1',
                   'gpu': torch.cuda.get_device_name(), 'torch': torch.__version__, 'marks': marks,
                   'events': ev, 'segments_at_end': segs_at_end}, fh)
    print('TRACE', out_path, len(ev), 'events', sum(1 for e in ev if e[0] == 's'), 'segments', flush=True)
