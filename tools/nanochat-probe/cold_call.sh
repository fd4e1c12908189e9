#!/bin/bash
# base_train.py as a user's first run (issue "nanochat as its scripts launch it": iteration 0 on a cold compile
# cache), bf16, expandable segments (base_train.py's own allocator setting). With .nanochat carried:
#   bash tools/nanochat-probe/cold_call.sh DEADLINE_S [more]   (writes $OUT/results.txt, $OUT/env.txt, $OUT/logs.txt and,
#   for the traced runs, $OUT/<name>.json and $OUT/<name>-events.json.gz as device_call_trace.sh does)
# Every run has its own empty Inductor/Triton cache (cold); the `_warm` runs then run the same flags again on the
# cache their cold twin left (a second run of the same shapes). Up to eight processes at once on the one GPU
# (peaks are per process).
D=${1:-500}
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 NANOCHAT_BASE_DIR=/tmp/nanochat_base
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import torch;print(torch.__version__)'; nproc; } > $OUT/env.txt 2>&1
F="--num-iterations=3 --eval-every=1000 --core-metric-every=-1 --sample-every=-1 --warmup-steps=1"
run() { # NAME DEPTH B T GA PATTERN [trace|warm|default|fp8]
  local N=$1 d=$2 B=$3 T=$4 GA=$5 P=$6 M=$7 X=
  [ "$M" = fp8 ] && X=--fp8
  ( mkdir -p /tmp/cache/$N
    [ "$M" = default ] && export ALLOC=default
    export TORCHINDUCTOR_CACHE_DIR=/tmp/cache/$N/inductor TRITON_CACHE_DIR=/tmp/cache/$N/triton
    [ "$M" = trace ] && export TRACE=/tmp/cache/$N.pkl
    one() { timeout $D python3 tools/nanochat-probe/run_base.py $1 --depth=$d --device-batch-size=$B --max-seq-len=$T \
      --window-pattern=$P --total-batch-size=$((GA*B*T)) --eval-tokens=$((2*B*T)) $F $X > /tmp/$1.log 2>&1
      echo "$1 rc=$?" >> $OUT/env.txt; }
    one $N
    [ "$M" = warm ] && one ${N}_warm
    if [ "$M" = trace ]; then
      grep '^RESULT ' /tmp/$N.log | sed 's/^RESULT //' > $OUT/$N.json
      (cd tools/nanochat-probe && python3 trace_events.py /tmp/cache/$N.pkl $OUT/$N-events.json.gz) >> $OUT/env.txt 2>&1
    fi )
}
if [ "$2" = d1trace ]; then
  # depth 1 read 10 % over vramfit's first-run model (the one run of 12 in `more` that did): traced
  run nc_coldtr_d1_B2_T128_GA1_L 1 2 128 1 L trace
  exit 0
fi
if [ "$2" = more ]; then
  # after the model's first check (stop 48): the default allocator, --fp8, other shapes
  run nc_colddef_d2_B4_T512_GA1_SSL 2 4 512 1 SSL default &
  run nc_colddef_d4_B8_T512_GA1_SSL 4 8 512 1 SSL default &
  run nc_colddef_d8_B4_T1024_GA2_SSSL 8 4 1024 2 SSSL default &
  run nc_colddef_d12_B8_T1024_GA1_SSSL 12 8 1024 1 SSSL default &
  run nc_coldfp8_d4_B4_T1024_GA1_SL 4 4 1024 1 SL fp8 &
  run nc_coldfp8_d8_B8_T512_GA2_SSSL 8 8 512 2 SSSL fp8 &
  run nc_cold_d1_B2_T128_GA1_L 1 2 128 1 L &
  run nc_cold_d7_B3_T768_GA1_SSL 7 3 768 1 SSL &
  wait
  run nc_cold_d24_B2_T2048_GA1_SSSL 24 2 2048 1 SSSL &
  run nc_cold_d18_B8_T512_GA1_L 18 8 512 1 L &
  run nc_cold_d9_B16_T1024_GA1_SSSL 9 16 1024 1 SSSL &
  run nc_colddef_d16_B2_T2048_GA2_L 16 2 2048 2 L default &
  wait
  grep -h '^RESULT' /tmp/nc_cold*.log > $OUT/results.txt
  exit 0
fi
run nc_cold_d2_B1_T256_GA2_L 2 1 256 2 L warm &
run nc_cold_d6_B1_T512_GA1_SSSL 6 1 512 1 SSSL warm &
run nc_cold_d2_B8_T512_GA1_SL 2 8 512 1 SL &
run nc_cold_d4_B2_T1024_GA4_SSL 4 2 1024 4 SSL warm &
run nc_cold_d6_B4_T1024_GA1_L 6 4 1024 1 L &
run nc_cold_d8_B2_T2048_GA2_SSSL 8 2 2048 2 SSSL &
run nc_cold_d3_B32_T256_GA1_L 3 32 256 1 L &
run nc_cold_d8_B16_T512_GA1_SL 8 16 512 1 SL &
wait
run nc_cold_d10_B8_T1024_GA1_SSL 10 8 1024 1 SSL &
run nc_cold_d12_B4_T2048_GA1_SSSL 12 4 2048 1 SSSL &
run nc_cold_d14_B2_T1024_GA2_L 14 2 1024 2 L &
run nc_cold_d16_B4_T2048_GA1_SSSL 16 4 2048 1 SSSL &
run nc_cold_d20_B1_T2048_GA1_SSSL 20 1 2048 1 SSSL &
run nc_coldtr_d2_B1_T256_GA2_L 2 1 256 2 L trace &
run nc_coldtr_d6_B1_T512_GA1_SSSL 6 1 512 1 SSSL trace &
run nc_cold_d5_B4_T512_GA2_SSL 5 4 512 2 SSL &
wait
grep -h '^RESULT' /tmp/nc_cold*.log > $OUT/results.txt
for f in /tmp/nc_cold*.log; do echo "=== $f"; tail -c 3000 $f; done > $OUT/logs.txt
