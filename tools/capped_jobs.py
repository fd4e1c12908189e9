"""The capped runs at a card's edge (issue 27), as a job list for tools/nanochat-probe/drive.py.

usage: python3 tools/capped_jobs.py JOBS.json

Each run is the real script (build-nanogpt's train_gpt2.py eager with the default allocator, as it runs; nanochat's
base_train.py with expandable segments, as its scripts launch it), capped with CAP_GIB (torch's per-process memory
fraction) at what a 12 GB card (11.25 GiB) or a 24 GB card (23.0 GiB) leaves usable, at settings chosen on both
sides of vramfit's own verdict for that cap (the largest that fits by vramfit and the next), so that each verdict is
tested where it is hardest. Compiled runs get their own TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR: a user's first
run. vramfit is asked with --vram-gib CAP --context-gib 0 --other-gib 0 (score-accuracy's capped protocol).
"""
import json, sys

# (cap GiB, B, T, grad accumulation): build-nanogpt, GPT-2 124M eager
BNG = [(11.25, 7, 1024, 2), (11.25, 8, 1024, 2), (11.25, 9, 1024, 2), (11.25, 15, 512, 2), (11.25, 16, 512, 2),
       (23.0, 18, 1024, 2), (23.0, 19, 1024, 2), (23.0, 20, 1024, 2)]
# (cap GiB, depth, device batch, max seq len, grad accumulation): nanochat base_train.py, SSSL (its default)
NC = [(11.25, 12, 10, 2048, 2), (11.25, 12, 11, 2048, 2), (23.0, 12, 24, 2048, 2), (23.0, 16, 13, 2048, 2),
      (23.0, 16, 14, 2048, 2)]


def cap_name(cap):
    return f'cap{int(cap)}'


def jobs():
    J = []
    for cap, B, T, GA in BNG:
        n = f'bng_{cap_name(cap)}_e_b{B}_t{T}_ga{GA}'
        J.append({'kind': 'bng_capped', 'name': n, 'gb': cap + 1,
                  'cmd': ['python3', 'tools/build-nanogpt-probe/run_train.py', n, str(B), str(T), str(GA * B * T), '0'],
                  'env': {'ALLOC': 'default', 'CAP_GIB': str(cap)}})
    for cap, d, B, T, GA in NC:
        n = f'nc_{cap_name(cap)}_d{d}_B{B}_T{T}_GA{GA}'
        argv = [f'--depth={d}', f'--device-batch-size={B}', f'--max-seq-len={T}', '--window-pattern=SSSL',
                f'--total-batch-size={GA * B * T}', '--num-iterations=3', '--eval-every=1000',
                f'--eval-tokens={2 * B * T}', '--core-metric-every=-1', '--sample-every=-1', '--warmup-steps=1']
        J.append({'kind': 'nc_capped', 'name': n, 'gb': cap + 1,
                  'cmd': ['python3', 'tools/nanochat-probe/run_base.py', n] + argv,
                  'env': {'ALLOC': 'expandable', 'CAP_GIB': str(cap), 'TORCHINDUCTOR_CACHE_DIR': f'/tmp/ic/{n}',
                          'TRITON_CACHE_DIR': f'/tmp/ic/{n}/triton'}})
    return J


if __name__ == '__main__':
    J = jobs()
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    print(len(J), 'jobs')
