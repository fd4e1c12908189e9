"""Write the job lists (JSON) for drive.py: the configurations measured for vramfit (see README.md)."""
import json, sys

P = 'tools/nanochat-probe/'


def bargv(d, B, T, pat, GA, core=-1):
    return [f'--depth={d}', f'--device-batch-size={B}', f'--max-seq-len={T}', f'--window-pattern={pat}',
            f'--total-batch-size={GA * B * T}', '--num-iterations=3', '--eval-every=1000',
            f'--eval-tokens={2 * B * T}', f'--core-metric-every={core}', '--sample-every=-1', '--warmup-steps=1']


# (name, depth, B, T, pattern, GA); the first ten repeat nanochat.jsonl runs (nc_cal_XX) under expandable segments
EXP = [
    ('nc_exp_cal06', 20, 1, 512, 'SSSL', 4), ('nc_exp_cal00', 4, 8, 512, 'SSL', 1),
    ('nc_exp_cal03', 6, 4, 2048, 'L', 1), ('nc_exp_cal04', 12, 8, 1024, 'SSSL', 1),
    ('nc_exp_cal13', 6, 8, 512, 'SSSL', 1), ('nc_exp_cal19', 10, 4, 1024, 'SSSL', 2),
    ('nc_exp_cal09', 20, 8, 256, 'SSSL', 1), ('nc_exp_cal22', 12, 8, 512, 'L', 2),
    ('nc_exp_cal25', 10, 8, 512, 'L', 2), ('nc_exp_cal15', 20, 4, 256, 'L', 1),
    ('nc_exp_10', 2, 4, 1024, 'SSL', 1), ('nc_exp_11', 4, 32, 256, 'L', 2),
    ('nc_exp_22', 20, 4, 1024, 'SSL', 2), ('nc_exp_12', 6, 2, 1024, 'SSL', 4),
    ('nc_exp_13', 6, 16, 2048, 'SSSL', 1), ('nc_exp_14', 8, 4, 512, 'L', 2),
    ('nc_exp_15', 10, 16, 1024, 'SSL', 1), ('nc_exp_23', 20, 16, 512, 'L', 1),
    ('nc_exp_16', 10, 1, 2048, 'L', 2), ('nc_exp_17', 12, 16, 512, 'SSSL', 4),
    ('nc_exp_18', 12, 4, 2048, 'L', 1), ('nc_exp_19', 16, 4, 1024, 'SSL', 2),
    ('nc_exp_20', 16, 2, 256, 'SSSL', 1), ('nc_exp_21', 20, 1, 256, 'SSSL', 1),
    ('nc_exp_24', 8, 32, 1024, 'SSSL', 1), ('nc_exp_25', 2, 16, 2048, 'L', 4),
]
# the other twenty nanochat.jsonl configurations (second device call), same names nc_exp_calXX
def cal_rest(done):
    import os
    J = []
    src = os.environ.get('NANOCHAT_JSONL', 'tools/nanochat-probe/nanochat_cal_configs.json')
    for c in json.load(open(src)):
        n = 'nc_exp_cal' + c['name'][-2:]
        if n not in done:
            J.append((n, c['depth'], c['B'], c['T'], c['pat'], c['GA'], c['gb']))
    return J


CORE = [('nc_core_d4_T512', 4, 8, 512, 'SSL', 1), ('nc_core_d8_T1024', 8, 8, 1024, 'SSSL', 1),
        ('nc_core_d12_T1024', 12, 4, 1024, 'SSSL', 1), ('nc_core_d12_T2048', 12, 4, 2048, 'L', 1)]
CORE2 = [('nc_core_d20_T256', 20, 1, 256, 'SSSL', 1), ('nc_core_d2_T512', 2, 4, 512, 'L', 1),
         ('nc_core_d16_T1024', 16, 2, 1024, 'SSSL', 1)]
