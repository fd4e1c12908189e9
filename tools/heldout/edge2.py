#!/usr/bin/env python3
"""Held-out verdicts at a card's edge, second set (issue 27, stop 71): the launches added since the first set —
DDP on one GPU (train.py and train_gpt2.py under `torchrun --nproc_per_node=1`, LLMs-from-scratch's
02_opt_multi_gpu_ddp.py) — and shapes no capped run had (build-nanogpt at T 256, nanochat with the default allocator
at depth 8 and with expandable segments at depth 20, T 2048; train.py eager fp16 at T 256).

Each case: one program at one shape and cap, the batch size the only thing that moves. vramfit (asked as
score-accuracy asks, `--vram-gib CAP --context-gib 0 --other-gib 0`, and for the card they run on, `--gpu h200` with
the same cap) is bisected for the largest batch that fits; the runs are that batch and the next, so each verdict is
tested where it is hardest. The answers are written to edge2_verdicts.json before anything runs.

usage (repo root):
  python3 tools/heldout/edge2.py verdicts [VRAMFIT]     asks vramfit, writes tools/heldout/edge2_verdicts.json
  python3 tools/heldout/edge2.py jobs OUT.json          the job list for tools/build-nanogpt-probe/drive.py
  python3 tools/heldout/edge2.py records DIR OUT.jsonl  DIR's RESULT records (drive.py's <kind>.jsonl) with the
                                                        verdicts given before they ran
"""
import json
import os
import subprocess
import sys

from heldout_common import cache

HERE = os.path.dirname(os.path.abspath(__file__))
VERDICTS = os.path.join(HERE, 'edge2_verdicts.json')
KINDS = ('ng', 'bng', 'nc', 'spd')


def torchrun1(script, *args):
    return ['python3', '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=1', script, *args]


def train_py(torchrun, dtype, T, GA):
    """nanoGPT train.py, GPT-2 124M eager (tools/nanogpt-probe/run_train.py)."""
    keys = ['--n_layer=12', '--n_head=12', '--n_embd=768', '--dropout=0.0', '--bias=False', f'--dtype={dtype}',
            '--compile=False', f'--block_size={T}', f'--gradient_accumulation_steps={GA}']

    def mk(cap, B, n):
        args = keys + [f'--batch_size={B}', '--eval_iters=2']
        probe = ['tools/nanogpt-probe/run_train.py', n, '50304'] + args
        cmd = torchrun1(*probe) if torchrun else ['python3', *probe]
        return args + (['--torchrun=True'] if torchrun else []), cmd, {}
    return mk


def build_nanogpt(torchrun, T, GA, alloc):
    """build-nanogpt train_gpt2.py, eager (tools/build-nanogpt-probe/run_train.py)."""
    def mk(cap, B, n):
        args = ['--program=build-nanogpt', f'--B={B}', f'--T={T}', f'--total_batch_size={GA * B * T}',
                '--use_compile=False', f'--allocator={alloc}'] + (['--torchrun=True'] if torchrun else [])
        probe = ['tools/build-nanogpt-probe/run_train.py', n, str(B), str(T), str(GA * B * T), '0']
        cmd = torchrun1(*probe) if torchrun else ['python3', *probe]
        return args, cmd, {'ALLOC': 'expandable' if alloc == 'expandable_segments' else 'default'}
    return mk


def nanochat(depth, T, alloc):
    """nanochat base_train.py, SSSL, two micro-steps (tools/nanochat-probe/run_base.py)."""
    def mk(cap, B, n):
        argv = [f'--depth={depth}', f'--device-batch-size={B}', f'--max-seq-len={T}', '--window-pattern=SSSL',
                f'--total-batch-size={2 * B * T}', '--num-iterations=3', '--eval-every=1000',
                f'--eval-tokens={2 * B * T}', '--core-metric-every=-1', '--sample-every=-1', '--warmup-steps=1']
        return (['--program=nanochat', *argv, f'--allocator={alloc}'],
                ['python3', 'tools/nanochat-probe/run_base.py', n, *argv],
                {'ALLOC': 'expandable' if alloc == 'expandable_segments' else 'default', **cache(n)})
    return mk


def ddp_script_one_gpu(T):
    """LLMs-from-scratch 02_opt_multi_gpu_ddp.py on one GPU (torchrun --nproc_per_node=1), GPT-2 124M, compiled."""
    def mk(cap, B, n):
        args = ['--emb_dim=768', '--n_heads=12', '--n_layers=12', f'--context_length={T}', f'--batch_size={B}',
                '--drop_rate=0.1', '--qkv_bias=False', '--num_epochs=1', f'--train_tokens={min(432000, 12 * B * T + 1)}',
                '--val_tokens=48000', '--eval_freq=5', 'python', '02_opt_multi_gpu_ddp.py']
        c, res = f'/tmp/spdcache/{n}', f'/tmp/spdres/{n}'
        run = torchrun1('tools/llms-from-scratch-probe/run_speed.py', n, '--script', '02', '--emb', '768', '--heads',
                        '12', '--layers', '12', '--ctx', str(T), '--batch', str(B), '--drop', '0.1', '--qkv-bias', '0',
                        '--epochs', '1', '--steps', '12', '--cache-dir', c, '--result-file', res + '.rank{rank}.txt')
        cmd = ['bash', '-c', f'rm -rf {c} {res}.rank*; mkdir -p /tmp/spdres; {" ".join(run)}; cat {res}.rank0.txt']
        return args, cmd, {'TOKENIZER': 'stub'}
    return mk


