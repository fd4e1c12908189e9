"""Write the job list (JSON) for tools/nanochat-probe/drive.py: the nanoGPT compiled-mode runs (see README.md).
usage: python3 make_jobs.py OUT.json   (TRACE summaries go to $OUT/trace_<name>.json)"""
import json, os, sys

P = 'tools/nanogpt-probe/run_train.py'
GPT2 = dict(n_layer=12, n_head=12, n_embd=768, dropout=0.0)
CHAR = dict(n_layer=6, n_head=6, n_embd=384, dropout=0.2)
DT = {'fp32': 'float32', 'bf16': 'bfloat16', 'fp16': 'float16'}
# (dtype, model, T, B, GA, compile, trace, GiB estimate for the scheduler and cap)
RUNS = [
    ('fp32', 'gpt2', 2048, 1, 1, True, True, 12), ('bf16', 'char', 256, 64, 1, True, True, 6),
    ('bf16', 'char', 2048, 1, 2, True, True, 4),
    ('fp32', 'gpt2', 256, 64, 1, True, False, 36), ('bf16', 'gpt2', 256, 64, 1, True, False, 20),
    ('fp32', 'gpt2', 1024, 4, 2, True, False, 14), ('bf16', 'gpt2', 2048, 1, 2, True, False, 8),
    ('bf16', 'gpt2', 1024, 4, 1, True, False, 8), ('fp32', 'gpt2', 256, 16, 1, True, False, 14),
    ('fp16', 'gpt2', 2048, 1, 1, True, False, 8), ('fp16', 'gpt2', 256, 16, 2, True, False, 8),
    ('fp32', 'char', 2048, 1, 1, True, False, 4), ('fp32', 'char', 256, 64, 2, True, False, 8),
    ('bf16', 'char', 1024, 4, 1, True, False, 4), ('bf16', 'char', 256, 16, 2, True, False, 4),
    ('fp32', 'char', 1024, 4, 1, True, False, 4), ('fp16', 'char', 256, 64, 1, True, False, 6),
    ('fp16', 'char', 1024, 4, 2, True, False, 4), ('fp16', 'char', 2048, 1, 1, True, False, 4),
    ('fp32', 'char', 256, 16, 1, True, False, 4),
    ('fp32', 'gpt2', 2048, 1, 1, False, False, 12), ('bf16', 'char', 256, 64, 1, False, False, 6),
    ('fp32', 'char', 2048, 1, 1, False, False, 4),
]


def jobs():
    J = []
    for dt, m, T, B, GA, comp, tr, gb in RUNS:
        a = GPT2 if m == 'gpt2' else CHAR
        V = 50304 if m == 'gpt2' else 65
        name = f"cmp_{'' if comp else 'eager_'}{dt}_{m}_T{T}_B{B}_ga{GA}"
        argv = [f'--{k}={v}' for k, v in a.items()] + [
            f'--compile={comp}', f'--dtype={DT[dt]}', f'--batch_size={B}', f'--block_size={T}',
            f'--gradient_accumulation_steps={GA}', '--max_iters=3', '--eval_iters=2', '--eval_interval=1000']
        env = {'CAP_GIB': str(gb)}
        if tr:
            env['TRACE'] = os.path.join(os.environ.get('OUT', '/tmp'), f'trace_{name}.json')
        J.append({'kind': 'cmp', 'name': name, 'cmd': ['python3', P, name, str(V)] + argv, 'env': env, 'gb': gb})
    return J


if __name__ == '__main__':
    json.dump(jobs(), open(sys.argv[1], 'w'), indent=1)
    print(len(jobs()), 'jobs')
