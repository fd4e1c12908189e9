"""An allocator snapshot (run_base.py TRACE=) as a compact event list, for replaying through vramfit's allocator
simulation and diffing against its own sequence.

  python3 trace_events.py SNAPSHOT.pkl OUT.json.gz

OUT: {"events": [[action, addr, size, t_us, site], ...], "sites": [...]}; actions as data/README.md's traces
(a alloc, f free requested, F free completed, s/S segment alloc/free, m/u expandable pages mapped/unmapped,
o OOM); `site` indexes "sites", the allocating line (trace_tools.site: the first nanochat/, scripts/ or Inductor
frames) for allocations, -1 otherwise.
"""
import gzip, json, pickle, sys

from trace_tools import site

CODE = {'alloc': 'a', 'free_requested': 'f', 'free_completed': 'F', 'segment_alloc': 's', 'segment_free': 'S',
        'segment_map': 'm', 'segment_unmap': 'u', 'oom': 'o'}


def main(src, dst):
    with open(src, 'rb') as f:
        snap = pickle.load(f)
    sites, index, events = [], {}, []
    for e in snap['device_traces'][0]:
        code = CODE.get(e['action'])
        if not code:
            continue
        s = -1
        if code == 'a':
            name = site(e.get('frames') or [])
            s = index.setdefault(name, len(sites))
            if s == len(sites):
                sites.append(name)
        events.append([code, e.get('addr') or 0, e.get('size') or 0, e.get('time_us') or 0, s])
    with gzip.open(dst, 'wt') as f:
        json.dump({'events': events, 'sites': sites}, f)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
