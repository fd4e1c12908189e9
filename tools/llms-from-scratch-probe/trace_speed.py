"""Allocator traces of run_speed.py's traced runs (pure Python: no torch needed).

  python3 trace_speed.py convert SNAP.pkl RECORD.json OUTDIR NAME
      SNAP.pkl: torch.cuda.memory._snapshot() pickled by run_speed.py --trace; RECORD.json: that run's RESULT record.
      Writes OUTDIR/NAME-events.json.gz in the format of tools/nanochat-probe/trace_events.py (and data/README.md's
      traces): {"events": [[action, addr, size, t_us, site], ...], "sites": [...]}, actions a alloc, f free
      requested, F free completed, s/S segment alloc/free, m/u expandable pages mapped/unmapped, o OOM; `site`
      indexes "sites" (allocations; -1 otherwise): the first three informative Python frames, innermost first
      (the script, Inductor's output code -- with the allocating line's text --, torch/optim, autograd), or
      "<no python frames>" (the eager autograd engine's C++ thread); plus "name", "marks" (the record's), and
      "start_time_us". Also OUTDIR/NAME-slim.pkl.gz (the snapshot with frames cut to the informative ones),
      OUTDIR/NAME-code.tar.gz (the Inductor output-code files the frames name) and OUTDIR/NAME-summary.json.
  python3 trace_speed.py pack OUTDIR NAME TAR   one tar of OUTDIR/NAME-* under 15.5 MiB (for $OUT)
  python3 trace_speed.py summary EVENTS.json.gz [TOP]
      Replays the events (alloc / free requested: what torch.cuda.memory_allocated counts) and prints, per phase
      window of the record's marks, the replayed peak (checked against the measured peak of that window), and for
      the main windows the live allocations at that peak grouped by (size, site).
"""
import gzip, io, json, linecache, os, pickle, sys, tarfile
from collections import defaultdict

CODE = {'alloc': 'a', 'free_requested': 'f', 'free_completed': 'F', 'segment_alloc': 's', 'segment_free': 'S',
        'segment_map': 'm', 'segment_unmap': 'u', 'oom': 'o'}
KEEP = ('10_llm-training-speed', 'spdcache', 'torchinductor', 'output_code', '/torch/optim/', '/torch/autograd/',
        '/torch/_functorch/', 'run_speed', '/torch/nn/parallel/')


def informative(frames):
    return [f for f in frames if any(k in f.get('filename', '') for k in KEEP)]


def site(frames, code_dir=None):
    if not frames:
        return '<no python frames>'
    fr = [f for f in frames if any(k in f.get('filename', '') for k in ('10_llm-training-speed', 'spdcache'))]
    fr = fr or informative(frames) or frames
    out = []
    for f in fr[:3]:
        fn = f.get('filename', '')
        s = f"{fn.split('/')[-1]}:{f.get('line')}:{f.get('name')}"
        if code_dir and fn.startswith(code_dir):
            txt = linecache.getline(fn, f.get('line') or 0).strip()
            if txt:
                s += ' [' + txt[:160] + ']'
        out.append(s)
    return ' <- '.join(out)


