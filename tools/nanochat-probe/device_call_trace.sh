#!/bin/bash
# One device call (issue 27): base_train.py runs with expandable segments, every allocator event kept, each with
# a private Inductor/Triton cache (cold, a user's first run). bash tools/nanochat-probe/device_call_trace.sh SET
# with .nanochat carried; SET `exp` (default): three runs with expandable segments; `default`: three
# nanochat.jsonl runs with the default allocator; `over` (stop 58): the configs of the runs the generated-code
# backward over- or under-predicts (nc_exp_23, nc_exp_cal24, nc_cold_d18_B8_T512_GA1_L), expandable segments.
# Writes $OUT/<name>.json (the RESULT record) and $OUT/<name>-events.json.gz.
set -x
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=4 NANOCHAT_BASE_DIR=/tmp/nanochat_base
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
run() {  # NAME ARGS...
  local n=$1; shift
  mkdir -p /tmp/tr/$n
  TORCHINDUCTOR_CACHE_DIR=/tmp/tr/$n/inductor TRITON_CACHE_DIR=/tmp/tr/$n/triton ALLOC=$ALLOC_MODE \
    TRACE=/tmp/tr/$n.pkl timeout 400 python3 tools/nanochat-probe/run_base.py $n "$@" > /tmp/tr/$n.log 2>&1
  grep '^RESULT ' /tmp/tr/$n.log | sed 's/^RESULT //' > $OUT/$n.json
  (cd tools/nanochat-probe && python3 trace_events.py /tmp/tr/$n.pkl $OUT/$n-events.json.gz)
  tail -3 /tmp/tr/$n.log | cut -c1-300
}
F="--num-iterations=3 --eval-every=1000 --core-metric-every=-1 --sample-every=-1 --warmup-steps=1"
if [ "${1:-exp}" = default ]; then
  ALLOC_MODE=default
  run nc_tr_cal17 --depth=4 --device-batch-size=16 --max-seq-len=512 --window-pattern=SSSL --total-batch-size=16384 --eval-tokens=16384 $F &
  run nc_tr_cal00 --depth=4 --device-batch-size=8 --max-seq-len=512 --window-pattern=SSL --total-batch-size=4096 --eval-tokens=8192 $F &
  run nc_tr_cal01 --depth=4 --device-batch-size=2 --max-seq-len=1024 --window-pattern=SSL --total-batch-size=8192 --eval-tokens=4096 $F &
elif [ "$1" = over ]; then
  ALLOC_MODE=expandable
  run nc_tr_exp_23 --depth=20 --device-batch-size=16 --max-seq-len=512 --window-pattern=L --total-batch-size=8192 --eval-tokens=16384 $F &
  run nc_tr_exp_cal24 --depth=8 --device-batch-size=8 --max-seq-len=1024 --window-pattern=SSSL --total-batch-size=16384 --eval-tokens=16384 $F &
  run nc_tr_d18_B8_T512_L --depth=18 --device-batch-size=8 --max-seq-len=512 --window-pattern=L --total-batch-size=4096 --eval-tokens=8192 $F &
else
  ALLOC_MODE=expandable
  run nc_tr_exp_22 --depth=20 --device-batch-size=4 --max-seq-len=1024 --window-pattern=SSL --total-batch-size=8192 --eval-tokens=8192 $F &
  run nc_tr_exp_cal29 --depth=16 --device-batch-size=8 --max-seq-len=512 --window-pattern=L --total-batch-size=4096 --eval-tokens=8192 $F &
  run nc_tr_exp_16 --depth=10 --device-batch-size=1 --max-seq-len=2048 --window-pattern=L --total-batch-size=4096 --eval-tokens=4096 $F &
fi
wait
ls -la $OUT
