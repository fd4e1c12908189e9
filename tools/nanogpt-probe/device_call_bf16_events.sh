#!/bin/bash
# One device call (issue 27, stop 56): the 16-bit compiled backward written from Inductor's generated code
# (data/inductor/) against allocator traces of GPT-2-vocabulary runs, each a user's first run (its own empty
# Inductor/Triton cache), default allocator, uncapped:
#  - train.py, GPT-2 124M, bf16, B8 T1024, gradient accumulation 2 (run_train_expandable.py, every event kept);
#  - build-nanogpt's train_gpt2.py, compiled, B14 T1024, total batch 28,672 (two micro-steps): the config whose
#    capped run at 11.25 GiB fitted with 10.951 GiB reserved (build-nanogpt-capped.jsonl), PyTorch's own snapshot.
# bash tools/nanogpt-probe/device_call_bf16_events.sh with .nanogpt and .bng carried; writes $OUT/*.events.json.gz,
# $OUT/bng_c_b14_t1024_ga2.pickle.gz, $OUT/results.txt and $OUT/env.txt.
export NANOGPT=$PWD/.nanogpt BNG=$PWD/.bng PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=4
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
mkdir -p /tmp/s
N=ngc_bf16_gpt2_T1024_B8_ga2
( mkdir -p /tmp/ic/$N; TORCHINDUCTOR_CACHE_DIR=/tmp/ic/$N TRITON_CACHE_DIR=/tmp/ic/$N/triton ALLOCATOR=default \
  TRACE=/tmp/s/$N.json EVENTS=$OUT/$N.events.json timeout 500 python3 tools/nanogpt-probe/run_train_expandable.py \
  $N 50304 --n_layer=12 --n_head=12 --n_embd=768 --dropout=0.0 --dtype=bfloat16 --batch_size=8 --block_size=1024 \
  --gradient_accumulation_steps=2 --compile=True --max_iters=3 --eval_iters=2 --eval_interval=1000 --log_interval=1 \
  > /tmp/s/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt ) &
M=bng_c_b14_t1024_ga2
( mkdir -p /tmp/ic/$M; TORCHINDUCTOR_CACHE_DIR=/tmp/ic/$M TRITON_CACHE_DIR=/tmp/ic/$M/triton \
  SNAPSHOT=$OUT/$M.pickle SNAPSHOT_ENTRIES=400000 timeout 500 python3 tools/build-nanogpt-probe/run_train.py \
  $M 14 1024 28672 1 > /tmp/s/$M.log 2>&1; echo "$M rc=$?" >> $OUT/env.txt ) &
wait
gzip -9 $OUT/*.events.json $OUT/*.pickle
grep -h '^RESULT' /tmp/s/*.log > $OUT/results.txt
tail -5 /tmp/s/*.log >> $OUT/env.txt
ls -la $OUT