# (name, depth, base T0, sft B, sft T, GA, load_optimizer)
SFT = [('nc_sft_d4_T512', 4, 512, 8, 512, 1, 1), ('nc_sft_d8_T1024', 8, 1024, 4, 1024, 2, 1),
       ('nc_sft_d12_T512', 12, 512, 8, 512, 1, 1), ('nc_sft_d12_T512_noopt', 12, 512, 8, 512, 1, 0),
       ('nc_sft_d6_T1024', 6, 1024, 4, 1024, 1, 1)]
CORE3 = [('nc_core_small_d20_T256', 20, 1, 256, 'SSSL', 1), ('nc_core_small_d12_T512', 12, 2, 512, 'SSSL', 1),
         ('nc_core_small_d4_T256', 4, 2, 256, 'L', 1)]
SMALL_SHAPES = '1x8,1x16,1x32,1x64,2x64,4x64,1x128,4x128,2x256'
SFT2 = [('nc_sft_d16_T1024', 16, 1024, 4, 1024, 1, 1), ('nc_sft_d20_T512_B2_GA2', 20, 512, 2, 512, 2, 1)]
TRACE = [('nc_trace_d20_default', 20, 'default'), ('nc_trace_d20_expandable', 20, 'expandable'),
         ('nc_trace_d16_default', 16, 'default')]


def jobs(which):
    J = []
    if 'trace' in which:
        for n, d, alloc in TRACE:
            J.append({'kind': 'trace', 'name': n, 'cmd': ['python3', P + 'run_base.py', n] + bargv(d, 1, 256, 'SSSL', 1),
                      'env': {'ALLOC': alloc, 'TRACE': f'/tmp/traces/{n}.pkl'}})
    if 'core' in which:
        for n, d, B, T, pat, GA in CORE:
            J.append({'kind': 'core', 'name': n, 'cmd': ['python3', P + 'run_core.py', n] + bargv(d, B, T, pat, GA, core=2)})
    if 'cal' in which:
        done = {e[0] for e in EXP}
        for n, d, B, T, pat, GA, gb in cal_rest(done):
            J.append({'kind': 'exp', 'name': n, 'gb': gb,
                      'cmd': ['python3', P + 'run_base.py', n] + bargv(d, B, T, pat, GA)})
    if 'core2' in which:
        for n, d, B, T, pat, GA in CORE2:
            J.append({'kind': 'core', 'name': n, 'gb': 16, 'cmd': ['python3', P + 'run_core.py', n] + bargv(d, B, T, pat, GA, core=2)})
    if 'core3' in which:  # small task batches, where the bf16 lm_head weight copy can dominate
        for n, d, B, T, pat, GA in CORE3:
            J.append({'kind': 'core', 'name': n, 'gb': 16, 'env': {'CORE_SHAPES': SMALL_SHAPES},
                      'cmd': ['python3', P + 'run_core.py', n] + bargv(d, B, T, pat, GA, core=2)})
    if 'sft2' in which:
        for n, d, T0, B, T, GA, lo in SFT2:
            J.append(sft_job(n, d, T0, B, T, GA, lo))
    if 'sft' in which:
        for n, d, T0, B, T, GA, lo in SFT:
            J.append(sft_job(n, d, T0, B, T, GA, lo))
    if 'exp' in which:
        for n, d, B, T, pat, GA in EXP:
            J.append({'kind': 'exp', 'name': n, 'cmd': ['python3', P + 'run_base.py', n] + bargv(d, B, T, pat, GA)})
    return J


