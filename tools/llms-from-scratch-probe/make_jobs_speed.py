"""Job list (JSON) for tools/build-nanogpt-probe/drive.py: the ch05/10_llm-training-speed runs measured for vramfit
(see README.md, "ch05 speed scripts").
usage: python3 make_jobs_speed.py OUT.json [single|sdpa|ddp|ddp1|ddp1check] [--only a,b] [--skip a,b]
Every run: its own empty Inductor/Triton cache /tmp/spdcache/NAME (cold); `warm` jobs then run NAME_warm with the
same flags on that cache; `trace` jobs record the allocator history and leave $OUT/trace_NAME.tar (trace_speed.py).
All runs: 1 epoch, --steps 12 (train split = min(432,000, 12*B*T*W + 1) tokens), val split 48,000 tokens.
sdpa: 01 with --sdpa flash / efficient (cuDNN attention off, as on consumer cards).
ddp1: the same on one GPU (--nproc_per_node=1: world size 1, still DDP); ddp1check: eight more, predicted first.
ddp: 02_opt_multi_gpu_ddp.py under `python3 -m torch.distributed.run --standalone --nproc_per_node=2` (= torchrun);
each rank its own cold cache /tmp/spdcache/NAME/rank{0,1} (run_speed.py appends rank<r> under torchrun; the job
removes /tmp/spdcache/NAME first) and its own record file /tmp/spdres/NAME.rank<r>.txt, printed after torchrun ends;
`ddptrace` also traces both ranks and leaves $OUT/trace_NAME_rank<r>.tar."""
import json, sys

