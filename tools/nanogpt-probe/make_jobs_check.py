"""Compiled configs held out from the model's development (none of them in make_jobs.py), each on its own fresh
Inductor/Triton cache (a user's first run): python3 make_jobs_check.py OUT.json  (see README.md)."""
import json, sys

P = 'tools/nanogpt-probe/run_train_iso.py'
GPT2 = dict(n_layer=12, n_head=12, n_embd=768, dropout=0.0)
CHAR = dict(n_layer=6, n_head=6, n_embd=384, dropout=0.2)
MINI = dict(n_layer=4, n_head=4, n_embd=256, dropout=0.0)
DT = {'fp32': 'float32', 'bf16': 'bfloat16', 'fp16': 'float16'}
# (dtype, arch name, arch, V, T, B, GA, GiB for the scheduler)
RUNS = [
    ('fp32', 'char', CHAR, 65, 64, 1, 1, 3), ('bf16', 'char', CHAR, 65, 256, 12, 1, 3),
    ('bf16', 'char', CHAR, 65, 128, 32, 2, 3), ('fp16', 'char', CHAR, 65, 512, 8, 1, 3),
    ('fp32', 'char', CHAR, 65, 512, 32, 1, 10), ('fp32', 'char', CHAR, 65, 128, 4, 2, 3),
    ('bf16', 'char', CHAR, 65, 2048, 4, 1, 4), ('bf16', 'mini', MINI, 65, 256, 32, 1, 3),
    ('fp32', 'gpt2', GPT2, 50304, 512, 2, 1, 10), ('bf16', 'gpt2', GPT2, 50304, 512, 8, 3, 12),
    ('fp16', 'gpt2', GPT2, 50304, 128, 32, 1, 12), ('fp32', 'gpt2', GPT2, 50304, 1024, 2, 1, 12),
    ('bf16', 'gpt2', GPT2, 50304, 2048, 2, 1, 12), ('fp32', 'mini', MINI, 50304, 256, 8, 1, 6),
]


def jobs():
    J = []
    for dt, an, a, V, T, B, GA, gb in RUNS:
        name = f'chk_{dt}_{an}_T{T}_B{B}_ga{GA}'
        argv = [f'--{k}={v}' for k, v in a.items()] + [
            '--compile=True', f'--dtype={DT[dt]}', f'--batch_size={B}', f'--block_size={T}',
            f'--gradient_accumulation_steps={GA}', '--max_iters=3', '--eval_iters=2', '--eval_interval=1000']
        env = {'CAP_GIB': str(gb * 1.5), 'TORCHINDUCTOR_CACHE_DIR': f'/tmp/ic/{name}',
               'TRITON_CACHE_DIR': f'/tmp/ic/{name}/triton'}
        J.append({'kind': 'check', 'name': name, 'cmd': ['python3', P, name, str(V)] + argv, 'env': env, 'gb': gb * 1.5})
    return J


if __name__ == '__main__':
    json.dump(jobs(), open(sys.argv[1], 'w'), indent=1)
    print(len(jobs()), 'jobs')
