"""Allocator-trace helpers for the nanochat probe (pure Python, no torch needed for `summary`).

  python3 trace_tools.py slim IN.pkl OUT.pkl.gz   keep only informative python frames (nanochat/, scripts/,
                                                  probe, Inductor output code, top frame) -> gzip pickle
  python3 trace_tools.py summary RUN.json TRACE.pkl.gz [more traces...]
      RUN.json: the probe's RESULT record (with `mark_times_us`); prints, for each phase window, the peak of the
      replayed live bytes and the live allocations at that peak grouped by (size, allocation site).
Snapshots come from torch.cuda.memory._snapshot() after _record_memory_history(context='all', stacks='python').
"""
import gzip, json, pickle, sys
from collections import defaultdict

KEEP = ('/nanochat/', '/scripts/', 'run_base', 'run_core', 'run_sft', 'torchinductor', 'output_code',
        '/_inductor/', '/optim.py')


def slim_frames(frames, k=8):
    if not frames:
        return []
    out = [frames[0]]
    for f in frames[1:]:
        fn = f.get('filename', '')
        if any(s in fn for s in KEEP):
            out.append(f)
        if len(out) >= k:
            break
    return [{'filename': f.get('filename', ''), 'line': f.get('line'), 'name': f.get('name')} for f in out]


def slim(src, dst):
    with open(src, 'rb') as f:
        s = pickle.load(f)
    for seg in s.get('segments', []):
        for b in seg.get('blocks', []):
            b['frames'] = slim_frames(b.get('frames'))
    for dev in s.get('device_traces', []):
        for e in dev:
            e['frames'] = slim_frames(e.get('frames'))
    with gzip.open(dst, 'wb') as f:
        pickle.dump(s, f)


def site(frames):
    fr = [f for f in frames if any(k in f['filename'] for k in ('/nanochat/', '/scripts/', 'torchinductor', 'output_code'))]
    fr = fr or frames
    return ' <- '.join(f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for f in fr[:3])


def replay(entries, t_windows):
    """Return, per window (t0,t1), (peak_bytes, live set at peak)."""
    live, total = {}, 0
    res = [[-1, None, None] for _ in t_windows]
    free_action = 'free_completed' if any(e['action'] == 'free_completed' for e in entries) else 'free_requested'
    for i, e in enumerate(entries):
        a = e['action']
        if a == 'alloc':
            live[e['addr']] = (e['size'], e.get('frames', []), e.get('time_us'))
            total += e['size']
        elif a == free_action:
            v = live.pop(e['addr'], None)
            if v:
                total -= v[0]
        else:
            continue
        t = e.get('time_us', 0)
        for w, (t0, t1) in enumerate(t_windows):
            if t0 <= t <= t1 and total > res[w][0]:
                res[w][0] = total
                res[w][1] = dict(live)
                res[w][2] = i
    return res


def group(live):
    g = defaultdict(lambda: [0, 0])
    for size, frames, _ in live.values():
        k = (size, site(frames))
        g[k][0] += 1
        g[k][1] += size
    return sorted(((v[1], v[0], k[0], k[1]) for k, v in g.items()), reverse=True)


def summary(run_json, paths, top=40):
    rec = json.load(open(run_json))
    marks = rec['mark_times_us']  # [(phase, t_us)]
    windows, names = [], []
    prev = rec.get('start_time_us', 0)
    for ph, t in marks:
        windows.append((prev, t)); names.append(ph); prev = t
    out = {}
    for p in paths:
        with gzip.open(p, 'rb') as f:
            s = pickle.load(f)
        entries = s['device_traces'][0]
        res = replay(entries, windows)
        o = []
        for (ph, (t0, t1)), (pk, live, idx) in zip(zip(names, windows), res):
            if live is None:
                o.append({'phase': ph, 'peak_replayed': None}); continue
            o.append({'phase': ph, 'peak_replayed': pk, 'n_live': len(live),
                      'groups': [{'bytes': b, 'count': c, 'size': sz, 'site': st} for b, c, sz, st in group(live)[:top]]})
        out[p] = o
    return out


if __name__ == '__main__':
    if sys.argv[1] == 'slim':
        slim(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == 'summary':
        print(json.dumps(summary(sys.argv[2], sys.argv[3:]), indent=1))