P = 'tools/llms-from-scratch-probe/'
M124, MED, LARGE, L2 = (768, 12, 12), (1024, 16, 24), (1280, 20, 36), (768, 12, 2)  # (emb_dim, n_heads, n_layers)
# (name, (emb, heads, layers), context_length, batch_size, drop_rate, qkv_bias, mode)  mode: '' | warm | trace
R = [
    ('spd_c1024_b32', M124, 1024, 32, 0.1, 0, 'warm'),          # the script as shipped (+ its warm twin)
    ('spd_c1024_b32_trace', M124, 1024, 32, 0.1, 0, 'trace'),
    ('spd_l2_c256_b4_trace', L2, 256, 4, 0.1, 0, 'trace'),
    ('spd_l2_c256_b4', L2, 256, 4, 0.1, 0, 'warm'),
    ('spd_c1024_b64', M124, 1024, 64, 0.1, 0, ''),
    ('spd_c2048_b32', M124, 2048, 32, 0.1, 0, ''),
    ('spd_c1024_b8', M124, 1024, 8, 0.1, 0, ''),
    ('spd_c1024_b1', M124, 1024, 1, 0.1, 0, ''),
    ('spd_c1024_b16', M124, 1024, 16, 0.1, 0, ''),
    ('spd_c1024_b4', M124, 1024, 4, 0.1, 0, ''),
    ('spd_c256_b32', M124, 256, 32, 0.1, 0, ''),
    ('spd_c512_b32', M124, 512, 32, 0.1, 0, ''),
    ('spd_c1024_b32_drop0', M124, 1024, 32, 0.0, 0, ''),
    ('spd_c1024_b8_drop0', M124, 1024, 8, 0.0, 0, ''),
    ('spd_c1024_b8_qkvb', M124, 1024, 8, 0.1, 1, ''),
    ('spd_med_c1024_b4', MED, 1024, 4, 0.1, 0, ''),
    ('spd_med_c1024_b8', MED, 1024, 8, 0.1, 0, ''),
    ('spd_large_c1024_b2', LARGE, 1024, 2, 0.1, 0, ''),
    ('spd_large_c1024_b4', LARGE, 1024, 4, 0.1, 0, ''),
    ('spd_c256_b4', M124, 256, 4, 0.1, 0, ''),
    ('spd_c2048_b4', M124, 2048, 4, 0.1, 0, ''),
    ('spd_c512_b8', M124, 512, 8, 0.1, 0, ''),
]
# 01 with the SDPA backend of consumer cards (kind nvidia-h200; flags: run_speed.py --sdpa)
FL, EF = ['--sdpa', 'flash'], ['--sdpa', 'efficient']
R_SDPA = [
    ('spd_flash_med_c1024_b4', MED, 1024, 4, 0.1, 0, '', FL),
    ('spd_flash_c1024_b32', M124, 1024, 32, 0.1, 0, '', FL),     # the shipped config
    ('spd_flash_c1024_b8', M124, 1024, 8, 0.1, 0, '', FL),
    ('spd_flash_l2_c256_b4_trace', L2, 256, 4, 0.1, 0, 'trace', FL),
    ('spd_eff_c1024_b8', M124, 1024, 8, 0.1, 0, '', EF),
    ('spd_eff_l2_c256_b4_trace', L2, 256, 4, 0.1, 0, 'trace', EF),
]
# 02_opt_multi_gpu_ddp.py under torchrun --nproc_per_node=2 (kind nvidia-h200-x2): per-rank records
R_DDP = [
    ('spd_ddp2_c1024_b32', M124, 1024, 32, 0.1, 0, 'ddp'),       # the shipped config
    ('spd_ddp2_c1024_b8', M124, 1024, 8, 0.1, 0, 'ddp'),
    ('spd_ddp2_c1024_b8_trace', M124, 1024, 8, 0.1, 0, 'ddptrace'),
]
# 02_opt_multi_gpu_ddp.py on one GPU (torchrun --nproc_per_node=1; `python 02_…` is the same: world size 1, still
# DDP(model) and Dynamo's DDPOptimizer split): kind nvidia-h200 (issue 27, stop 70)
R_DDP1 = [
    ('spd_ddp1_c1024_b8_trace', M124, 1024, 8, 0.1, 0, 'ddptrace'),
    ('spd_ddp1_c1024_b32', M124, 1024, 32, 0.1, 0, 'ddp'),       # the shipped config
    ('spd_ddp1_c1024_b16', M124, 1024, 16, 0.1, 0, 'ddp'),
    ('spd_ddp1_c1024_b4', M124, 1024, 4, 0.1, 0, 'ddp'),
    ('spd_ddp1_c512_b8', M124, 512, 8, 0.1, 0, 'ddp'),
    ('spd_ddp1_l2_c256_b4', L2, 256, 4, 0.1, 0, 'ddp'),
    ('spd_ddp1_med_c1024_b4_trace', MED, 1024, 4, 0.1, 0, 'ddptrace'),
    # after ddp1check: the one run of it past 0.1 % reserved, traced (call 7: --only this)
    ('spd_ddp1_c1024_b8_drop0_trace', M124, 1024, 8, 0.0, 0, 'ddptrace'),
]
# held out: predicted (predict_ddp1.py --check) before they ran, after the DDPOptimizer pieces were modelled
L6, TINY, S512 = (768, 12, 6), (256, 4, 12), (512, 8, 8)
R_DDP1_CHECK = [
    ('spd_ddp1c_c1024_b2', M124, 1024, 2, 0.1, 0, 'ddp'),
    ('spd_ddp1c_c1024_b12', M124, 1024, 12, 0.1, 0, 'ddp'),
    ('spd_ddp1c_c2048_b4', M124, 2048, 4, 0.1, 0, 'ddp'),
    ('spd_ddp1c_c1024_b8_qkvb', M124, 1024, 8, 0.1, 1, 'ddp'),
    ('spd_ddp1c_c1024_b8_drop0', M124, 1024, 8, 0.0, 0, 'ddp'),
    ('spd_ddp1c_l6_c1024_b8', L6, 1024, 8, 0.1, 0, 'ddp'),
    ('spd_ddp1c_tiny_c1024_b16', TINY, 1024, 16, 0.1, 0, 'ddp'),
    ('spd_ddp1c_s512_c1024_b8', S512, 1024, 8, 0.1, 0, 'ddp'),
]


def gb(m, T, B):
    E, H, L = m
    V = 50304
    params = 2 * V * E + T * E + L * (12 * E * E + 13 * E)
    act = B * T * (L * E * 40 + V * 8)
    return 1.5 + 1.2 * (12 * params + act) / 2 ** 30


