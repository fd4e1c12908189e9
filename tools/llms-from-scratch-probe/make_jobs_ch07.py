"""Job list (JSON) for drive.py: the gpt_instruction_finetuning.py (ch07) configurations measured for vramfit.
usage: python3 make_jobs_ch07.py OUT.json [NAME,NAME,...]"""
import json, sys

P = 'tools/llms-from-scratch-probe/'
SHAPE = {'small': (768, 12, 12), 'medium': (1024, 24, 16), 'large': (1280, 36, 20), 'xl': (1600, 48, 25)}
# (name, model, batch_size, example length = every batch's width, num_epochs); in_m_L256_b8_e2: the script's own
# model, batch and epochs on examples of 256 tokens
R = [
    ('in_m_L256_b8_e2', 'medium', 8, 256, 2), ('in_m_L256_b8', 'medium', 8, 256, 1), ('in_m_L128_b8', 'medium', 8, 128, 1),
    ('in_m_L512_b8', 'medium', 8, 512, 1), ('in_m_L1024_b4', 'medium', 4, 1024, 1),
    ('in_m_L256_b2', 'medium', 2, 256, 1), ('in_m_L256_b16', 'medium', 16, 256, 1),
    ('in_s_L256_b8', 'small', 8, 256, 1), ('in_s_L1024_b8', 'small', 8, 1024, 1),
    ('in_s_L512_b16', 'small', 16, 512, 1), ('in_s_L64_b32', 'small', 32, 64, 1),
    ('in_l_L256_b4', 'large', 4, 256, 1), ('in_l_L512_b4', 'large', 4, 512, 1),
    ('in_x_L128_b4', 'xl', 4, 128, 1),
]


def est(model, B, T, ep):
    """(GiB, GPU seconds alone): rough, for drive.py's packing and ordering only."""
    E, L, H = SHAPE[model]
    params = 2 * 50257 * E + 1024 * E + L * 12 * E * E
    act = L * (34 * B * T * E + 5 * B * H * T * T) * 4 + 3 * B * T * 50257 * 4
    gb = 1.5 + (16 * params + act) / 2 ** 30
    steps = 935 // B
    flops = ep * (steps * 6 + (steps // 5) * 10 * 2) * B * T * params / 1.0
    return round(gb, 1), round(15 + flops / 30e12 + 2 * 256 * params * 2 * 300 / 30e12, 1)


if __name__ == '__main__':
    names = set(sys.argv[2].split(',')) if len(sys.argv) > 2 and sys.argv[2] else None
    J = []
    for n, model, B, T, ep in R:
        if names and n not in names:
            continue
        gb, s = est(model, B, T, ep)
        cmd = ['python3', P + 'run_instruct.py', n, '--model', model, '--batch', str(B), '--len', str(T),
               '--epochs', str(ep)]
        J.append({'kind': 'in', 'name': n, 'gb': gb, 'est_s': s, 'cmd': cmd})
    J.sort(key=lambda j: -j['est_s'])
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    print(len(J), 'jobs; total est GiB', round(sum(j['gb'] for j in J)), 'est GPU s', round(sum(j['est_s'] for j in J)),
          [(j['name'], j['gb'], j['est_s']) for j in J])