# --- eval / SFT-eval / RL stages (stages_call.sh; README "Eval, SFT-eval and RL stages") -----------------------
# checkpoints: (depth, T) -> a real base checkpoint (base_train.py, 1 step) and SFT checkpoint (chat_sft.py, 1 step),
# both under the model tag sft_st_ck_d<depth>, made by run_sft.py
STAGE_CK = [(4, 512), (8, 512), (12, 1024)]
# base_eval.py: (depth, --device-batch-size, --max-per-task); --split-tokens = 2 * B * T (two bpb steps per split)
BEVAL = [(4, 8, 16), (4, 32, 48), (8, 8, 16), (8, 16, 24), (8, 32, 48), (12, 4, 16), (12, 16, 32)]
# chat_eval.py -i sft, categorical (ARC-Easy|ARC-Challenge|MMLU, -x 64): (depth, -b)
CEVAL_CAT = [(4, 8), (4, 32), (8, 8), (8, 16), (8, 32), (12, 8), (12, 32)]
# chat_eval.py -i sft, generative (GSM8K|HumanEval, -x 2): (depth, -n, -m); -t 1.0 when n > 1
CEVAL_GEN = [(4, 1, 128), (4, 4, 256), (8, 1, 256), (8, 8, 128), (8, 4, 512), (12, 1, 512), (12, 4, 256)]
# chat_rl.py: (depth, --device-batch-size, --num-samples, --max-new-tokens); 1 example per step, 3 steps, 1 eval problem
RL = [(4, 4, 8, 128), (4, 8, 16, 256), (8, 4, 8, 256), (8, 8, 16, 256), (8, 16, 16, 128), (12, 4, 8, 128),
      (12, 8, 16, 256)]
# held-out set (stages_call.sh DEADLINE heldout; make_jobs.py kinds `stageck_heldout`, `stage_heldout`): a depth and
# T never measured, the checkpoint made as the ones above; same tables' meaning
STAGE_CK_HELDOUT = [(16, 2048)]
BEVAL_HELDOUT = [(16, 4, 16), (16, 8, 16)]
CEVAL_CAT_HELDOUT = [(16, 8), (16, 16)]
CEVAL_GEN_HELDOUT = [(16, 1, 512), (16, 4, 256)]
# chat_rl.py on the same d16 T2048 checkpoint (stages_call.sh DEADLINE rlheldout; kind `rl_heldout`): (depth, B, N, M),
# flags, RL_TRAIN_LEN and cold private cache as RL's; 'gb' 30 so the driver runs the three side by side, no more
RL_HELDOUT = [(16, 4, 8, 256), (16, 8, 16, 128), (16, 2, 4, 512)]


def cold_env(n, **kw):
    # a fresh, empty Inductor/Triton cache per run (a user's first run)
    return dict(TORCHINDUCTOR_CACHE_DIR=f'/tmp/cache/{n}/inductor', TRITON_CACHE_DIR=f'/tmp/cache/{n}/triton', **kw)