# (name prefix, program, kind, cap GiB, job maker, batch sizes to search (low, high))
CASES = [
    ('ho2_ng_tr1_e', "train.py under torchrun, one GPU, eager bf16 T1024 GA4", 'ng', 23.0,
     train_py(True, 'bfloat16', 1024, 4), (1, 64)),
    ('ho2_ng_fp16_t256', "train.py eager fp16 T256 GA8", 'ng', 11.25, train_py(False, 'float16', 256, 8), (1, 256)),
    ('ho2_bng_tr1', "train_gpt2.py under torchrun, one GPU, eager T1024 GA2", 'bng', 23.0,
     build_nanogpt(True, 1024, 2, 'default'), (1, 64)),
    ('ho2_bng_t256', "train_gpt2.py eager T256 GA2", 'bng', 11.25, build_nanogpt(False, 256, 2, 'default'), (1, 128)),
    ('ho2_nc_def_d8_t1024', "base_train.py d8 T1024, default allocator", 'nc', 11.25,
     nanochat(8, 1024, 'default'), (1, 96)),
    ('ho2_nc_d20_t2048', "base_train.py d20 T2048, expandable segments", 'nc', 23.0,
     nanochat(20, 2048, 'expandable_segments'), (1, 24)),
    ('ho2_spd_ddp1_c1024', "02_opt_multi_gpu_ddp.py on one GPU, T1024", 'spd', 11.25, ddp_script_one_gpu(1024), (1, 64)),
    ('ho2_spd_ddp1_c1024', "02_opt_multi_gpu_ddp.py on one GPU, T1024", 'spd', 23.0, ddp_script_one_gpu(1024), (1, 64)),
]


def ask(vramfit, args, cap, card):
    a = [vramfit, '--json', '--vram-gib', str(cap), '--context-gib', '0', '--other-gib', '0'] + card + args
    d = json.loads(subprocess.run(a, check=True, capture_output=True, text=True).stdout)
    v = d['verdict']
    return {'fits': v['fits'], 'need_bytes': v['need_bytes'], 'risk': v.get('risk'), 'peak_phase': d.get('peak_phase'),
            'argv': a[1:]}


def verdicts(vramfit):
    head = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True, cwd=HERE).stdout.strip()
    out = {'vramfit': {'version': subprocess.run([vramfit, '--version'], capture_output=True, text=True).stdout.strip(),
                       'repo_head': head},
           'protocol': '--vram-gib CAP --context-gib 0 --other-gib 0, as the custom card and with --gpu h200',
           'runs': []}
    for prefix, what, kind, cap, mk, (lo, hi) in CASES:
        memo = {}

        def fits(B):
            if B not in memo:
                memo[B] = ask(vramfit, mk(cap, B, '')[0], cap, ['--gpu', 'h200'])
            return memo[B]['fits']
        assert fits(lo), (prefix, cap)
        a, b = lo, hi + 1
        while b - a > 1:
            m = (a + b) // 2
            a, b = (m, b) if fits(m) else (a, m)
        assert a < hi, (prefix, cap, 'every batch fits')
        for B in range(a + 1, min(a + 4, hi + 1)):  # not monotone where the cap makes the allocator retry
            assert not fits(B), (prefix, cap, B, 'fits above the bisected edge')
        for B in (a, a + 1):
            n = f'{prefix}_cap{int(cap)}_b{B}'
            args, cmd, env = mk(cap, B, n)
            out['runs'].append({'name': n, 'what': what, 'kind': kind, 'cap_gib': cap, 'batch_size': B,
                                'h200': memo[B], 'custom_card': ask(vramfit, args, cap, []),
                                'cmd': cmd, 'env': {**env, 'CAP_GIB': str(cap)}})
        print(prefix, cap, 'largest that fits (h200):', a, flush=True)
    json.dump(out, open(VERDICTS, 'w'), indent=1)
    print(len(out['runs']), 'runs ->', VERDICTS)


def jobs(path):
    V = json.load(open(VERDICTS))
    J = [{'kind': r['kind'], 'name': r['name'], 'gb': r['cap_gib'] + 1.5, 'cmd': r['cmd'], 'env': r['env']}
         for r in V['runs']]
    J.sort(key=lambda j: (j['kind'] not in ('spd', 'nc'), -j['gb']))  # the compiled ones first: they take longest
    json.dump(J, open(path, 'w'), indent=0)
    print(len(J), 'jobs')


def records(results, path):
    V = json.load(open(VERDICTS))
    got = {}
    for kind in KINDS:
        f = os.path.join(results, f'{kind}.jsonl')
        for line in open(f) if os.path.exists(f) else []:
            if line.strip():
                r = json.loads(line)
                got[r['name']] = r
    with open(path, 'w') as f:
        for v in V['runs']:
            r = got.get(v['name'])
            if r is None:
                print('missing', v['name'])
                continue
            r['vramfit_before_the_run'] = {'h200': v['h200'], 'custom_card': v['custom_card'], **V['vramfit']}
            f.write(json.dumps(r) + '\n')


if __name__ == '__main__':
    if sys.argv[1:2] == ['verdicts']:
        verdicts(sys.argv[2] if len(sys.argv) > 2 else 'target/release/vramfit')
    elif sys.argv[1:2] == ['jobs']:
        jobs(sys.argv[2])
    elif sys.argv[1:2] == ['records']:
        records(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
