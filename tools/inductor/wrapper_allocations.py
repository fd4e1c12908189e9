#!/usr/bin/env python3
"""The allocation order of one compiled graph, read from the wrapper Inductor generated for it (data/inductor/*.tgz).

A development aid for writing a compiled program's sequence from what PyTorch runs (docs/allocation-order.md §10):
prints, in `call()`'s order, every buffer the wrapper allocates (`empty_strided_cuda`: its storage's bytes, from shape,
stride and dtype), every storage handed to a new buffer (`bufN = reinterpret_tensor(bufM, ...); del bufM  # reuse`),
every free of a buffer it allocated (`del bufN`, the storage's last name), every free of a graph input (`del
primals_*`/saved tensors: the caller may still hold them) and every extern op that allocates its own outputs (SDPA's
kernels: their outputs and workspaces come from the caching allocator, not from the wrapper).

usage: tools/inductor/wrapper_allocations.py MODULE.py [--min-bytes N]     (the module with `def call(`)
       tar xzf data/inductor/oc_ng_bf16_char_T256_B64.tgz -C /tmp/oc && grep -l 'def call(' -r /tmp/oc
"""
import argparse
import re

DTYPE_BYTES = {'float32': 4, 'float64': 8, 'bfloat16': 2, 'float16': 2, 'int64': 8, 'int32': 4, 'int8': 1,
               'uint8': 1, 'bool': 1, 'float8_e4m3fn': 1, 'float8_e5m2': 1}
ALLOC = re.compile(r'^\s*(\w+) = empty_strided_cuda\(\(([^)]*)\), \(([^)]*)\), torch\.(\w+)\)')
REUSE = re.compile(r'^\s*(\w+) = (?:reinterpret_tensor\()?(\w+)\b.*; del (\w+)\s+# reuse')
DEL = re.compile(r'^\s*del (\w+)\s*$')
OP = re.compile(r'^\s*(\w+) = torch\.ops\.aten\.(\w+)\.default\(')


def storage_bytes(shape, stride, dtype):
    """Bytes of the storage a strided tensor spans: one past its largest offset, in elements of `dtype`."""
    if not shape:
        return DTYPE_BYTES[dtype]
    if any(s == 0 for s in shape):
        return 0
    return (1 + sum((n - 1) * st for n, st in zip(shape, stride))) * DTYPE_BYTES[dtype]


def events(text):
    """(kind, name, bytes) in call()'s order: alloc, reuse (name takes the storage of the one deleted), free of a
    wrapper buffer, input_del, op (an extern op whose outputs the allocator serves)."""
    body = text[text.index('def call('):]
    storage = {}  # a live name -> (storage id, bytes)
    for line in body.splitlines():
        if m := ALLOC.match(line):
            ints = lambda s: [int(x) for x in s.split(',') if x.strip()]
            b = storage_bytes(ints(m.group(2)), ints(m.group(3)), m.group(4))
            storage[m.group(1)] = (m.group(1), b)
            yield 'alloc', m.group(1), b
        elif m := REUSE.match(line):
            new, old = m.group(1), m.group(3)
            if old in storage:
                storage[new] = storage.pop(old)
                yield 'reuse', f'{new}<-{old}', storage[new][1]
        elif m := DEL.match(line):
            name = m.group(1)
            if name in storage:
                yield 'free', name, storage.pop(name)[1]
            else:
                yield 'input_del', name, 0
        elif m := OP.match(line):
            yield 'op', f'{m.group(1)} = {m.group(2)}', 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('module')
    ap.add_argument('--min-bytes', type=int, default=1 << 20, help='leave out allocations and frees below this')
    a = ap.parse_args()
    live = peak = 0
    for kind, name, b in events(open(a.module).read()):
        live += b if kind == 'alloc' else -b if kind == 'free' else 0
        peak = max(peak, live)
        if kind in ('alloc', 'free', 'reuse') and b < a.min_bytes:
            continue
        if kind == 'input_del' and a.min_bytes > 0:
            continue
        print(f'{kind:6s} {b / 2**20:10.4f} MiB  {name}')
    print(f'# the wrapper\'s own buffers: peak {peak / 2**20:.1f} MiB live at once (graph inputs and extern outputs not counted)')


if __name__ == '__main__':
    main()
