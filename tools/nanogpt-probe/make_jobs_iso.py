"""Job lists for re-measuring the compiled runs with one Inductor cache per run (see README.md, "Re-measured with
isolated caches"). usage: python3 make_jobs_iso.py WAVE OUT.json   WAVE in cold | warm | cross
  cold : every compiled config of make_jobs.py (+ calibration's s_comp_b4 shape), each with its own fresh
         TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR (/tmp/ic/<name>): what a user's first run shows.
  warm : the same runs again, each on the cache its cold run left: what a user's later runs show.
  cross: a run of another dtype on a cache that a run of the same shapes left (the shared-cache case)."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_jobs import RUNS, GPT2, CHAR, DT  # noqa: E402

P = 'tools/nanogpt-probe/run_train_iso.py'
TRACED = {'cmp_fp32_char_T256_B64_ga2', 'cmp_bf16_gpt2_T1024_B4_ga1'}
RUNS = [r for r in RUNS if r[5]] + [('bf16', 'gpt2', 1024, 4, 2, True, False, 8)]
CAP = {36: 40, 20: 40}


def job(dt, m, T, B, GA, gb, wave, cache, trace=False):
    a = GPT2 if m == 'gpt2' else CHAR
    V = 50304 if m == 'gpt2' else 65
    base = f"cmp_{dt}_{m}_T{T}_B{B}_ga{GA}"
    name = f"{base}_{wave}"
    argv = [f'--{k}={v}' for k, v in a.items()] + [
        '--compile=True', f'--dtype={DT[dt]}', f'--batch_size={B}', f'--block_size={T}',
        f'--gradient_accumulation_steps={GA}', '--max_iters=3', '--eval_iters=2', '--eval_interval=1000']
    cap = CAP.get(gb, gb * 1.5)
    env = {'CAP_GIB': str(cap), 'TORCHINDUCTOR_CACHE_DIR': f'/tmp/ic/{cache}', 'TRITON_CACHE_DIR': f'/tmp/ic/{cache}/triton'}
    if trace:
        env['TRACE'] = os.path.join(os.environ.get('OUT', '/tmp'), f'trace_{name}.json')
    return {'kind': wave, 'name': name, 'cmd': ['python3', P, name, str(V)] + argv, 'env': env, 'gb': cap}


def jobs(wave):
    if wave == 'cross':
        return [job('bf16', 'gpt2', 1024, 4, 1, 8, 'cross', 'cmp_fp32_gpt2_T1024_B4_ga2'),
                job('fp32', 'char', 256, 64, 2, 8, 'cross', 'cmp_bf16_char_T256_B64_ga1'),
                job('fp32', 'char', 256, 16, 1, 4, 'cross', 'cmp_bf16_char_T256_B16_ga2')]
    out = []
    for dt, m, T, B, GA, comp, tr, gb in RUNS:
        base = f"cmp_{dt}_{m}_T{T}_B{B}_ga{GA}"
        out.append(job(dt, m, T, B, GA, gb, wave, base, trace=(wave == 'cold' and base in TRACED)))
    return out


if __name__ == '__main__':
    J = jobs(sys.argv[1])
    json.dump(J, open(sys.argv[2], 'w'), indent=1)
    print(len(J), 'jobs')
