"""Job list (JSON) for drive.py: the gpt_train.py configurations measured for vramfit (see README.md).
usage: python3 make_jobs.py OUT.json [main|extra]   (default main: the first device call's 27 runs)"""
import json, sys

P = 'tools/llms-from-scratch-probe/'
M124, MED, SMALL = (768, 12, 12), (1024, 16, 24), (384, 6, 6)  # (emb_dim, n_heads, n_layers)
# (name, (emb, heads, layers), context_length, batch_size, drop_rate, qkv_bias, text)
R = [
    # GPT_CONFIG_124M at the script's context 256, the real text (5,145 tokens); lfs_c256_b2 = the script as shipped
    ('lfs_c256_b1', M124, 256, 1, 0.1, 0, 'verdict_x1'), ('lfs_c256_b2', M124, 256, 2, 0.1, 0, 'verdict_x1'),
    ('lfs_c256_b4', M124, 256, 4, 0.1, 0, 'verdict_x1'), ('lfs_c256_b8', M124, 256, 8, 0.1, 0, 'verdict_x1'),
    ('lfs_c256_b16', M124, 256, 16, 0.1, 0, 'verdict_x1'),
    # dropout off, qkv bias on
    ('lfs_c256_b2_drop0', M124, 256, 2, 0.0, 0, 'verdict_x1'), ('lfs_c256_b8_drop0', M124, 256, 8, 0.0, 0, 'verdict_x1'),
    ('lfs_c256_b2_qkvb', M124, 256, 2, 0.1, 1, 'verdict_x1'), ('lfs_c256_b8_qkvb', M124, 256, 8, 0.1, 1, 'verdict_x1'),
    # model shapes: gpt2-medium (1024, 16 heads, 24 layers) and a small one (384, 6, 6)
    ('lfs_med_c256_b2', MED, 256, 2, 0.1, 0, 'verdict_x1'), ('lfs_med_c256_b8', MED, 256, 8, 0.1, 0, 'verdict_x1'),
    ('lfs_small_c256_b2', SMALL, 256, 2, 0.1, 0, 'verdict_x1'),
    ('lfs_small_c256_b8', SMALL, 256, 8, 0.1, 0, 'verdict_x1'),
    # longer contexts on the text x4 (20,580 tokens: both loaders hold full sequences)
    ('lfs_c512_b2_x4', M124, 512, 2, 0.1, 0, 'verdict_x4'), ('lfs_c512_b4_x4', M124, 512, 4, 0.1, 0, 'verdict_x4'),
    ('lfs_c1024_b2_x4', M124, 1024, 2, 0.1, 0, 'verdict_x4'), ('lfs_c1024_b4_x4', M124, 1024, 4, 0.1, 0, 'verdict_x4'),
    # context 1024 on the real text: the 10 % validation split (534 tokens) holds no full sequence
    ('lfs_c1024_b2', M124, 1024, 2, 0.1, 0, 'verdict_x1'), ('lfs_c1024_b4', M124, 1024, 4, 0.1, 0, 'verdict_x1'),
    ('lfs_c512_b2', M124, 512, 2, 0.1, 0, 'verdict_x1'),
    # more: bigger batches on the longer text, dropout off at 1024, other shapes at longer contexts
    ('lfs_c256_b8_x4', M124, 256, 8, 0.1, 0, 'verdict_x4'), ('lfs_c256_b32_x4', M124, 256, 32, 0.1, 0, 'verdict_x4'),
    ('lfs_c1024_b2_x4_drop0', M124, 1024, 2, 0.0, 0, 'verdict_x4'),
    ('lfs_c1024_b8_x4', M124, 1024, 8, 0.1, 0, 'verdict_x4'),
    ('lfs_med_c512_b4_x4', MED, 512, 4, 0.1, 0, 'verdict_x4'),
    ('lfs_small_c1024_b8_x4', SMALL, 1024, 8, 0.1, 0, 'verdict_x4'),
    ('lfs_small_c512_b16_x4', SMALL, 512, 16, 0.1, 0, 'verdict_x4'),
]
LARGE = (1280, 20, 36)  # gpt2-large shape
# second device call (set "extra"): the script's own 10 epochs, a repeat, gpt2-large, bigger batches
R_EXTRA = [
    ('lfs_c256_b2_e10', M124, 256, 2, 0.1, 0, 'verdict_x1', 10), ('lfs_c256_b8_rep', M124, 256, 8, 0.1, 0, 'verdict_x1'),
    ('lfs_large_c256_b2', LARGE, 256, 2, 0.1, 0, 'verdict_x1'),
    ('lfs_c1024_b4_x4_drop0', M124, 1024, 4, 0.0, 0, 'verdict_x4'),
    ('lfs_c256_b64_x4', M124, 256, 64, 0.1, 0, 'verdict_x4'), ('lfs_c1024_b16_x4', M124, 1024, 16, 0.1, 0, 'verdict_x4'),
]


def gb(m, T, B):
    E, H, L = m
    params = 2 * 50257 * E + 12 * L * E * E + T * E
    act = L * (20 * B * H * T * T + 280 * E * B * T) + 12 * B * T * 50257
    return 1.5 + 1.3 * (16 * params + act) / 2 ** 30


if __name__ == '__main__':
    J = []
    for n, m, T, B, d, qb, text, *ep in (R_EXTRA if sys.argv[2:] == ['extra'] else R):
        cmd = ['python3', P + 'run_train.py', n, '--emb', str(m[0]), '--heads', str(m[1]), '--layers', str(m[2]),
               '--ctx', str(T), '--batch', str(B), '--drop', str(d), '--qkv-bias', str(qb), '--text', text,
               '--epochs', str(ep[0] if ep else 2)]
        J.append({'kind': 'lfs', 'name': n, 'gb': round(gb(m, T, B), 1), 'cmd': cmd})
    J.sort(key=lambda j: -j['gb'])  # biggest first
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    print(len(J), 'jobs; total est GiB', round(sum(j['gb'] for j in J)), [(j['name'], j['gb']) for j in J])
