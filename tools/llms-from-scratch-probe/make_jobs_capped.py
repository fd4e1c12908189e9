"""Capped runs at a card's edge for the four LLMs-from-scratch probes (2026-11-30): the real scripts, each run capped
with CAP_GIB (torch.cuda.set_per_process_memory_fraction; book_probe.cap_process) at what a 12 GB card (11.25 GiB)
or a 24 GB card (23.0 GiB) leaves usable, at the batch size vramfit says is the largest that fits that cap and the
next one up (vramfit: out of memory), so that each verdict is tested where it is hardest. The protocol is
tools/capped_jobs.py's (build-nanogpt, nanochat): vramfit is asked with --vram-gib CAP --context-gib 0
--other-gib 0 (the cap is the allocator's whole budget).

usage (repo root):
  python3 tools/llms-from-scratch-probe/make_jobs_capped.py verdicts [VRAMFIT]
      asks vramfit (default target/release/vramfit; needs no GPU) for every program and cap, bisects the batch size,
      and writes tools/llms-from-scratch-probe/capped_verdicts.json: the chosen runs with vramfit's verdict (fits,
      need_bytes, ...) and the exact arguments it was asked with.
  python3 tools/llms-from-scratch-probe/make_jobs_capped.py jobs OUT.json
      the job list for tools/build-nanogpt-probe/drive.py, read from capped_verdicts.json (on the device: no vramfit).
  python3 tools/llms-from-scratch-probe/make_jobs_capped.py records RESULTS_DIR OUT.jsonl
      the device's RESULT records (RESULTS_DIR/{lfs,spd,cf,in}.jsonl) + capped_verdicts.json's `vramfit_verdict`,
      `program` and `device_call`, in capped_verdicts.json's order, one JSON object a line. A ch07 run that ran out
      of memory before generating gets its `dataset.sample_prompt_tokens` / `respond_prompt_tokens` from
      `dataset.prompt_tokens_of_data` (marked `prompt_tokens_source`), so its config reads as the uncapped ones'.

Which setting scales, per program (each at one fixed shape; the batch size is the only thing that moves):
  llms-from-scratch-ch05        gpt_train.py, GPT-2 124M, context 256, the-verdict.txt x4 (18,517 / 2,065 tokens:
                                72 training sequences, so batches up to 72 train; the real text's 18 would stop
                                the 23 GiB edge), 2 epochs as the uncapped runs
  llms-from-scratch-ch05-speed  01_opt_single_gpu.py as shipped (124M, context 1024, compiled, bf16), 1 epoch,
                                --steps 12, a cold Inductor/Triton cache of its own (a user's first run)
  llms-from-scratch-ch06        gpt_class_finetune.py, gpt2-small, texts padded to 1,024 tokens, 1 epoch
  llms-from-scratch-ch07        gpt_instruction_finetuning.py, gpt2-medium (the script's), examples of 256 tokens,
                                1 epoch, 2 test responses
"""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
P = 'tools/llms-from-scratch-probe/'
VERDICTS = os.path.join(HERE, 'capped_verdicts.json')
CAPS = (11.25, 23.0)
TC = json.load(open(os.path.join(HERE, 'token_counts.json')))['texts']


def cap_name(cap):
    return f'cap{int(cap)}'


def ch05(cap, B):
    t = TC['verdict_x4']
    v = ['--program=llms-from-scratch-ch05', '--vocab_size=50257', '--context_length=256', '--emb_dim=768',
         '--n_heads=12', '--n_layers=12', '--drop_rate=0.1', '--qkv_bias=False', f'--batch_size={B}',
         '--num_epochs=2', f'--train_tokens={t["train"]}', f'--val_tokens={t["val"]}']
    n = f'lfs_{cap_name(cap)}_c256_b{B}_x4'
    cmd = ['python3', P + 'run_train.py', n, '--emb', '768', '--heads', '12', '--layers', '12', '--ctx', '256',
           '--batch', str(B), '--drop', '0.1', '--qkv-bias', '0', '--text', 'verdict_x4', '--epochs', '2']
    return n, v, cmd


