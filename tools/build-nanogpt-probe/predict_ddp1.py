#!/usr/bin/env python3
"""vramfit's predictions for device_call_ddp1.sh's runs, written before they run.

`torchrun --nproc_per_node=1 train_gpt2.py` wraps the model in DDP (train_gpt2.py: `ddp = RANK is set`): the
module state's broadcast and one bucket of every gradient from `DDP(model)` on, rebuilt at step 1's first forward
(vramfit's `torchrun=True`, as for nanoGPT's train.py). The probe runs the real script with run_train.py's changes
(max_steps=3, val_loss_steps=2, 8 stub HellaSwag examples), which vramfit's build-nanogpt replay describes.

usage: python3 tools/build-nanogpt-probe/predict_ddp1.py COMMIT > data/predictions/bng-ddp1.jsonl
"""
import datetime, json, subprocess, sys

RUNS = {  # name: (B, T, total_batch_size, torchrun), as device_call_ddp1.sh passes them
    'bng_t1_b8_ga2': (8, 1024, 16384, True),
    'bng_t1_b16_ga2': (16, 1024, 32768, True),
    'bng_t1_b4_ga4': (4, 1024, 16384, True),
    'bng_t1_b32_ga1': (32, 1024, 32768, True),
    'bng_t1_b64_ga1': (64, 1024, 65536, True),
    'bng_p1_b16_ga2': (16, 1024, 32768, False),
}
commit = sys.argv[1]
for name, (b, t, tb, torchrun) in RUNS.items():
    argv = ['--program=build-nanogpt', f'--B={b}', f'--T={t}', f'--total_batch_size={tb}',
            f'--torchrun={torchrun}', '--gpu', 'h200', '--json']
    j = json.loads(subprocess.run(['target/release/vramfit'] + argv, capture_output=True, text=True, check=True).stdout)
    p = j['peak_bytes']
    print(json.dumps({
        'name': name, 'predicted_by': f'vramfit {commit} (target/release/vramfit {" ".join(argv)})',
        'predicted_at': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%MZ') + ', before the runs',
        'predicted_bytes': {k: p[k] for k in ('reserved', 'train_steady', 'train_first_iter', 'eval')}}))
