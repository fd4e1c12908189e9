#!/usr/bin/env python3
"""vramfit's predictions for `device_call_speed.sh … ddp1`'s runs (02_opt_multi_gpu_ddp.py on one GPU).

`02_opt_multi_gpu_ddp.py` wraps the model in DDP at world size 1 too (`python 02_…` and `torchrun
--nproc_per_node=1 02_…` alike): vramfit's `ddp=True`. The probe runs the real script with run_speed.py's
changes: 12 steps (train tokens = 12·B·T + 1), the 48,000-token validation split, `eval_freq=5` as 02's main()
passes it.

usage: python3 tools/llms-from-scratch-probe/predict_ddp1.py COMMIT [--check] > data/predictions/lfs-speed-ddp1[-check].jsonl
(--check: the eight runs of `make_jobs_speed.py ddp1check`, predicted before they run.)
"""
import datetime, json, subprocess, sys

sys.path.insert(0, 'tools/llms-from-scratch-probe')
from make_jobs_speed import R_DDP1, R_DDP1_CHECK  # noqa: E402  (the runs as the device call runs them)

commit = sys.argv[1]
for name, (emb, heads, layers), ctx, batch, drop, qkvb, mode in R_DDP1_CHECK if '--check' in sys.argv else R_DDP1:
    argv = [f'--emb_dim={emb}', f'--n_heads={heads}', f'--n_layers={layers}', f'--context_length={ctx}',
            f'--batch_size={batch}', f'--drop_rate={drop}', f'--qkv_bias={bool(qkvb)}', '--num_epochs=1',
            f'--train_tokens={min(432000, 12 * batch * ctx + 1)}', '--val_tokens=48000', '--eval_freq=5',
            '--gpu', 'h200', '--json', 'python', '02_opt_multi_gpu_ddp.py']
    j = json.loads(subprocess.run(['target/release/vramfit'] + argv, capture_output=True, text=True,
                                  check=True).stdout)
    p = j['peak_bytes']
    print(json.dumps({
        'name': name, 'predicted_by': f'vramfit {commit} (target/release/vramfit {" ".join(argv)})',
        'predicted_at': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%MZ'),
        'predicted_bytes': {k: p[k] for k in ('reserved', 'train_steady', 'train_first_iter', 'eval')}}))
