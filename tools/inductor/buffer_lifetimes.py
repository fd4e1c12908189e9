#!/usr/bin/env python3
"""Every buffer of one compiled graph with its life, read from the wrapper Inductor generated (data/inductor/*.tgz).

A development aid for writing a compiled graph's sequence buffer by buffer (docs/allocation-order.md §22: nanochat's
`--fp8` forward was written from this listing): in `call()`'s order, each buffer where it is made — by
`empty_strided_cuda` or by taking a dead buffer's storage (`bufN = reinterpret_tensor(bufM, ...); del bufM  # reuse`),
which a sequence writes as the old buffer's free and a new request that `engine::buffer_reuse` hands the storage to —
with its shape in the run's symbols, its dtype, and the line where it dies (its `del`, or the reuse that takes its
storage); each graph input's `del` (a saved tensor the backward frees); the extern ops that allocate their own outputs
(SDPA). Shapes print with the symbols given (`--dims B=2,T=2048,C=1152`: each size that equals one is named, `4C`
and the like too); scalars and buffers under --min-bytes are left out.

With `--forward FORWARD.py` (the same run's forward module) the listing of a backward names each saved input after
the forward buffer that returned it (the forward returns the loss, then the saved tensors, in the backward's argument
order) and the forward line that made it — what maps a backward's `del getitem_153` to the forward's `SDPA output`.

usage: tools/inductor/buffer_lifetimes.py MODULE.py [--dims B=2,T=2048,...] [--forward FORWARD.py] [--min-bytes N]
       mkdir -p /tmp/oc && tar xzf data/inductor/oc_nc_fp8_d18_B2_T2048_L.tgz -C /tmp/oc
       grep -l 'tangents_1 = args' -r /tmp/oc   (the backward: its arguments end in the tangents)
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wrapper_allocations import ALLOC, DEL, OP, REUSE, storage_bytes  # noqa: E402

SHORT = {'float32': 'f32', 'bfloat16': 'bf16', 'float16': 'f16', 'float8_e4m3fn': 'e4m3', 'float8_e5m2': 'e5m2',
         'int64': 'i64', 'int32': 'i32', 'bool': 'bool', 'uint8': 'u8', 'int8': 'i8', 'float64': 'f64'}
ASSERT = re.compile(r'assert_size_stride\((\w+), \(([^)]*)\), \(([^)]*)\)\)')


def ints(s):
    return [int(x) for x in s.split(',') if x.strip()]


def symbols(spec):
    """--dims B=2,T=2048 -> {2: 'B', 2048: 'T', ...} with the multiples a transformer uses (4C, BT, ...)."""
    named = {}
    for part in filter(None, (spec or '').split(',')):
        k, v = part.split('=')
        named[k.strip()] = int(v)
    out = {}
    for k, v in named.items():
        out.setdefault(v, k)
    for k, v in named.items():
        out.setdefault(4 * v, f'4{k}')
        if v >= 8 and v % 2 == 0:
            out.setdefault(v // 2, f'{k}/2')
    if 'B' in named and 'T' in named:
        out.setdefault(named['B'] * named['T'], 'BT')
    return out


def shape_text(shape, names):
    return '[' + ','.join(names.get(n, str(n)) for n in shape) + ']'


def call_body(text):
    return text[text.index('def call('):]


def lifetimes(text, names):
    """(line, kind, name, detail) rows in call()'s order; kind: make, take (a reuse), del, input_del, op."""
    body = call_body(text)
    info = {}  # live name -> (bytes, shape text, dtype)
    rows = []
    died = {}
    for ln, line in enumerate(body.splitlines(), 1):
        if m := ALLOC.match(line):
            shape, stride, dt = ints(m.group(2)), ints(m.group(3)), m.group(4)
            info[m.group(1)] = (storage_bytes(shape, stride, dt), shape_text(shape, names), SHORT.get(dt, dt))
            rows.append((ln, 'make', m.group(1), None))
        elif m := REUSE.match(line):
            new, old = m.group(1), m.group(3)
            if old in info:
                died[old] = ln
                info[new] = info[old]
                rows.append((ln, 'take', new, old))
        elif m := DEL.match(line):
            name = m.group(1)
            if name in info:
                died[name] = ln
                rows.append((ln, 'del', name, None))
            else:
                rows.append((ln, 'input_del', name, None))
        elif m := OP.match(line):
            rows.append((ln, 'op', m.group(1), m.group(2)))
    return rows, info, died


def forward_map(fwd_text, bwd_text):
    """Backward input name -> (forward buffer, forward line that made it)."""
    body = call_body(fwd_text)
    ret = body[body.index('return (') + len('return ('):]
    depth, cur, items = 0, '', []
    for ch in ret:
        if ch == '(':
            depth += 1
        elif ch == ')':
            if depth == 0:
                break
            depth -= 1
        if ch == ',' and depth == 0:
            items.append(cur.strip())
            cur = ''
        else:
            cur += ch
    items.append(cur.strip())
    args = call_body(bwd_text)
    args = args[args.index('\n') + 1:args.index('= args')]
    args = [a.strip() for a in args.replace('\n', ' ').split(',') if a.strip()]
    made = {}
    for ln, line in enumerate(body.splitlines(), 1):
        if m := ALLOC.match(line):
            made.setdefault(m.group(1), ln)
        elif m := REUSE.match(line):
            made.setdefault(m.group(1), made.get(m.group(3), ln))
        elif m := re.match(r'\s*(buf\d+) = (buf\d+)\[\d+\]', line):
            made.setdefault(m.group(1), ln)
    out = {}
    for f, a in zip(items[1:], args):
        if m := re.match(r'(?:reinterpret_tensor\()?(\w+)', f):
            out[a] = (m.group(1), made.get(m.group(1)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('module')
    ap.add_argument('--dims', default='')
    ap.add_argument('--forward')
    ap.add_argument('--min-bytes', type=int, default=65536)
    a = ap.parse_args()
    text = open(a.module).read()
    names = symbols(a.dims)
    rows, info, died = lifetimes(text, names)
    sizes = {}
    for m in ASSERT.finditer(text):
        sizes.setdefault(m.group(1), shape_text(ints(m.group(2)), names))
    fmap = forward_map(open(a.forward).read(), text) if a.forward else {}
    for ln, kind, name, detail in rows:
        if kind in ('make', 'take'):
            b, shape, dt = info[name]
            if b < a.min_bytes:
                continue
            took = f' (takes {detail})' if kind == 'take' else ''
            print(f'{ln:6d} {kind:4s} {name:8s} {shape:18s} {dt:5s} {b / 2**20:9.4f} MiB dies@{died.get(name, "-")}{took}')
        elif kind == 'del' and info.get(name, (0,))[0] >= a.min_bytes:
            print(f'{ln:6d} del  {name}')
        elif kind == 'input_del' and not re.match(r'(reciprocal|convert_element_type|primals)_?\d*$', name):
            src = fmap.get(name)
            where = f'  <- forward {src[0]} (line {src[1]})' if src else ''
            print(f'{ln:6d} in   {name:20s} {sizes.get(name, "")}{where}')
        elif kind == 'op':
            print(f'{ln:6d} op   {name} = {detail}')


if __name__ == '__main__':
    main()
