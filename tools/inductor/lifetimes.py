#!/usr/bin/env python3
"""How long each storage of a compiled graph lives in vramfit against the wrapper Inductor generated for it.

A development aid for writing a compiled program's sequence from the generated code (docs/allocation-order.md §15).
The wrapper's side: every storage `call()` allocates (`empty_strided_cuda`, and the outputs an extern op such as
SDPA's backward allocates itself, in their order), followed through its reuses (`bufN = reinterpret_tensor(bufM, ...);
del bufM  # reuse`) to the `del` that frees it. vramfit's side: the requests and frees of one marked stretch of
`dump_events`' output (a free names the storage's first tensor, as the wrapper's reuse chains do). Storages of at
least --min-bytes are paired in allocation order (aligned by size where the counts differ), and for each pair whose
death falls at a different place (counted in the paired allocations before it) a line is printed: a storage handed on
to another buffer in one and freed in the other, or two storages of one size that swap roles.

usage: target/release/examples/dump_events --program=nanochat ARGS > /tmp/d.txt
       tools/inductor/lifetimes.py MODULE.py /tmp/d.txt ['TrainSteady) backward'] [--min-bytes N]
(MODULE.py: the graph's module from data/inductor/*.tgz, the one with `def call(`; the stretch: a substring of the
marks' lines, its first occurrence.) The last line: storages compared, and how many die elsewhere.
"""
import argparse
import difflib
import re

from wrapper_allocations import ALLOC, DEL, REUSE, storage_bytes

SDPA_BACKWARD = re.compile(r'^\s*(\w+) = torch\.ops\.aten\._scaled_dot_product_\w+_backward\.default\('
                           r'reinterpret_tensor\(\w+, \(([^)]*)\), \(([^)]*)\)')
OUTPUT = re.compile(r'^\s*(\w+) = (\w+)\[(\d+)\]\s*$')


def wrapper_stream(text):
    """('a', bytes, storage) and ('f', bytes, storage) in call()'s order."""
    body = text[text.index('def call('):]
    names, sizes, pending, out = {}, {}, {}, []
    ints = lambda s: [int(x) for x in s.split(',') if x.strip()]
    for line in body.splitlines():
        if m := ALLOC.match(line):
            s = len(sizes)
            sizes[s] = storage_bytes(ints(m.group(2)), ints(m.group(3)), m.group(4))
            names[m.group(1)] = s
            out.append(('a', sizes[s], s))
        elif m := SDPA_BACKWARD.match(line):
            # dq, dk, dv: shaped like the output gradient it is given, 16-bit as q is
            b = storage_bytes(ints(m.group(2)), ints(m.group(3)), 'bfloat16')
            pending[m.group(1)] = []
            for _ in range(3):
                s = len(sizes)
                sizes[s] = b
                pending[m.group(1)].append(s)
                out.append(('a', b, s))
        elif (m := OUTPUT.match(line)) and m.group(2) in pending:
            names[m.group(1)] = pending[m.group(2)][int(m.group(3))]
        elif m := REUSE.match(line):
            if m.group(3) in names:
                names[m.group(1)] = names.pop(m.group(3))
        elif m := DEL.match(line):
            if m.group(1) in names:
                s = names.pop(m.group(1))
                if s not in names.values():
                    out.append(('f', sizes[s], s))
    return out


def model_stream(dump, stretch):
    """The same from dump_events' lines `N a BYTES TERM ID …` and `N f 0 TERM ID …` within the stretch."""
    sizes, out, inside, seen = {}, [], False, False
    for line in open(dump):
        if line.startswith('#'):
            inside = stretch in line and not seen
            seen = seen or inside
            continue
        p = line.split()
        if p[1] == 'a':
            sizes[p[4]] = int(p[2])
        if inside:
            out.append((p[1], sizes.get(p[4], 0), p[4]))
    return out


def deaths(stream, min_bytes):
    """The storages of at least min_bytes in allocation order, and each one's death: the count of them allocated
    before it was freed (None: alive at the stretch's end, or made before it)."""
    order, death, n = [], {}, 0
    for kind, b, s in stream:
        if b < min_bytes:
            continue
        if kind == 'a':
            order.append((b, s))
            n += 1
        elif s not in death:
            death[s] = n
    return order, death


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('module')
    ap.add_argument('dump')
    ap.add_argument('stretch', nargs='?', default='TrainSteady) backward')
    ap.add_argument('--min-bytes', type=int, default=1 << 20)
    a = ap.parse_args()
    w_order, w_death = deaths(wrapper_stream(open(a.module).read()), a.min_bytes)
    m_order, m_death = deaths(model_stream(a.dump, a.stretch), a.min_bytes)
    match = difflib.SequenceMatcher(None, [b for b, _ in m_order], [b for b, _ in w_order], autojunk=False)
    pairs = [p for tag, i1, i2, j1, j2 in match.get_opcodes() if tag == 'equal'
             for p in zip(range(i1, i2), range(j1, j2))]
    m_to_w = dict(pairs)
    differ = 0
    for i, j in pairs:
        dm, dw = m_death.get(m_order[i][1]), w_death.get(w_order[j][1])
        # the model's death, in the wrapper's count: the paired allocation before it
        k = dm
        while k is not None and k > 0 and (k - 1) not in m_to_w:
            k -= 1
        dm_w = None if k is None else (m_to_w[k - 1] + 1 if k > 0 else 0)
        if dm_w != dw:
            differ += 1
            print(f'{m_order[i][0] / 2**20:8.2f} MiB  allocation {j} (vramfit tensor {m_order[i][1]}): '
                  f'dies before allocation {dm_w} in vramfit, {dw} in the wrapper')
    print(f'# {len(pairs)} storages paired of {len(m_order)} (vramfit) and {len(w_order)} (wrapper); '
          f'{differ} die elsewhere')


if __name__ == '__main__':
    main()
