#!/usr/bin/env python3
"""How far the formulas other GPU-memory calculators use land from nanoGPT's measured peaks.

For the README's "Why trust it": the same 80 calibration runs vramfit is scored on
(data/measured/calibration.jsonl, those with a measured overall peak), predicted by
  * "16 bytes per parameter": weights, gradients and AdamW's two moments in fp32 (or a 16-bit
    copy plus an fp32 master), no activations — the common back-of-the-envelope answer;
  * EleutherAI's "Transformer Math 101" (the formula most online calculators implement):
    16 bytes per parameter for mixed-precision AdamW training plus activations of
    s·b·h·L·(34 + 5·a·s/h) bytes (Korthikanti et al., no recomputation), nothing for the logits.
Prints one line per formula: median and worst absolute error, and how many runs are off by more
than 30 %.

usage: python3 tools/compare/other_calculators.py [data/measured/calibration.jsonl]
"""
import json
import os
import statistics
import sys

# default: the repository's copy (data/README.md), wherever the script is run from
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'data', 'measured', 'calibration.jsonl')
KEYS = ('peak_allocated_train_steady', 'peak_allocated_train_iter0', 'peak_allocated_eval')


def params(c):
    L, C = c.get('n_layer', 12), c.get('n_embd', 768)
    V, T = c.get('vocab_size', 50304), c.get('block_size', 1024)
    bias = c.get('bias', False)
    per_block = 12 * C * C + 2 * C + (11 * C if bias else 0)
    return V * C + T * C + L * per_block + C + (C if bias else 0)


def sixteen_per_param(c):
    return 16 * params(c)


def transformer_math_101(c):
    s, b = c.get('block_size', 1024), c.get('batch_size', 12)
    h, L, a = c.get('n_embd', 768), c.get('n_layer', 12), c.get('n_head', 12)
    return 16 * params(c) + s * b * h * L * (34 + 5 * a * s / h)


runs = []
with open(path) as f:
    for line in f:
        if not line.strip():
            continue
        r = json.loads(line)
        m = r.get('measured_bytes') or {}
        peak = max((m.get(k) or 0) for k in KEYS)
        if r.get('status') == 'ok' and peak > 0:
            runs.append((r['config'], peak))

for name, formula in [('16 bytes per parameter', sixteen_per_param),
                      ('Transformer Math 101 (16 B/param + Korthikanti activations)', transformer_math_101)]:
    errors = [abs(formula(c) - peak) / peak for c, peak in runs]
    far = sum(e > 0.30 for e in errors)
    print(f'{name}: runs={len(errors)} median={statistics.median(errors) * 100:.1f}% '
          f'max={max(errors) * 100:.1f}% off_by_more_than_30pct={far}')
