#!/usr/bin/env python3
"""Held-out check of `simulated_micro_steps` (stop 71): uncapped runs whose gradient accumulation is longer than
vramfit simulates (train.py eager fp16 T256 at GA 7, 8 and 12; the README's first example, GPT-2 124M eager at
batch 8 with config/train_gpt2.py's GA 40; train.py's own defaults, compiled, batch 12, GA 40; build-nanogpt at
GA 3), predicted for an H200 and written to data/predictions/microsteps.jsonl before they run.

usage (repo root):
  python3 tools/heldout/microsteps.py predict [VRAMFIT] > data/predictions/microsteps.jsonl
  python3 tools/heldout/microsteps.py jobs OUT.json      the job list for tools/build-nanogpt-probe/drive.py
"""
from heldout_common import cache, main

G = ['--n_layer=12', '--n_head=12', '--n_embd=768', '--dropout=0.0', '--bias=False']
F16 = G + ['--dtype=float16', '--compile=False', '--block_size=256', '--batch_size=34']
RUNS = [  # (name, kind: the probe's, vramfit's flags)
    ('ms_fp16_t256_b34_ga7', 'ng', F16 + ['--gradient_accumulation_steps=7']),
    ('ms_fp16_t256_b34_ga12', 'ng', F16 + ['--gradient_accumulation_steps=12']),
    ('ms_fp16_t256_b30_ga8', 'ng', G + ['--dtype=float16', '--compile=False', '--block_size=256', '--batch_size=30',
                                        '--gradient_accumulation_steps=8']),
    ('ms_readme_b8_ga40', 'ng', G + ['--dtype=bfloat16', '--compile=False', '--block_size=1024', '--batch_size=8',
                                     '--gradient_accumulation_steps=40']),
    ('ms_defaults_comp_b12_ga40', 'ng', G + ['--dtype=bfloat16', '--compile=True', '--block_size=1024',
                                             '--batch_size=12', '--gradient_accumulation_steps=40']),
    ('ms_bng_b16_t1024_ga3', 'bng', ['--program=build-nanogpt', '--B=16', '--T=1024', '--total_batch_size=49152',
                                     '--use_compile=False']),
]


def jobs():
    J = []
    for name, kind, flags in RUNS:
        env = cache(name)
        if kind == 'ng':
            cmd = ['python3', 'tools/nanogpt-probe/run_train.py', name, '50304', *flags, '--eval_iters=2']
        else:
            f = dict(a[2:].split('=') for a in flags[1:])
            cmd = ['python3', 'tools/build-nanogpt-probe/run_train.py', name, f['B'], f['T'], f['total_batch_size'],
                   '0']
            env['ALLOC'] = 'default'
        J.append({'kind': kind, 'name': name, 'gb': 30, 'cmd': cmd, 'env': env})
    return J


if __name__ == '__main__':
    main(__doc__, [(name, flags) for name, _, flags in RUNS], jobs())
