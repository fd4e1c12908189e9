"""Inductor's buffer-reuse planning rebuilt from a generated wrapper, checked against a logged run (issue 27, stop 62).

    python3 replay_reuse.py WRAPPER.py RUN.reuse.jsonl GRAPH   [--nodes]

WRAPPER.py is one graph's generated module (its `call()`); RUN.reuse.jsonl what log_reuse_decisions.py wrote for the
run that made it; GRAPH the graph's number in that log (0 = the first compiled). The script rebuilds PyTorch 2.11's
`estimate_peak_memory` (torch/_inductor/memory.py) over the wrapper's nodes (one per kernel or extern call) and
replays `memory_plan_reuse` (codegen/wrapper.py) with `should_reuse_buffer`, then prints the estimate's overall peak
beside the logged one and every reuse the wrapper made through its pool beside the one the replay makes. The rules it
follows, each of which the logged estimate needed:

* a buffer counts from the node that makes it through the last node that reads it; a graph output from its node on,
  and its bytes are taken off from step 0 (`memory[end_step + 1]` with `end_step = -1`), so before it exists the
  estimate is that much lower (an eval graph returning GPT-2's fp32 logits estimates its peak at 6 MiB);
* a reuse code generation makes in place (the kernel writes its output into an input it reads last, `buf16 =
  buf15; del buf15  # reuse` with no planner decision) is two buffers to the estimate at that node: the old one is
  read there, the new one made there;
* an extern op's node holds its outputs' bytes; each output is its own buffer after that, and joins the pool when it
  dies;
* a freed buffer joins a pool keyed by size and dtype (a stack); an allocation takes the top one if the two nodes are
  adjacent or if its size plus the peak of the nodes strictly between — floored at 0, as the segment tree's `max`
  starts there — is at most the overall peak (itself floored at 0); a refused one goes back on top; a reuse raises
  the nodes between by its size.

Which reuses were in place is read from the log (the reuses no `should_reuse_buffer` call made). Buffers fused away
(LayerNorm statistics, 64 KiB each here) are counted by the estimate at their node but are not in the wrapper, and
extern outputs are sized as 4-byte elements: the rebuilt estimate can differ from the logged one by those bytes.
On the three eval graphs of tools/inductor/device_call_reuse_log.sh (data/inductor/reuse-logs/) every pool reuse is
the wrapper's.
"""
import json
import re
import sys

from wrapper_allocations import ALLOC, REUSE, storage_bytes


def ints(s):
    return [int(x) for x in s.split(',') if x.strip()]


def read_wrapper(path):
    """The call() body as a list of events: ('alloc', name), ('reuse', new, old), ('child', name, parent),
    ('call', names read, name an op returns), with each buffer's bytes and dtype."""
    src = open(path).read()
    body = src[src.index('def call(self, args)'):]
    size, dtype, events = {}, {}, []
    for line in (s.strip() for s in body.split('\n')):
        m = ALLOC.match(line)
        if m:
            size[m[1]], dtype[m[1]] = storage_bytes(ints(m[2]), ints(m[3]), m[4]), m[4]
            events.append(('alloc', m[1]))
            continue
        m = REUSE.match(line)
        if m and m[3] in size:
            size[m[1]], dtype[m[1]] = size[m[3]], dtype.get(m[3])
            events.append(('reuse', m[1], m[3]))
            continue
        m = re.match(r'(buf\d+) = (buf\d+)\[(\d+)\]', line)
        if m:
            events.append(('child', m[1], m[2]))
            continue
        m = re.match(r'assert_size_stride\((buf\d+), \(([^)]*)\), \(([^)]*)\)', line)
        if m and m[1] not in size:
            size[m[1]] = storage_bytes(ints(m[2]), ints(m[3]), 'float32')
            continue
        if '.run(' in line or line.startswith('extern_kernels.') or 'torch.ops.' in line:
            op = re.match(r'(buf\d+) = torch\.ops', line)
            events.append(('call', set(re.findall(r'\bbuf\d+\b', line)), op[1] if op else None))
    ret = re.search(r'\n\s*return \((.*)\)\s*\n', body)
    outputs = set(re.findall(r'buf\d+', ret[1])) if ret else set()
    return events, size, dtype, outputs


