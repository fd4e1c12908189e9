#!/bin/bash
# One device call (issue 27): calibration.jsonl's eager default-allocator runs whose reserved bytes the replay
# misses (l_b4 +3.3 %, char_fp32_b64 -3.3 %), with every allocator event kept (run_train_expandable.py,
# ALLOCATOR=default), under the 37 / 18 GiB harness caps they were measured with.
# bash tools/nanogpt-probe/device_call_default_events.sh with .nanogpt carried; writes $OUT/*.events.json.gz.
set -x
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 PYTHONUNBUFFERED=1 ALLOCATOR=default
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
L="--compile=False --dtype=bfloat16 --batch_size=4 --gradient_accumulation_steps=2 --n_layer=36 --n_head=20 --n_embd=1280 --block_size=1024 --dropout=0.0 --bias=False --eval_iters=2"
C="--compile=False --dtype=float32 --batch_size=64 --gradient_accumulation_steps=2 --n_layer=6 --n_head=6 --n_embd=384 --block_size=256 --dropout=0.2 --bias=False --eval_iters=2"
CAP_GIB=37 TRACE=$OUT/l_b4.json EVENTS=$OUT/l_b4.events.json timeout 250 python3 tools/nanogpt-probe/run_train_expandable.py l_b4_ev 50304 $L 2>&1 | grep -v "^iter\|^step" | tail -6 &
CAP_GIB=18 TRACE=$OUT/char_fp32_b64.json EVENTS=$OUT/char_fp32_b64.events.json timeout 250 python3 tools/nanogpt-probe/run_train_expandable.py char_fp32_b64_ev 65 $C 2>&1 | grep -v "^iter\|^step" | tail -6 &
wait
gzip -9 $OUT/*.events.json
ls -la $OUT