def speed(cap, B):
    T = 1024
    v = ['--program=llms-from-scratch-ch05-speed', '--context_length=1024', '--emb_dim=768', '--n_heads=12',
         '--n_layers=12', '--drop_rate=0.1', '--qkv_bias=False', f'--batch_size={B}', '--num_epochs=1',
         f'--train_tokens={min(432000, 12 * B * T + 1)}', '--val_tokens=48000']
    n = f'spd_{cap_name(cap)}_c1024_b{B}'
    cache = f'/tmp/spdcache/{n}'  # run_speed.py: TORCHINDUCTOR_CACHE_DIR=<cache>/inductor, TRITON_CACHE_DIR=<cache>/triton
    run = ['python3', P + 'run_speed.py', n, '--emb', '768', '--heads', '12', '--layers', '12', '--ctx', str(T),
           '--batch', str(B), '--drop', '0.1', '--qkv-bias', '0', '--epochs', '1', '--steps', '12',
           '--cache-dir', cache]
    return n, v, ['bash', '-c', f'rm -rf {cache}; ' + ' '.join(run)]


def ch06(cap, B):
    v = ['--program=llms-from-scratch-ch06', '--CHOOSE_MODEL=gpt2-small (124M)', f'--batch_size={B}',
         '--num_epochs=1', '--drop_rate=0.0', '--max_length=1024', '--train_rows=1045', '--val_rows=149']
    n = f'cf_{cap_name(cap)}_s_L1024_b{B}'
    cmd = ['python3', P + 'run_finetune.py', n, '--model', 'small', '--batch', str(B), '--max-len', '1024',
           '--epochs', '1']
    return n, v, cmd


def ch07(cap, B):
    # prompts: format_input of val_data[0] / test_data[0] for examples of 256 stub tokens (136 words, as every
    # uncapped L256 record's sample_prompt_tokens / respond_prompt_tokens); 1,100 entries as run_instruct.py writes
    v = ['--program=llms-from-scratch-ch07', '--CHOOSE_MODEL=gpt2-medium (355M)', f'--batch_size={B}',
         '--num_epochs=1', '--max_length=256', '--entries=1100', '--sample_prompt=136', '--test_prompt=136']
    n = f'in_{cap_name(cap)}_m_L256_b{B}'
    cmd = ['python3', P + 'run_instruct.py', n, '--model', 'medium', '--batch', str(B), '--len', '256',
           '--epochs', '1']
    return n, v, cmd


# program id, kind (drive.py's $OUT/<kind>.jsonl), job maker, the batch sizes the data allows (low, high),
# rough wall seconds of a fitting run with ~7 at once (for the order: longest first)
PROGRAMS = [('llms-from-scratch-ch07', 'in', ch07, (1, 935), 200),
            ('llms-from-scratch-ch05-speed', 'spd', speed, (1, 256), 100),
            ('llms-from-scratch-ch06', 'cf', ch06, (1, 1045), 80),
            ('llms-from-scratch-ch05', 'lfs', ch05, (1, 72), 20)]


def ask(vramfit, args, cap):
    a = [vramfit] + args + ['--vram-gib', str(cap), '--context-gib', '0', '--other-gib', '0', '--json']
    d = json.loads(subprocess.run(a, check=True, capture_output=True, text=True).stdout)
    v = d['verdict']
    return {'fits': v['fits'], 'need_bytes': v['need_bytes'], 'need_gib': round(v['need_bytes'] / 2 ** 30, 4),
            'risk': v.get('risk'), 'headroom_bytes': v.get('headroom_bytes'), 'peak_phase': d.get('peak_phase'),
            'peak_stage': d.get('peak_stage'), 'peak_bytes': d.get('peak_bytes'),
            'largest_batch_size_that_fits': d.get('largest_batch_size_that_fits'),
            'args': args + ['--vram-gib', str(cap), '--context-gib', '0', '--other-gib', '0', '--json']}