def logged(path, graph):
    """The log's record of graph number `graph` and the decisions made while planning it."""
    recs = [json.loads(line) for line in open(path)]
    starts = [i for i, r in enumerate(recs) if r.get('graph')]
    decisions = []
    for r in recs[starts[graph] + 1:]:
        if r.get('graph'):
            break
        decisions.append(r)
    return recs[starts[graph]], decisions


def main():
    wrapper, log, graph = sys.argv[1], sys.argv[2], int(sys.argv[3])
    events, size, dtype, outputs = read_wrapper(wrapper)
    record, decisions = logged(log, graph)
    pooled = {(d['alloc'], d['free']) for d in decisions if d['ok']}
    in_place = {e[1]: e[2] for e in events if e[0] == 'reuse' and (e[1], e[2]) not in pooled}

    # nodes: a buffer made before a call belongs to that call's node
    made, last_read, parent, took = {}, {}, {}, {}
    node, pending = 0, []
    for e in events:
        if e[0] in ('alloc', 'reuse'):
            pending.append(e)
        elif e[0] == 'child':
            parent[e[1]] = e[2]
            made[e[1]] = node - 1
            last_read.setdefault(e[1], node - 1)
        elif e[0] == 'call':
            for p in pending:
                made[p[1]] = node
                if p[0] == 'reuse':
                    took[p[1]] = p[2]
            for name in e[1]:
                last_read[name] = node
                # written in place here: the old buffer is read here too
                if name in in_place and any(p[1] == name for p in pending):
                    last_read[in_place[name]] = node
            pending = []
            if e[2]:
                made[e[2]] = node
            node += 1
    nodes = node
    has_children = set(parent.values())

    # the estimate at each node
    delta = [0] * (nodes + 2)
    for b, k in made.items():
        if b in has_children:
            alloc, free = sum(size.get(c, 0) for c, p in parent.items() if p == b), 0
        elif b in parent:
            alloc, free = 0, size.get(b, 0)
        else:
            alloc = free = size.get(b, 0)
        end = -1 if b in outputs else max(last_read.get(b, k), k)
        delta[k] += alloc
        delta[end + 1] -= free
    mems, now = [], 0
    for t in range(nodes + 1):
        now += delta[t]
        mems.append(now)
    overall = max([0] + mems)
    print(f'nodes {nodes} (logged {len(record["nodes"])}); overall peak {overall / 2**20:.3f} MiB '
          f'(logged {record["peak"] / 2**20:.3f})')
    if '--nodes' in sys.argv:
        for i in range(nodes):
            print(f'  {i:4d} {mems[i] / 2**20:10.3f} {record["mems"][i] / 2**20:10.3f}')

    # the planner
    frees = {}
    for b, k in made.items():
        if b in outputs or b in has_children or b in in_place.values():
            continue
        frees.setdefault(max(last_read.get(b, k), k), []).append(b)
    allocs = {}
    for e in events:
        if e[0] in ('alloc', 'reuse'):
            allocs.setdefault(made[e[1]], []).append(e[1])
    pool, replayed, held = {}, {}, list(mems)
    for k in range(nodes):
        for b in allocs.get(k, []):
            if b in in_place:
                continue
            stack = pool.get((size[b], dtype.get(b)))
            if not stack:
                continue
            old, freed_at = stack.pop()
            if freed_at + 1 == k or size[b] + max([0] + held[freed_at + 1:k]) <= overall:
                replayed[b] = old
                for t in range(freed_at + 1, k):
                    held[t] += size[b]
            else:
                stack.append((old, freed_at))
        # a node's dead buffers are pooled in the order of their names (`free_buffers` sorts them)
        for b in sorted(frees.get(k, []), key=lambda n: int(n[3:])):
            pool.setdefault((size[b], dtype.get(b)), []).append((b, k))
    made_by_pool = {b: o for b, o in took.items() if b not in in_place}
    same = sum(replayed.get(b) == o for b, o in made_by_pool.items())
    print(f'pool reuses: the wrapper {len(made_by_pool)}, the replay {len(replayed)}, the same {same}')
    for b in sorted(set(made_by_pool) | set(replayed), key=lambda n: int(n[3:])):
        if made_by_pool.get(b) != replayed.get(b):
            print(f'  {b}: the wrapper took {made_by_pool.get(b)}, the replay {replayed.get(b)}')


if __name__ == '__main__':
    main()
