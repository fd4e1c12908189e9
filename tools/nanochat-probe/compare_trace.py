"""Lay a real allocator trace beside vramfit's own request stream for the same run, to find where they part.

  cargo run --release -p estimator --example dump_nanochat -- --gpu=h200 <base_train.py flags> --allocator=default \
      > /tmp/model.txt
  python3 tools/nanochat-probe/compare_trace.py segments data/traces/NAME-events.json.gz /tmp/model.txt
  python3 tools/nanochat-probe/compare_trace.py requests data/traces/NAME-events.json.gz /tmp/model.txt [MIN_MIB]
  python3 tools/nanochat-probe/compare_trace.py live data/traces/NAME-events.json.gz REQUEST

`segments`: every cudaMalloc of the run (`s` events, with the request that caused it and its allocating line) beside
every growth of vramfit's reserve (with the tensor and the stretch), in order; `<<` marks the first rows whose sizes
differ. Under the default allocator reserve only grows, so the first such row is where the layouts part.
`requests`: the two streams of requests above MIN_MIB (default 1) diffed by size (difflib), so a run of kernels the
model leaves out (an autotuner's copies, a kernel it does not time) shows as one insert or delete.
`live`: what the run held, segment by segment, just before its REQUEST-th allocation (1-based, as the other two
print them): which blocks keep a large segment split when a request finds no room.

Traces: tools/nanochat-probe/trace_events.py's format (`events`: [action, addr, size, t_us, site], `sites`).
dump_nanochat's lines: `index a|f bytes tensor allocated reserved token`, and `# phase stage micro` marks.
Written for docs/allocation-order.md §18 (stop 63).
"""
import difflib
import gzip
import json
import sys

MIB = 1 << 20


def load(path):
    d = json.load(gzip.open(path))
    return d['events'], d.get('sites', [])


def site(sites, i, width=70):
    return sites[i][-width:] if i >= 0 else ''


def model_lines(path):
    """(kind, bytes, tensor, reserved_after, stretch) per event of a dump_nanochat listing."""
    stretch = ''
    for line in open(path):
        if line.startswith('#'):
            stretch = line[2:].strip()
            continue
        p = line.split()
        if len(p) >= 6 and p[1] in ('a', 'f'):
            yield p[1], int(p[2]), p[3], int(p[5]), stretch


def segments(trace, model):
    events, sites = load(trace)
    real = []
    for i, e in enumerate(events):
        if e[0] == 's':
            cause = next((x for x in events[i + 1:i + 4] if x[0] == 'a'), None)
            real.append((e[2], cause[2] if cause else 0, site(sites, cause[4]) if cause else ''))
    ours, prev = [], 0
    for kind, size, tensor, reserved, stretch in model_lines(model):
        if reserved > prev:
            ours.append((reserved - prev, size, f'{tensor} | {stretch}'))
        prev = max(prev, reserved)
    print(f'segments: trace {len(real)} ({sum(r[0] for r in real) / MIB:.0f} MiB), '
          f'vramfit {len(ours)} ({sum(o[0] for o in ours) / MIB:.0f} MiB)')
    blank = (0, 0, '')
    for i in range(max(len(real), len(ours))):
        a = real[i] if i < len(real) else blank
        b = ours[i] if i < len(ours) else blank
        mark = '' if a[0] == b[0] else '  <<'
        print(f'{i:4d} {a[0] / MIB:8.1f} {a[1] / MIB:8.2f} {a[2]:70s} || {b[0] / MIB:8.1f} {b[1] / MIB:8.2f} {b[2]}{mark}')


def requests(trace, model, min_mib=1.0):
    events, sites = load(trace)
    floor = min_mib * MIB
    real, n = [], 0
    for e in events:
        if e[0] == 'a':
            n += 1
            if e[2] > floor:
                real.append((e[2], f'#{n} {site(sites, e[4], 60)}'))
    ours = [(size, f'{tensor} | {stretch}') for kind, size, tensor, _, stretch in model_lines(model)
            if kind == 'a' and size > floor]
    matcher = difflib.SequenceMatcher(None, [r[0] for r in real], [o[0] for o in ours], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == 'equal':
            print(f'= {i2 - i1} alike (trace {real[i1][1][:40]} .. vramfit {ours[j1][1][:50]})')
            continue
        print(op)
        for size, where in real[i1:i2]:
            print(f'   trace   {size / MIB:9.2f} {where}')
        for size, where in ours[j1:j2]:
            print(f'   vramfit {size / MIB:9.2f} {where}')


def live(trace, request):
    events, sites = load(trace)
    segs, held, n = [], {}, 0
    for e in events:
        action, addr, size = e[0], e[1], e[2]
        if action == 's':
            segs.append((addr, size))
        elif action == 'a':
            n += 1
            if n == request:
                break
            held[addr] = (size, n, site(sites, e[4], 45))
        elif action == 'f':
            held.pop(addr, None)
    for k, (start, size) in enumerate(segs):
        inside = sorted((a, v) for a, v in held.items() if start <= a < start + size)
        used = sum(v[0] for _, v in inside)
        if not inside:
            continue
        blocks = '; '.join(f'+{(a - start) / MIB:.2f}:{v[0] / MIB:.2f}@{v[1]} {v[2]}' for a, v in inside)
        print(f'S{k} {size / MIB:.0f} MiB, {used / MIB:.2f} held: {blocks}')


if __name__ == '__main__':
    if len(sys.argv) < 4 or sys.argv[1] not in ('segments', 'requests', 'live'):
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'segments':
        segments(*args[:2])
    elif cmd == 'requests':
        requests(args[0], args[1], float(args[2]) if len(args) > 2 else 1.0)
    else:
        live(args[0], int(args[1]))
