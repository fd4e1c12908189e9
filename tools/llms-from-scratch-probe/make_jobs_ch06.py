"""Job list (JSON) for drive.py: the gpt_class_finetune.py (ch06) configurations measured for vramfit (see README.md).
usage: python3 make_jobs_ch06.py OUT.json [main|extra|all] [NAME,NAME,...]   (default main; names filter the set)"""
import json, sys

P = 'tools/llms-from-scratch-probe/'
SHAPE = {'small': (768, 12, 12), 'medium': (1024, 24, 16), 'large': (1280, 36, 20)}  # emb, layers, heads
# (name, model, batch_size, longest text = max_length, num_epochs); cf_s_L120_b8 = the script as shipped but 2 epochs
# (cf_s_L120_b8_e5: its own 5); the costliest runs (long texts or batch 2 on the bigger models) take 1 epoch
R = [
    ('cf_s_L120_b8', 'small', 8, 120, 2), ('cf_s_L120_b8_e5', 'small', 8, 120, 5),
    ('cf_s_L120_b2', 'small', 2, 120, 2), ('cf_s_L120_b16', 'small', 16, 120, 2),
    ('cf_s_L120_b32', 'small', 32, 120, 2), ('cf_s_L120_b64', 'small', 64, 120, 2),
    ('cf_s_L60_b8', 'small', 8, 60, 2), ('cf_s_L256_b8', 'small', 8, 256, 2), ('cf_s_L512_b8', 'small', 8, 512, 2),
    ('cf_s_L1024_b8', 'small', 8, 1024, 2), ('cf_s_L1024_b2', 'small', 2, 1024, 1),
    ('cf_s_L1024_b32', 'small', 32, 1024, 2), ('cf_s_L512_b32', 'small', 32, 512, 2),
    ('cf_s_L256_b64', 'small', 64, 256, 2),
    ('cf_m_L120_b8', 'medium', 8, 120, 2), ('cf_m_L120_b2', 'medium', 2, 120, 1),
    ('cf_m_L120_b32', 'medium', 32, 120, 2), ('cf_m_L512_b8', 'medium', 8, 512, 2),
    ('cf_m_L1024_b8', 'medium', 8, 1024, 1), ('cf_m_L1024_b32', 'medium', 32, 1024, 1),
    ('cf_l_L120_b8', 'large', 8, 120, 2), ('cf_l_L120_b2', 'large', 2, 120, 1), ('cf_l_L120_b64', 'large', 64, 120, 2),
    ('cf_l_L512_b8', 'large', 8, 512, 1), ('cf_l_L1024_b8', 'large', 8, 1024, 1),
]
# third call: dropout (the frozen blocks run in training mode: each dropout makes a new tensor)
R_DROP = [
    ('cf_s_L120_b8_d01', 'small', 8, 120, 2, '0.1'), ('cf_s_L1024_b8_d01', 'small', 8, 1024, 1, '0.1'),
    ('cf_m_L512_b8_d01', 'medium', 8, 512, 1, '0.1'), ('cf_s_L512_b32_d01', 'small', 32, 512, 1, '0.1'),
]
# second call, if time is left: a repeat, bigger batches at the full context
R_EXTRA = [
    ('cf_s_L120_b8_rep', 'small', 8, 120, 2), ('cf_s_L1024_b64', 'small', 64, 1024, 1),
    ('cf_l_L1024_b16', 'large', 16, 1024, 1), ('cf_m_L256_b64', 'medium', 64, 256, 2),
]


def est(model, B, T, ep):
    """(GiB, GPU seconds alone): rough, for drive.py's packing and ordering only."""
    E, L, H = SHAPE[model]
    params = 50257 * E + 1024 * E + L * (12 * E * E + 13 * E)
    base = 4 * params + L * 4 * 2 ** 20 + 16 * (12 * E * E)
    act = 12 * B * H * T * T * 4 + 80 * B * T * E * 4  # frozen-block transients + the last block's saved tensors
    gb = 1.5 + 1.3 * (base + act) / 2 ** 30
    steps = 1045 // B
    tokens = ep * (1045 + 4 * 10 * B) * T
    flops = tokens * (2 * L * 12 * E * E + 4 * L * T * E)
    return round(gb, 1), round(8 + flops / 40e12 + ep * steps * L * 1e-3, 1)


if __name__ == '__main__':
    sel = {'main': R, 'extra': R_EXTRA, 'all': R + R_EXTRA, 'drop': R_DROP}[sys.argv[2] if len(sys.argv) > 2 else 'main']
    names = set(sys.argv[3].split(',')) if len(sys.argv) > 3 and sys.argv[3] else None
    J = []
    for n, model, B, T, ep, *drop in sel:
        if names and n not in names:
            continue
        gb, s = est(model, B, T, ep)
        cmd = ['python3', P + 'run_finetune.py', n, '--model', model, '--batch', str(B), '--max-len', str(T),
               '--epochs', str(ep)] + ['--drop-rate', drop[0]] * bool(drop)
        J.append({'kind': 'cf', 'name': n, 'gb': gb, 'est_s': s, 'cmd': cmd})
    J.sort(key=lambda j: -j['est_s'])  # longest first
    json.dump(J, open(sys.argv[1], 'w'), indent=0)
    print(len(J), 'jobs; total est GiB', round(sum(j['gb'] for j in J)), 'est GPU s', round(sum(j['est_s'] for j in J)),
          [(j['name'], j['gb'], j['est_s']) for j in J])
