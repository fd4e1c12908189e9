"""The capped runs at a card's edge (issue 27), as a job list for tools/nanochat-probe/drive.py.

usage: python3 tools/capped_jobs.py JOBS.json [WAVE]   (WAVE 1 or 2; default: both)

Each run is the real script (build-nanogpt's train_gpt2.py, nanochat's base_train.py), capped with CAP_GIB (torch's per-process memory
fraction) at what a 12 GB card (11.25 GiB) or a 24 GB card (23.0 GiB) leaves usable, at settings chosen on both
sides of vramfit's own verdict for that cap (the largest that fits by vramfit and the next), so that each verdict is
tested where it is hardest. Compiled runs get their own TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR: a user's first
run. vramfit is asked with --vram-gib CAP --context-gib 0 --other-gib 0 (score-accuracy's capped protocol).
"""
import json, sys

# (wave, cap GiB, B, T, grad accumulation, compiled, allocator): build-nanogpt, GPT-2 124M. Wave 1: eager with the
# default allocator, as the script runs; wave 2: compiled (a cold cache), and eager with expandable segments.
BNG = [(1, 11.25, 7, 1024, 2, 0, 'default'), (1, 11.25, 8, 1024, 2, 0, 'default'), (1, 11.25, 9, 1024, 2, 0, 'default'),
       (1, 11.25, 15, 512, 2, 0, 'default'), (1, 11.25, 16, 512, 2, 0, 'default'),
       (1, 23.0, 18, 1024, 2, 0, 'default'), (1, 23.0, 19, 1024, 2, 0, 'default'), (1, 23.0, 20, 1024, 2, 0, 'default'),
       (2, 11.25, 14, 1024, 2, 1, 'default'), (2, 11.25, 15, 1024, 2, 1, 'default'),
       (2, 23.0, 31, 1024, 2, 1, 'default'), (2, 23.0, 32, 1024, 2, 1, 'default'),
       (2, 11.25, 10, 1024, 2, 0, 'expandable'), (2, 11.25, 11, 1024, 2, 0, 'expandable'),
       (2, 23.0, 22, 1024, 2, 0, 'expandable'), (2, 23.0, 24, 1024, 2, 0, 'expandable')]
# (wave, cap GiB, depth, device batch, max seq len, grad accumulation, allocator): nanochat base_train.py, SSSL (its
# default). Wave 1: expandable segments, as its scripts launch it; wave 2: the default allocator.
NC = [(1, 11.25, 12, 10, 2048, 2, 'expandable'), (1, 11.25, 12, 11, 2048, 2, 'expandable'),
      (1, 23.0, 12, 24, 2048, 2, 'expandable'), (1, 23.0, 16, 13, 2048, 2, 'expandable'),
      (1, 23.0, 16, 14, 2048, 2, 'expandable'),
      (2, 11.25, 12, 9, 2048, 2, 'default'), (2, 11.25, 12, 10, 2048, 2, 'default'),
      (2, 23.0, 12, 24, 2048, 2, 'default'), (2, 23.0, 12, 26, 2048, 2, 'default')]


def cap_name(cap):
    return f'cap{int(cap)}'


def cache(n):
    """A private cold Inductor/Triton cache: a user's first run."""
    return {'TORCHINDUCTOR_CACHE_DIR': f'/tmp/ic/{n}', 'TRITON_CACHE_DIR': f'/tmp/ic/{n}/triton'}


def jobs(waves):
    J = []
    for wave, cap, B, T, GA, comp, alloc in BNG:
        if wave not in waves:
            continue
        # named as build-nanogpt.jsonl names its runs: c compiled / e eager, x_ expandable segments
        n = f'bng_{cap_name(cap)}_{"x_" if alloc == "expandable" else ""}{"c" if comp else "e"}_b{B}_t{T}_ga{GA}'
        J.append({'kind': 'bng_capped', 'name': n, 'gb': cap + 1,
                  'cmd': ['python3', 'tools/build-nanogpt-probe/run_train.py', n, str(B), str(T), str(GA * B * T),
                          str(comp)],
                  'env': {'ALLOC': alloc, 'CAP_GIB': str(cap), **cache(n)}})
    for wave, cap, d, B, T, GA, alloc in NC:
        if wave not in waves:
            continue
        n = f'nc_{cap_name(cap)}_{"def_" if alloc == "default" else ""}d{d}_B{B}_T{T}_GA{GA}'
        argv = [f'--depth={d}', f'--device-batch-size={B}', f'--max-seq-len={T}', '--window-pattern=SSSL',
                f'--total-batch-size={GA * B * T}', '--num-iterations=3', '--eval-every=1000',
                f'--eval-tokens={2 * B * T}', '--core-metric-every=-1', '--sample-every=-1', '--warmup-steps=1']
        J.append({'kind': 'nc_capped', 'name': n, 'gb': cap + 1,
                  'cmd': ['python3', 'tools/nanochat-probe/run_base.py', n] + argv,
                  'env': {'ALLOC': alloc, 'CAP_GIB': str(cap), **cache(n)}})
    return J


if __name__ == '__main__':
    J = jobs({int(sys.argv[2])} if len(sys.argv) > 2 else {1, 2})
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    print(len(J), 'jobs')
