#!/usr/bin/env python3
"""Where DDP's second set of gradient buckets comes from (crates/estimator/src/ddp.rs).

A development probe, not part of any build: run on 2+ GPUs with
  torchrun --standalone --nproc_per_node=2 tools/probe/ddp_buckets_probe.py
(environment: GA micro-steps per iteration, default 2; ITERS, default 5; SLEEP seconds to pause,
after a synchronize, at the end of each iteration, default 0).

What it showed on two H200s: DDP() adds 1.00 P on every rank; at iteration 1's first forward
another 1.00 P appears (the rebuilt buckets) and the old set is freed some time later, on the NCCL
watchdog's schedule rather than the loop's: with iterations of a few tens of ms, one rank or both
still held it at iteration 1's peak (and sometimes through iteration 2) in every run, never by
iteration 10; with a 0.2 s pause after each iteration, never at a peak.
"""
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group('nccl')
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ['LOCAL_RANK']))
dev = 'cuda'
C, L, B, T = 768, 12, 8, 1024
layers = []
for _ in range(L):
    layers += [nn.Linear(C, 4 * C, bias=False), nn.GELU(), nn.Linear(4 * C, C, bias=False)]
model = nn.Sequential(*layers).to(dev)
P4 = 4 * sum(p.numel() for p in model.parameters())
after_load = torch.cuda.memory_allocated()
model = DDP(model, device_ids=[int(os.environ['LOCAL_RANK'])])
after_ddp = torch.cuda.memory_allocated()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
GA = int(os.environ.get('GA', '2'))
sleep = float(os.environ.get('SLEEP', '0'))
lines = [f'rank {rank}: P={P4/2**20:.1f} MiB, DDP() added {(after_ddp-after_load)/P4:.2f}P']
for it in range(int(os.environ.get('ITERS', '5'))):
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    for micro in range(GA):
        model.require_backward_grad_sync = micro == GA - 1
        x = torch.randn(B * T // 8, C, device=dev)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            y = model(x)
        if micro == 0:
            after_fwd0 = torch.cuda.memory_allocated()
        loss = y.float().pow(2).mean() / GA
        loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    end = torch.cuda.memory_allocated()
    peak = torch.cuda.max_memory_allocated()
    lines.append(f'rank {rank} it {it}: start {start/P4:.2f}P, after forward 0 {after_fwd0/P4:.2f}P, '
                 f'peak {peak/P4:.2f}P, end {end/P4:.2f}P')
    if sleep:
        torch.cuda.synchronize()
        time.sleep(sleep)
dist.barrier()
for r in range(dist.get_world_size()):
    if r == rank:
        print('\n'.join(lines), flush=True)
    dist.barrier()
dist.destroy_process_group()
