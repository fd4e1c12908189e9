#!/bin/bash
# base_train.py computing in fp32, as nanochat/common.py picks it below SM 8.0 (T4, V100), forced here on a
# newer card with NANOCHAT_DTYPE=float32 (issue "nanochat as its scripts launch it").
#   bash tools/nanochat-probe/dtype_call.sh DEADLINE_S   (writes $OUT/results.txt, $OUT/env.txt, $OUT/logs.txt)
# One-GPU runs at once (peaks are per process), each with its own cold Inductor/Triton cache.
D=${1:-280}
export PYTHONUNBUFFERED=1 NANOCHAT_DTYPE=float32
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import torch;print(torch.__version__)'; nproc; } > $OUT/env.txt 2>&1
run() { # NAME DEPTH B T GA PATTERN
  local N=$1 d=$2 B=$3 T=$4 GA=$5 P=$6
  ( export TORCHINDUCTOR_CACHE_DIR=/tmp/cache/$N/inductor TRITON_CACHE_DIR=/tmp/cache/$N/triton
    timeout $D python3 tools/nanochat-probe/run_base.py $N --depth=$d --device-batch-size=$B --max-seq-len=$T \
      --window-pattern=$P --total-batch-size=$((GA*B*T)) --num-iterations=3 --eval-every=1000 --eval-tokens=$((2*B*T)) \
      --core-metric-every=-1 --sample-every=-1 --warmup-steps=1 > /tmp/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt )
}
run nc_fp32_d4_B8_T512_GA1_SSL 4 8 512 1 SSL &
run nc_fp32_d6_B4_T1024_GA1_L 6 4 1024 1 L &
run nc_fp32_d8_B4_T1024_GA2_SSSL 8 4 1024 2 SSSL &
run nc_fp32_d12_B8_T1024_GA1_SSSL 12 8 1024 1 SSSL &
run nc_fp32_d10_B2_T2048_GA1_SSSL 10 2 2048 1 SSSL &
run nc_fp32_d2_B16_T256_GA4_SL 2 16 256 4 SL &
wait
grep -h '^RESULT' /tmp/nc_fp32_*.log > $OUT/results.txt
for f in /tmp/nc_fp32_*.log; do echo "=== $f"; tail -c 6000 $f; done > $OUT/logs.txt
