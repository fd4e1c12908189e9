"""Add `categorical_batches` to measured chat_eval.py runs: each categorical task's batches in the order the script
runs them, as [B, T] (T = the longest prompt in the batch), from the synthetic tasks' seeded prompt lengths
(synthetic_tasks.py) and chat_eval.py's batching at 92d63d4 (`run_categorical_eval`: problems 0..min(len, -x) in
consecutive batches of -b, rank r taking batches r, r + world, ...).

The probe aggregated its forward calls by shape, which loses their order; where the allocator places each batch's
logits decides what it reserves, so the order is an input the model needs. Every derived batch list is checked
against the run's own `forward_calls` (the count of each (task, B, T)) before it is written; a mismatch stops the
script and writes nothing.

usage: python3 categorical_batches.py data/measured/nanochat-stages.jsonl [more.jsonl ...]   (rewrites in place)
"""
import json, os, sys
from collections import Counter
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from argv import argval
from synthetic_tasks import SIZES, prompt_len


def batches(task, batch, max_problems, rank=0, world=1):
    n = SIZES[task] if max_problems is None else min(SIZES[task], max_problems)
    count = -(-n // batch)
    out = []
    for i in range(rank, count, world):
        lens = [prompt_len(task, k) for k in range(i * batch, min((i + 1) * batch, n))]
        out.append([len(lens), max(lens)])
    return out


def derive(run):
    argv = run['argv']
    tasks = [p.split(':', 1)[1] for p, *_ in run['phase_seq'] if p.startswith('categorical:')]
    x = argval(argv, '-x', '--max-problems')
    b = int(argval(argv, '-b', '--batch-size', default=8))
    derived = [[t, batches(t, b, None if x is None else int(x), run['rank'], run['world_size'])] for t in tasks]
    seen = Counter((f[0].split(':', 1)[1], f[2], f[3]) for f in run['forward_calls'] if f[0].startswith('categorical:')
                   for _ in range(f[6]))
    want = Counter((t, bb, tt) for t, bs in derived for bb, tt in bs)
    if seen != want:
        sys.exit(f"{run['name']}: derived batches {sorted(want.items())} differ from its forward calls {sorted(seen.items())}")
    return derived


def main():
    for path in sys.argv[1:]:
        lines = open(path).read().splitlines()
        out = []
        for line in lines:
            run = json.loads(line)
            if run.get('script', '').endswith('chat_eval.py') and any(
                    p.startswith('categorical:') for p, *_ in run['phase_seq']):
                run['categorical_batches'] = derive(run)
                line = json.dumps(run)
            out.append(line)
        open(path, 'w').write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
