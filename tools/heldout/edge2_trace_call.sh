#!/bin/bash
# One device call (issue 27, stop 71): edge2's one wrong H200 verdict, train.py eager fp16 GPT-2 124M T256 GA8 B34 —
# vramfit: fits an 11.25 GiB cap at 10.76 GiB reserved (the run's reserve to the MiB), the run: out of memory at a
# 1.63 GiB request in iteration 1 — with every allocator event kept (run_train_expandable.py, ALLOCATOR=default),
# capped as it ran and uncapped. .nanogpt carried; writes $OUT/*.events.json.gz and the summaries.
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 PYTHONUNBUFFERED=1 ALLOCATOR=default
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
A="--n_layer=12 --n_head=12 --n_embd=768 --dropout=0.0 --bias=False --dtype=float16 --compile=False --block_size=256 --gradient_accumulation_steps=8 --batch_size=34 --eval_iters=2"
CAP_GIB=11.25 TRACE=$OUT/ho2_fp16_b34_cap11.json EVENTS=$OUT/ho2_fp16_b34_cap11.events.json timeout 250 \
  python3 tools/nanogpt-probe/run_train_expandable.py ho2_fp16_b34_cap11_ev 50304 $A > $OUT/cap11.log 2>&1 &
TRACE=$OUT/ho2_fp16_b34.json EVENTS=$OUT/ho2_fp16_b34.events.json timeout 250 \
  python3 tools/nanogpt-probe/run_train_expandable.py ho2_fp16_b34_ev 50304 $A > $OUT/uncapped.log 2>&1 &
wait
gzip -9 $OUT/*.events.json
grep -h "^RESULT" $OUT/*.log | cut -c1-600