def flags(m, T, B, d, qb):
    return ['--emb', str(m[0]), '--heads', str(m[1]), '--layers', str(m[2]), '--ctx', str(T), '--batch', str(B),
            '--drop', str(d), '--qkv-bias', str(qb), '--epochs', '1', '--steps', '12']


def sh(cmd):
    return ' '.join(cmd)


if __name__ == '__main__':
    args = sys.argv[2:]
    which = args[0] if args and not args[0].startswith('--') else 'single'
    only = skip = None
    if '--only' in args:
        only = set(args[args.index('--only') + 1].split(','))
    if '--skip' in args:
        skip = set(args[args.index('--skip') + 1].split(','))
    J = []
    world = 1 if which in ('ddp1', 'ddp1check') else 2
    ranks = ' '.join(str(r) for r in range(world))
    lists = {'ddp': R_DDP, 'ddp1': R_DDP1, 'ddp1check': R_DDP1_CHECK, 'sdpa': R_SDPA}
    for n, m, T, B, d, qb, mode, *more in lists.get(which, R):
        if (only and n not in only) or (skip and n in skip):
            continue
        cache = f'/tmp/spdcache/{n}'
        ddp = which in ('ddp', 'ddp1', 'ddp1check')
        base = ['python3', P + 'run_speed.py'] if not ddp else \
            ['python3', '-m', 'torch.distributed.run', '--standalone', f'--nproc_per_node={world}', P + 'run_speed.py']
        extra = (['--script', '02'] if ddp else []) + (more[0] if more else [])
        cmd = base + [n] + extra + flags(m, T, B, d, qb) + ['--cache-dir', cache]
        if mode in ('ddp', 'ddptrace'):
            res, tf, o = f'/tmp/spdres/{n}', f'/tmp/spdtrace/{n}', '/tmp/spdtrace/out'
            c = f'rm -rf {cache} {res}.rank*; mkdir -p /tmp/spdres /tmp/spdtrace; {sh(cmd)} --result-file {res}.rank{{rank}}.txt'
            if mode == 'ddptrace':
                c += f' --trace python --trace-file {tf}.rank{{rank}}.pkl'
            c += '; ' + ' '.join(['cat'] + [f'{res}.rank{r}.txt' for r in range(world)])
            if mode == 'ddptrace':
                c += (f'; for r in {ranks}; do sed "s/^RESULT //" {res}.rank$r.txt > {tf}.rank$r.json'
                      f' && python3 {P}trace_speed.py convert {tf}.rank$r.pkl {tf}.rank$r.json {o} {n}_rank$r'
                      f' && python3 {P}trace_speed.py pack {o} {n}_rank$r $OUT/trace_{n}_rank$r.tar; done')
            cmd = ['bash', '-c', c]
        elif mode == 'warm':
            warm = base + [n + '_warm'] + extra + flags(m, T, B, d, qb) + ['--cache-dir', cache]
            cmd = ['bash', '-c', f'rm -rf {cache}; {sh(cmd)}; {sh(warm)}']
        elif mode == 'trace':
            tf, o = f'/tmp/spdtrace/{n}', '/tmp/spdtrace/out'
            cmd = ['bash', '-c', f'rm -rf {cache}; mkdir -p /tmp/spdtrace; {sh(cmd)} --trace python --trace-file {tf}.pkl'
                   f' | tee {tf}.out; grep "^RESULT " {tf}.out | sed "s/^RESULT //" > {tf}.json'
                   f' && python3 {P}trace_speed.py convert {tf}.pkl {tf}.json {o} {n}'
                   f' && python3 {P}trace_speed.py pack {o} {n} $OUT/trace_{n}.tar']
        else:
            cmd = ['bash', '-c', f'rm -rf {cache}; {sh(cmd)}']
        J.append({'kind': 'spd', 'name': n, 'gb': round(gb(m, T, B), 1), 'cmd': cmd})
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    print(len(J), 'jobs; total est GiB', round(sum(j['gb'] for j in J)), [(j['name'], j['gb']) for j in J])
