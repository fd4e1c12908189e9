#!/usr/bin/env python3
"""Replays a traced run's cudaMalloc/cudaFree sequence alone and compares the driver's addresses.

Question (issue 27): where best fit breaks a tie by address (ch06 L1024 b2, the DDP script's b8 without
dropout), are the addresses cudaMalloc hands out a function of the segment sizes the caching allocator
asks for, which a model could follow, or of the rest of the process too?

For one trace in data/traces (either event format), in a fresh process with the caching allocator off
(PYTORCH_NO_CUDA_MEMORY_CACHING=1: each torch.empty is one cudaMalloc of exactly its size, each del one
cudaFree) it makes the trace's segments in the trace's order, frees the ones the trace frees, and prints
one JSON line: how many segments there were, how many landed at the traced address relative to the
first segment, and the first that did not. With --warm it first runs a bf16 matmul and a Triton kernel
(cuBLAS's and the module loader's own allocations, as a training script has before its first tensors).

usage: PYTORCH_NO_CUDA_MEMORY_CACHING=1 python replay_segments.py TRACE.json.gz [--warm]
"""
import gzip
import json
import os
import sys


def segment_events(path):
    d = json.load(gzip.open(path))
    ev = d.get('events', []) if isinstance(d, dict) else d
    out = []
    for e in ev:
        if isinstance(e, list):
            if e[0] == 's':
                out.append(('alloc', e[1], e[2]))
            elif e[0] == 'S':
                out.append(('free', e[1], e[2]))
        else:
            a = e.get('a') or e.get('action')
            if a == 'segment_alloc':
                out.append(('alloc', e['addr'], e['size']))
            elif a in ('segment_free', 'segment_unmap'):
                out.append(('free', e['addr'], e['size']))
    return out


def main():
    assert os.environ.get('PYTORCH_NO_CUDA_MEMORY_CACHING') == '1', 'set PYTORCH_NO_CUDA_MEMORY_CACHING=1'
    import torch
    path = sys.argv[1]
    events = segment_events(path)
    torch.cuda.init()
    if '--warm' in sys.argv:
        a = torch.randn(256, 256, device='cuda', dtype=torch.bfloat16)
        (a @ a).sum().item()
    live = {}  # traced address -> tensor
    traced_base = real_base = None
    n = same = 0
    pairs = []  # (size, traced, replayed) relative to the first segment, in MiB
    first_miss = None
    for kind, addr, size in events:
        if kind == 'alloc':
            t = torch.empty(size, dtype=torch.uint8, device='cuda')
            live[addr] = t
            if traced_base is None:
                traced_base, real_base = addr, t.data_ptr()
            rel_traced, rel_real = addr - traced_base, t.data_ptr() - real_base
            pairs.append((size / 2**20, rel_traced / 2**20, rel_real / 2**20))
            if rel_traced == rel_real:
                same += 1
            elif first_miss is None:
                first_miss = {'index': n, 'size_mib': size / 2**20,
                              'traced_rel_mib': rel_traced / 2**20, 'replayed_rel_mib': rel_real / 2**20}
            n += 1
        else:
            live.pop(addr, None)
    print(json.dumps({'trace': os.path.basename(path), 'warm': '--warm' in sys.argv, 'segments': n,
                      'same_address': same, 'first_miss': first_miss,
                      'gpu': torch.cuda.get_device_name(), 'torch': torch.__version__, 'pairs': pairs}))


if __name__ == '__main__':
    main()