def verdicts(vramfit):
    head = subprocess.run(['git', '-C', HERE, 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(['git', '-C', HERE, 'status', '--porcelain', '--', '../../crates', '../../src'],
                           capture_output=True, text=True).stdout.strip()
    version = subprocess.run([vramfit, '--version'], capture_output=True, text=True).stdout.strip()
    out = {'vramfit': {'binary': vramfit, 'version': version, 'repo_head': head,
                       'crates_or_src_uncommitted_changes': bool(dirty)},
           'protocol': '--vram-gib CAP --context-gib 0 --other-gib 0', 'runs': [], 'scans': []}
    for prog, kind, mk, (lo, hi), est in PROGRAMS:
        for cap in CAPS:
            memo = {}

            def fits(B):
                if B not in memo:
                    memo[B] = ask(vramfit, mk(cap, B)[1], cap)
                return memo[B]['fits']

            assert fits(lo), (prog, cap, 'even the smallest batch does not fit')
            a, b = lo, hi + 1  # fits(a); b: the first that does not (or past the data)
            while b - a > 1:
                m = (a + b) // 2
                a, b = (m, b) if fits(m) else (a, m)
            best = a
            assert best < hi, (prog, cap, 'every batch the data allows fits')
            # the largest that fits: no larger batch within the next 4 fits either (the need is not monotone in B
            # where the cap makes the allocator free its cache and retry)
            for B in range(best + 1, min(best + 5, hi + 1)):
                assert not fits(B), (prog, cap, B, 'fits above the bisected edge')
            out['scans'].append({'program': prog, 'cap_gib': cap,
                                 'asked': {str(B): [v['fits'], v['need_bytes']] for B, v in sorted(memo.items())}})
            for B in (best, best + 1):
                n, args, cmd = mk(cap, B)
                out['runs'].append({'name': n, 'program': prog, 'kind': kind, 'cap_gib': cap, 'batch_size': B,
                                    'side': 'largest that vramfit says fits' if B == best else
                                    'the next one up (vramfit: out of memory)',
                                    'est_s': est,  # both sides: a verdict that is wrong runs the whole run
                                    'vramfit_verdict': memo[B], 'cmd': cmd})
            print(prog, cap, 'largest fit', best, [(B, memo[B]['fits'], memo[B]['need_gib']) for B in (best, best + 1)],
                  flush=True)
    json.dump(out, open(VERDICTS, 'w'), indent=1)
    print(len(out['runs']), 'runs ->', VERDICTS)


def jobs(path):
    V = json.load(open(VERDICTS))
    J = []
    for r in V['runs']:
        J.append({'kind': r['kind'], 'name': r['name'], 'gb': r['cap_gib'] + 1, 'est_s': r['est_s'], 'cmd': r['cmd'],
                  'env': {'CAP_GIB': str(r['cap_gib']), 'TOKENIZER': 'stub'}})
    J.sort(key=lambda j: -j['est_s'])  # longest first; drive.py starts the first that fits next to the running ones
    json.dump(J, open(path, 'w'), indent=0)
    print(len(J), 'jobs; GiB if all at once', sum(j['gb'] for j in J), [(j['name'], j['gb'], j['est_s']) for j in J])


def records(results_dir, path, device_call='capped-call1'):
    V = json.load(open(VERDICTS))
    got = {}
    for kind in ('lfs', 'spd', 'cf', 'in'):
        f = os.path.join(results_dir, f'{kind}.jsonl')
        if os.path.exists(f):
            for line in open(f):
                if line.strip():
                    r = json.loads(line)
                    got[r['name']] = r
    out, missing = [], []
    for v in V['runs']:
        r = got.get(v['name'])
        if r is None:
            missing.append(v['name'])
            continue
        assert r.get('cap_on_purpose') is True and r.get('allocator_cap_gib') == v['cap_gib'], v['name']
        r['program'] = v['program']
        d = r.get('dataset') or {}
        if v['kind'] == 'in' and not d.get('sample_prompt_tokens') and isinstance(d.get('prompt_tokens_of_data'), dict):
            # ran out of memory before generating: the prompts the script would have given generate (its own
            # format_input of the data, as run_instruct.py computes them), so the config reads as the uncapped records'
            d['sample_prompt_tokens'] = [d['prompt_tokens_of_data']['sample']]
            d['respond_prompt_tokens'] = d['prompt_tokens_of_data']['respond']
            d['prompt_tokens_source'] = 'prompt_tokens_of_data (the run ran out of memory before generating)'
        r['vramfit_verdict'] = {k: v['vramfit_verdict'][k] for k in
                                ('fits', 'need_bytes', 'risk', 'headroom_bytes', 'peak_phase', 'peak_stage', 'args')}
        r['vramfit_verdict']['vramfit'] = V['vramfit']
        r['device_call'] = device_call
        out.append(r)
    with open(path, 'w') as f:
        for r in out:
            f.write(json.dumps(r) + '\n')
    print(len(out), 'records ->', path, '; missing:', missing)


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'verdicts':
        verdicts(sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, '..', '..', 'target', 'release', 'vramfit'))
    elif cmd == 'jobs':
        jobs(sys.argv[2])
    elif cmd == 'records':
        records(sys.argv[2], sys.argv[3], *sys.argv[4:5])
    else:
        sys.exit(__doc__)