def stage_jobs(which):
    J = []
    T_of = dict(STAGE_CK + STAGE_CK_HELDOUT)
    tag = lambda d: f'sft_st_ck_d{d}'
    if 'stageck' in which or 'stageck_heldout' in which:
        for d, T in (STAGE_CK_HELDOUT if 'stageck_heldout' in which else STAGE_CK):
            n = f'st_ck_d{d}'
            a = [f'--max-seq-len={T}', '--device-batch-size=4', f'--total-batch-size={4 * T}', '--num-iterations=2',
                 '--eval-every=1000', f'--eval-tokens={8 * T}', '--chatcore-every=-1', '--load-optimizer=1']
            J.append({'kind': 'stageck', 'name': n, 'gb': 8, 'env': cold_env(n),
                      'cmd': ['python3', P + 'run_sft.py', n, f'--depth={d}', f'--base-seq-len={T}', '--'] + a})
    if 'stageck_smoke' in which:  # base checkpoint only (stages_call.sh links it as the SFT one)
        n = 'st_ck_d4'
        J.append({'kind': 'stageck', 'name': n, 'gb': 8, 'env': cold_env(n),
                  'cmd': ['python3', P + 'run_sft.py', '--mkckpt', tag(4), '--depth=4', '--device-batch-size=1',
                          '--max-seq-len=512', '--total-batch-size=512', '--num-iterations=1', '--eval-every=-1',
                          '--core-metric-every=-1', '--sample-every=-1', '--warmup-steps=1', '--window-pattern=SSSL']})
    smoke = 'stage_smoke' in which
    held = 'stage_heldout' in which
    if 'beval' in which or smoke or held:
        for d, B, m in (BEVAL[:1] if smoke else BEVAL_HELDOUT if held else BEVAL):
            n = f'nc_beval_d{d}_b{B}_m{m}'
            J.append({'kind': 'beval', 'name': n, 'gb': 8, 'env': cold_env(n),
                      'cmd': ['python3', P + 'run_base_eval.py', n, f'--model-tag={tag(d)}', f'--device-batch-size={B}',
                              f'--max-per-task={m}', f'--split-tokens={2 * B * T_of[d]}']})
    if 'ceval' in which or smoke or held:
        for d, b in (CEVAL_CAT[:1] if smoke else CEVAL_CAT_HELDOUT if held else CEVAL_CAT):
            n = f'nc_ceval_cat_d{d}_b{b}'
            J.append({'kind': 'ceval', 'name': n, 'gb': 8, 'env': cold_env(n),
                      'cmd': ['python3', P + 'run_chat_eval.py', n, '-i', 'sft', '-g', tag(d),
                              '-a', 'ARC-Easy|ARC-Challenge|MMLU', '-b', str(b), '-x', '64']})
        for d, k, m in (CEVAL_GEN[1:2] if smoke else CEVAL_GEN_HELDOUT if held else CEVAL_GEN):
            n = f'nc_ceval_gen_d{d}_n{k}_m{m}'
            J.append({'kind': 'ceval', 'name': n, 'gb': 8, 'env': cold_env(n),
                      'cmd': ['python3', P + 'run_chat_eval.py', n, '-i', 'sft', '-g', tag(d), '-a', 'GSM8K|HumanEval',
                              '-n', str(k), '-m', str(m), '-x', '2', '-t', '1.0' if k > 1 else '0.0']})
    rl_held = 'rl_heldout' in which
    if 'rl' in which or smoke or rl_held:
        for d, B, k, m in (RL[:1] if smoke else RL_HELDOUT if rl_held else RL):
            n = f'nc_rl_heldout_d{d}_b{B}_n{k}_m{m}' if rl_held else f'nc_rl_d{d}_b{B}_n{k}_m{m}'
            J.append({'kind': 'rl', 'name': n, 'gb': 30 if rl_held else 8, 'env': cold_env(n, RL_TRAIN_LEN='3'),
                      'cmd': ['python3', P + 'run_chat_rl.py', n, f'--model-tag={tag(d)}', f'--device-batch-size={B}',
                              f'--num-samples={k}', f'--max-new-tokens={m}', '--examples-per-step=1',
                              '--eval-every=60', '--eval-examples=1', '--save-every=60']})
    # slowest first (RL with the longest rollouts), so the call's tail is short
    J.sort(key=lambda j: 0 if j['kind'] == 'rl' else 1)
    return J


def sft_job(n, d, T0, B, T, GA, lo):
    a = [f'--max-seq-len={T}', f'--device-batch-size={B}', f'--total-batch-size={GA * B * T}',
         f'--num-iterations={3 * GA + 1}', '--eval-every=1000', f'--eval-tokens={2 * B * T}',
         '--chatcore-every=-1', f'--load-optimizer={lo}']
    return {'kind': 'sft', 'name': n, 'gb': 20, 'cmd': ['python3', P + 'run_sft.py', n, f'--depth={d}',
                                                        f'--base-seq-len={T0}', '--'] + a}


if __name__ == '__main__':
    which = sys.argv[1].split(',')
    only = sys.argv[3].split(',') if len(sys.argv) > 3 else None
    J = jobs(which) + stage_jobs(which)
    if only:
        J = [j for j in J if j['name'] in only]
    if 'mixed' in which:  # smoke-test one of each harness early, then the sweep, then the rest
        first = [j for j in J if j['kind'] == 'trace'] + [next(j for j in J if j['kind'] == k) for k in ('core', 'sft')]
        J = first + [j for j in J if j['kind'] == 'exp'] + [j for j in J if j not in first and j['kind'] != 'exp']
    J.sort(key=lambda j: 0 if j.get('gb', 16) > 40 else 1)  # the one huge run first, next to small ones
    json.dump(J, open(sys.argv[2], 'w'), indent=0)
    print(len(J), 'jobs')
