#!/usr/bin/env python3
"""Held-out check of nanochat's micro-steps (stop 71): vramfit replays at most two of base_train.py's micro-steps
(its loop keeps no logits across them: `loss = model(x, y)`); five uncapped runs with 3 to 8 (NORESET=1: the peak
counters left alone, as the script runs), predicted for an H200
and written to data/predictions/nanochat-accum.jsonl before they run.

usage (repo root):
  python3 tools/heldout/nanochat_accum.py predict [VRAMFIT] > data/predictions/nanochat-accum.jsonl
  python3 tools/heldout/nanochat_accum.py jobs OUT.json      the job list for tools/build-nanogpt-probe/drive.py
"""
from heldout_common import cache, main

RUNS = [  # (name, depth, device batch, seq len, micro-steps, allocator)
    ('nca_d8_b8_t1024_ga3', 8, 8, 1024, 3, 'expandable_segments'),
    ('nca_d8_b8_t1024_ga4', 8, 8, 1024, 4, 'expandable_segments'),
    ('nca_d8_b8_t1024_ga8', 8, 8, 1024, 8, 'expandable_segments'),
    ('nca_d12_b4_t2048_ga5', 12, 4, 2048, 5, 'expandable_segments'),
    ('nca_def_d8_b8_t1024_ga5', 8, 8, 1024, 5, 'default'),
]


def argv(d, B, T, ga):
    return [f'--depth={d}', f'--device-batch-size={B}', f'--max-seq-len={T}', '--window-pattern=SSSL',
            f'--total-batch-size={ga * B * T}', '--num-iterations=3', '--eval-every=1000', f'--eval-tokens={B * T}',
            '--core-metric-every=-1', '--sample-every=-1', '--warmup-steps=1']


def flags(d, B, T, ga, alloc):
    return ['--program=nanochat', *argv(d, B, T, ga), f'--allocator={alloc}']


def jobs():
    return [{'kind': 'nc', 'name': name, 'gb': 40,
             'cmd': ['python3', 'tools/nanochat-probe/run_base.py', name, *argv(d, B, T, ga)],
             'env': {'ALLOC': 'expandable' if alloc == 'expandable_segments' else 'default', 'NORESET': '1',
                     **cache(name)}}
            for name, d, B, T, ga, alloc in RUNS]


if __name__ == '__main__':
    main(__doc__, [(name, flags(*run)) for name, *run in RUNS], jobs())
