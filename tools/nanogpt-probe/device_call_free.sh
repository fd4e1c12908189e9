#!/bin/bash
# One device call (issue 27): exp_s_b16 with expandable segments on a card left with 18, 17.5 and 16.6 GiB
# free (run_train_expandable.py FREE_GIB), every allocator event kept. bash tools/nanogpt-probe/device_call_free.sh
# with .nanogpt carried; writes $OUT/exp_s_b16_free*.events.json.gz and the summaries.
set -x
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
A="--compile=False --dtype=bfloat16 --batch_size=16 --gradient_accumulation_steps=2 --n_layer=12 --n_head=12 --n_embd=768 --block_size=1024 --dropout=0.0 --bias=False"
for g in 18 17.5 16.6; do
  FREE_GIB=$g TRACE=$OUT/free$g.json EVENTS=$OUT/exp_s_b16_free$g.events.json timeout 200 python3 tools/nanogpt-probe/run_train_expandable.py exp_s_b16_free$g 50304 $A 2>&1 | grep -v "^iter\|^step" | tail -8
  gzip -9 $OUT/exp_s_b16_free$g.events.json
done
ls -la $OUT