def convert(snap_path, rec_path, outdir, name):
    with open(snap_path, 'rb') as f:
        snap = pickle.load(f)
    rec = json.load(open(rec_path))
    code_dir = rec.get('inductor_cache', {}).get('dir')
    dev = rec.get('device_index')  # the run's own device (torchrun: rank r's); else the first with events
    if dev is None or dev >= len(snap['device_traces']) or not snap['device_traces'][dev]:
        dev = next(i for i, d in enumerate(snap['device_traces']) if d) if any(snap['device_traces']) else 0
    sites, index, events, files = [], {}, [], set()
    for e in snap['device_traces'][dev]:
        code = CODE.get(e['action'])
        if not code:
            continue
        s = -1
        if code == 'a':
            frames = e.get('frames') or []
            for fr in frames:
                if code_dir and fr.get('filename', '').startswith(code_dir):
                    files.add(fr['filename'])
            nm = site(frames, code_dir)
            s = index.setdefault(nm, len(sites))
            if s == len(sites):
                sites.append(nm)
        events.append([code, e.get('addr') or 0, e.get('size') or 0, e.get('time_us') or 0, s])
    os.makedirs(outdir, exist_ok=True)
    ev = {'name': name, 'start_time_us': rec.get('start_time_us'), 'marks': rec.get('marks'),
          'measured_phases': rec.get('phases'), 'events': events, 'sites': sites}
    with gzip.open(os.path.join(outdir, f'{name}-events.json.gz'), 'wt') as f:
        json.dump(ev, f)
    with tarfile.open(os.path.join(outdir, f'{name}-code.tar.gz'), 'w:gz') as t:
        for fn in sorted(files):
            if os.path.exists(fn):
                t.add(fn, arcname=os.path.relpath(fn, code_dir))
    for seg in snap.get('segments', []):
        for b in seg.get('blocks', []):
            b['frames'] = informative(b.get('frames') or [])[:8]
    for d in snap.get('device_traces', []):
        for e in d:
            e['frames'] = informative(e.get('frames') or [])[:8]
    with gzip.open(os.path.join(outdir, f'{name}-slim.pkl.gz'), 'wb') as f:
        pickle.dump(snap, f)
    summ = summary_of(ev)
    with open(os.path.join(outdir, f'{name}-summary.json'), 'w') as f:
        json.dump(summ, f, indent=1)
    print(name, 'events', len(events), 'sites', len(sites), 'code files', len(files))


