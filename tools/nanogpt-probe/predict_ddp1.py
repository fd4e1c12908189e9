#!/usr/bin/env python3
"""vramfit's predictions for device_call_ddp.sh's `check1` runs, written before they run.

A `torchrun --nproc_per_node=1 train.py` run wraps the model in DDP (torchrun sets RANK), which vramfit's world_size 1
(`python train.py`) does not model; it is rank 0 of the same per-rank run on two GPUs (gradient_accumulation_steps
doubled), whose reserved bytes vramfit gives with the old bucket released before iteration 1's rebuild and held
through it (tests/ddp.rs, one_gpu_under_torchrun_is_rank_0_of_two).

usage: python3 tools/nanogpt-probe/predict_ddp1.py COMMIT > data/predictions/ddp1-check.jsonl
"""
import datetime, json, subprocess, sys

RUNS = {  # name: train.py flags, as device_call_ddp.sh check1 passes them
    'ddp1c_m_b2_ga2': '--compile=False --dtype=bfloat16 --batch_size=2 --gradient_accumulation_steps=2 --n_layer=24 --n_head=16 --n_embd=1024',
    'ddp1c_s_b12_ga1': '--compile=False --dtype=bfloat16 --batch_size=12 --gradient_accumulation_steps=1',
    'ddp1c_s_fp16_b8_ga2': '--compile=False --dtype=float16 --batch_size=8 --gradient_accumulation_steps=2',
    'ddp1c_s_b6_ga2_pause': '--compile=False --dtype=bfloat16 --batch_size=6 --gradient_accumulation_steps=2',
    'ddp1c_s_comp_b8_ga2': '--compile=True --dtype=bfloat16 --batch_size=8 --gradient_accumulation_steps=2',
}
commit = sys.argv[1]
for name, flags in RUNS.items():
    argv = flags.split() + ['--eval_iters=2', '--nproc_per_node=2', '--gpu', 'h200', '--json']
    argv = [a if not a.startswith('--gradient_accumulation_steps=') else
            f"--gradient_accumulation_steps={2 * int(a.split('=')[1])}" for a in argv]
    j = json.loads(subprocess.run(['target/release/vramfit'] + argv, capture_output=True, text=True, check=True).stdout)
    rank0 = j['ddp']['per_rank'][0]
    print(json.dumps({
        'name': name, 'predicted_by': f'vramfit {commit} (target/release/vramfit {" ".join(argv)}: rank 0)',
        'predicted_at': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%MZ') + ', before the runs',
        'predicted_bytes': {'reserved_released': rank0['reserved_released_bytes'],
                            'reserved_held': rank0['reserved_held_bytes'],
                            'train_steady_without_old_bucket': j['ddp']['steady_without_rebuild_bytes'],
                            'train_steady_with_old_bucket': rank0['peak_bytes']}}))
