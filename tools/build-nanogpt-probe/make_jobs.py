"""Job list (JSON) for drive.py: the train_gpt2.py configurations measured for vramfit (see README.md).
usage: python3 make_jobs.py OUT.json     Also writes heldout.txt beside this file (names drawn at random, seed 6104)."""
import json, os, random, sys

P = 'tools/build-nanogpt-probe/'
# (name, B, T, GA, compile, (n_layer, n_head, n_embd) or None for GPT-2 124M, allocator)
R = [
    # eager, GPT-2 124M, default allocator
    ('bng_e_b1_t1024_ga1', 1, 1024, 1, 0, None, 'default'), ('bng_e_b2_t1024_ga1', 2, 1024, 1, 0, None, 'default'),
    ('bng_e_b4_t1024_ga1', 4, 1024, 1, 0, None, 'default'), ('bng_e_b8_t1024_ga1', 8, 1024, 1, 0, None, 'default'),
    ('bng_e_b16_t1024_ga1', 16, 1024, 1, 0, None, 'default'), ('bng_e_b32_t1024_ga1', 32, 1024, 1, 0, None, 'default'),
    ('bng_e_b4_t256_ga1', 4, 256, 1, 0, None, 'default'), ('bng_e_b16_t256_ga1', 16, 256, 1, 0, None, 'default'),
    ('bng_e_b32_t256_ga2', 32, 256, 2, 0, None, 'default'), ('bng_e_b8_t512_ga1', 8, 512, 1, 0, None, 'default'),
    ('bng_e_b32_t512_ga1', 32, 512, 1, 0, None, 'default'), ('bng_e_b2_t512_ga4', 2, 512, 4, 0, None, 'default'),
    ('bng_e_b4_t1024_ga2', 4, 1024, 2, 0, None, 'default'), ('bng_e_b8_t1024_ga4', 8, 1024, 4, 0, None, 'default'),
    ('bng_e_b16_t512_ga2', 16, 512, 2, 0, None, 'default'), ('bng_e_b1_t256_ga4', 1, 256, 4, 0, None, 'default'),
    ('bng_e_b16_t1024_ga2', 16, 1024, 2, 0, None, 'default'), ('bng_e_b2_t256_ga1', 2, 256, 1, 0, None, 'default'),
    # torch.compile, GPT-2 124M, default allocator
    ('bng_c_b4_t1024_ga1', 4, 1024, 1, 1, None, 'default'), ('bng_c_b16_t1024_ga1', 16, 1024, 1, 1, None, 'default'),
    ('bng_c_b8_t512_ga2', 8, 512, 2, 1, None, 'default'), ('bng_c_b32_t256_ga1', 32, 256, 1, 1, None, 'default'),
    ('bng_c_b1_t512_ga1', 1, 512, 1, 1, None, 'default'), ('bng_c_b32_t1024_ga1', 32, 1024, 1, 1, None, 'default'),
    ('bng_c_b16_t256_ga4', 16, 256, 4, 1, None, 'default'), ('bng_c_b2_t1024_ga2', 2, 1024, 2, 1, None, 'default'),
    # other model sizes via GPTConfig(n_layer, n_head, n_embd)
    ('bng_e_l6c384_b16_t512_ga1', 16, 512, 1, 0, (6, 6, 384), 'default'),
    ('bng_e_l24c1024_b8_t1024_ga1', 8, 1024, 1, 0, (24, 16, 1024), 'default'),
    ('bng_e_l4c512_b8_t1024_ga2', 8, 1024, 2, 0, (4, 8, 512), 'default'),
    ('bng_c_l24c1024_b4_t512_ga2', 4, 512, 2, 1, (24, 16, 1024), 'default'),
    ('bng_c_l8c512_b32_t256_ga1', 32, 256, 1, 1, (8, 8, 512), 'default'),
    ('bng_e_l36c1280_b4_t1024_ga1', 4, 1024, 1, 0, (36, 20, 1280), 'default'),
    # expandable segments
    ('bng_x_e_b8_t1024_ga1', 8, 1024, 1, 0, None, 'expandable'), ('bng_x_e_b16_t512_ga2', 16, 512, 2, 0, None, 'expandable'),
    ('bng_x_c_b32_t1024_ga1', 32, 1024, 1, 1, None, 'expandable'), ('bng_x_e_b4_t256_ga4', 4, 256, 4, 0, None, 'expandable'),
    ('bng_x_e_l24c1024_b8_t1024_ga1', 8, 1024, 1, 0, (24, 16, 1024), 'expandable'),
]


def gb(B, T, m):
    L, H, C = m or (12, 12, 768)
    params = 12 * L * C * C + 50304 * C + 1024 * C
    tok_k = B * T / 1024
    return 1.3 * (1.5 + params * 16 / 2 ** 30 + tok_k * (0.5 + 0.5 * L * C / 9216))


if __name__ == '__main__':
    J = []
    for n, B, T, GA, c, m, alloc in R:
        cmd = ['python3', P + 'run_train.py', n, str(B), str(T), str(GA * B * T), str(c)] + [str(x) for x in (m or [])]
        J.append({'kind': 'bng', 'name': n, 'gb': round(gb(B, T, m), 1), 'env': {'ALLOC': alloc}, 'cmd': cmd})
    J.sort(key=lambda j: (j['name'].split('_')[1] != 'c' and '_c_' not in j['name'], -j['gb']))  # compile jobs first
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    names = sorted(r[0] for r in R)
    held = sorted(random.Random(6104).sample(names, len(names) // 4))
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'heldout.txt'), 'w').write('\n'.join(held) + '\n')
    print(len(J), 'jobs;', 'total est GiB', round(sum(j['gb'] for j in J)), '; heldout', held)