def block_sizes(events):
    """The caching allocator's block size of each allocation (events index -> bytes): trace allocations carry the
    requested size, torch.cuda.memory_allocated counts blocks (requests rounded up to 512 B; a free block is not split
    when what would remain is < 512 B (small pool, requests <= 1 MiB) or <= 1 MiB (large pool), so the allocation takes
    all of it). Replays the segments' blocks from the segment / alloc / free-completed events (default allocator)."""
    seg_of, blocks, out = {}, {}, {}
    import bisect
    starts = []  # sorted segment start addresses

    def seg(addr):
        i = bisect.bisect_right(starts, addr) - 1
        return starts[i] if i >= 0 else None

    for k, (a, addr, size, t, s) in enumerate(events):
        if a == 's':
            bisect.insort(starts, addr)
            seg_of[addr] = size
            blocks[addr] = {addr: [size, False]}
        elif a == 'S':
            i = bisect.bisect_left(starts, addr)
            if i < len(starts) and starts[i] == addr:
                starts.pop(i)
            blocks.pop(addr, None)
        elif a == 'a':
            g = seg(addr)
            b = blocks.get(g, {}).get(addr)
            if b is None or b[1]:
                out[k] = max(512, -(-size // 512) * 512)  # unknown block: the rounded request
                continue
            r = max(512, -(-size // 512) * 512)
            rem = b[0] - r
            split = rem >= 512 if size <= 2 ** 20 else rem > 2 ** 20
            if split:
                blocks[g][addr + r] = [rem, False]
                b[0] = r
            b[1] = True
            out[k] = b[0]
        elif a == 'F':
            g = seg(addr)
            bl = blocks.get(g)
            if not bl or addr not in bl:
                continue
            bl[addr][1] = False
            keys = sorted(bl)
            i = keys.index(addr)
            if i + 1 < len(keys) and not bl[keys[i + 1]][1] and addr + bl[addr][0] == keys[i + 1]:
                bl[addr][0] += bl.pop(keys[i + 1])[0]
            if i > 0 and not bl[keys[i - 1]][1] and keys[i - 1] + bl[keys[i - 1]][0] == addr:
                bl[keys[i - 1]][0] += bl.pop(addr)[0]
    return out


def summary_of(ev, top=25):
    marks, t_start = ev['marks'], ev['start_time_us']
    # window k: phase marks[k][0] (step marks[k][1]) from the previous mark (or the start) to marks[k]
    wins, prev = [], t_start
    for m in marks:
        wins.append((m[0], m[1], prev, m[2], m[3]))
        prev = m[2]
    measured = {i: p[3] for i, p in enumerate(ev.get('measured_phases') or [])}
    events, sites = ev['events'], ev['sites']
    live, total, w = {}, 0, 0
    res = [[-1, None] for _ in wins]
    at_mark = [None] * len(wins)
    main = {'fwd', 'bwd', 'opt', 'eval_train', 'eval_val', 'generate', 'setup'}
    last_step = max([m[1] for m in marks if m[0] == 'opt'] or [0])
    want = [x[0] in main and (x[1] in (None, 0, 1, last_step) or x[0] in ('eval_train', 'eval_val', 'generate'))
            for x in wins]
    bsz = block_sizes(events)
    for k, (a, addr, size, t, s) in enumerate(events):
        if a == 'a':
            size = bsz.get(k, size)
        while w < len(wins) and t > wins[w][3]:
            at_mark[w] = total
            w += 1
            if w < len(wins):  # a window's peak starts at what is allocated when it begins
                res[w][0] = total
                if want[w]:
                    res[w][1] = dict(live)
        if a == 'a':
            live[addr] = (size, s, events[k][2])
            total += size
        elif a == 'f':
            v = live.pop(addr, None)
            if v:
                total -= v[0]
        else:
            continue
        if w < len(wins) and total > res[w][0]:
            res[w][0] = total
            if want[w]:
                res[w][1] = dict(live)
    while w < len(wins):
        at_mark[w] = total
        w += 1
    out = []
    for k, (ph, step, t0, t1, alloc_mark) in enumerate(wins):
        pk, lv = res[k]
        o = {'phase': ph, 'step': step, 't0_us': t0, 't1_us': t1, 'peak_replayed': pk if pk >= 0 else None,
             'peak_measured': measured.get(k), 'allocated_at_end_replayed': at_mark[k],
             'allocated_at_end_measured': alloc_mark}
        if lv is not None:
            g = defaultdict(lambda: [0, 0])
            for size, s, req in lv.values():
                g[(req, s)][0] += 1
                g[(req, s)][1] += size
            o['n_live'] = len(lv)
            o['groups'] = [{'bytes': b, 'count': c, 'requested_size': sz, 'site': sites[s] if s >= 0 else None}
                           for (sz, s), (c, b) in sorted(g.items(), key=lambda kv: -kv[1][1])[:top]]
        out.append(o)
    return out


def pack(outdir, name, tar_path, limit=int(15.5 * 2 ** 20)):
    """Tar OUTDIR/NAME-* into TAR_PATH (one file for the device's $OUT); past `limit` bytes the slim snapshot,
    then the code files are left out (the events file and the summary always go)."""
    names = sorted(n for n in os.listdir(outdir) if n.startswith(name + '-'))
    for drop in ((), ('-slim.pkl.gz',), ('-slim.pkl.gz', '-code.tar.gz')):
        keep = [n for n in names if not any(n.endswith(d) for d in drop)]
        with tarfile.open(tar_path, 'w') as t:
            for n in keep:
                t.add(os.path.join(outdir, n), arcname=n)
        if os.path.getsize(tar_path) <= limit:
            break
    print('packed', tar_path, os.path.getsize(tar_path), keep)


if __name__ == '__main__':
    if sys.argv[1] == 'convert':
        convert(*sys.argv[2:6])
    elif sys.argv[1] == 'pack':
        pack(*sys.argv[2:5])
    elif sys.argv[1] == 'summary':
        with gzip.open(sys.argv[2], 'rt') as f:
            ev = json.load(f)
        print(json.dumps(summary_of(ev, int(sys.argv[3]) if len(sys.argv) > 3 else 25), indent=1))
