#!/bin/bash
# Which kernels a cold base_train.py run times, and with how many launchers (issue 27, stop 64): nc_cal_01's flags
# (depth 4, 2 x 1024 = 2,048 tokens a micro-step) and nc_cal_00's (8 x 512 = 4,096), each on its own empty
# Inductor/Triton cache, default allocator, counters never reset (as the script runs). With .nanochat carried:
#   bash tools/nanochat-probe/autotune_call.sh     (writes $OUT/bt2048.log, $OUT/bt4096.log; ~80 s on an H200)
# data/inductor/autotune/nc_d4_bt*.txt keep their AUTOTUNE and RESULT lines (tools/nanochat-probe/autotune_log.py).
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 NANOCHAT_BASE_DIR=/tmp/nanochat_base \
  ALLOC=default NORESET=1
F="--window-pattern=SSL --num-iterations=3 --eval-every=1000 --core-metric-every=-1 --sample-every=-1 --warmup-steps=1"
for c in "bt2048 --device-batch-size=2 --max-seq-len=1024 --total-batch-size=8192 --eval-tokens=4096" \
         "bt4096 --device-batch-size=8 --max-seq-len=512 --total-batch-size=4096 --eval-tokens=8192"; do
  set -- $c; n=$1; shift
  ( rm -rf /tmp/c/$n; mkdir -p /tmp/c/$n
    TORCHINDUCTOR_CACHE_DIR=/tmp/c/$n/i TRITON_CACHE_DIR=/tmp/c/$n/t timeout 400 \
      python3 tools/nanochat-probe/autotune_log.py at_$n --depth=4 "$@" $F > $OUT/$n.log 2>&1 ) &
done
wait
nvidia-smi --query-gpu=name --format=csv,noheader >> $OUT/bt2048.log
