#!/bin/bash
# nanochat on several GPUs and its step times (issue "nanochat as its scripts launch it").
#   bash tools/nanochat-probe/ranks_call.sh speed DEADLINE_S   one-GPU runs, one per GPU at once: step times
#   bash tools/nanochat-probe/ranks_call.sh ranks DEADLINE_S   torchrun on every GPU, 40 steps, one run at a time
#   bash tools/nanochat-probe/ranks_call.sh ranks_nosync DEADLINE_S   the same, marks without torch.cuda.synchronize
# Each run has its own cold Inductor/Triton cache (a user's first run). Writes $OUT/results.txt, $OUT/env.txt, logs.
MODE=$1 D=${2:-280}
export PYTHONUNBUFFERED=1
NGPU=$(nvidia-smi -L | wc -l)
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import torch;print(torch.__version__, torch.cuda.device_count(), torch.cuda.nccl.version())'; env | grep -E 'NCCL|MULTICAST|NVLS'; nproc; } > $OUT/env.txt 2>&1
flags() { # DEPTH B T GA PATTERN WORLD ITERS
  echo --depth=$1 --device-batch-size=$2 --max-seq-len=$3 --window-pattern=$5 --total-batch-size=$(($4*$2*$3*$6)) \
    --num-iterations=$7 --eval-every=1000 --eval-tokens=$((2*$2*$3*$6)) --core-metric-every=-1 --sample-every=-1 --warmup-steps=1
}
cache() { export TORCHINDUCTOR_CACHE_DIR=/tmp/cache/$1/inductor TRITON_CACHE_DIR=/tmp/cache/$1/triton; }
one() { # GPU NAME DEPTH B T GA PATTERN
  local g=$1 N=$2; shift 2
  ( cache $N; CUDA_VISIBLE_DEVICES=$g timeout $D python3 tools/nanochat-probe/run_base.py $N $(flags $1 $2 $3 $4 $5 1 12) > /tmp/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt )
}
many() { # NAME DEPTH B T GA PATTERN
  local N=$1; shift
  ( cache $N; timeout $D torchrun --standalone --nproc_per_node=$NGPU --tee 3 --log-dir /tmp/tl/$N tools/nanochat-probe/run_base.py $N \
      $(flags $1 $2 $3 $4 $5 $NGPU 40) > /tmp/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt )
}
mkdir -p /tmp/tl
if [ "$MODE" = speed ]; then
  one 0 nc_speed_d6_B32_T2048 6 32 2048 1 SSSL &
  one 1 nc_speed_d12_B32_T2048 12 32 2048 1 SSSL &
  one 2 nc_speed_d20_B32_T2048 20 32 2048 1 SSSL &
  one 3 nc_speed_d26_B16_T2048 26 16 2048 1 SSSL &
  wait
  grep -h '^RESULT' /tmp/nc_speed_*.log > $OUT/results.txt
else
  # MARK_SYNC=0 (mode ranks_nosync): the marks do not wait for the GPU, as a real run does not
  S=$([ "$MODE" = ranks_nosync ] && echo _nosync)
  export MARK_SYNC=$([ "$MODE" = ranks_nosync ] && echo 0 || echo 1)
  many nc_ranks${NGPU}_d12_B8_T1024_GA2$S 12 8 1024 2 SSSL
  many nc_ranks${NGPU}_d20_B8_T2048_GA1$S 20 8 2048 1 SSSL
  grep -rh '^RESULT' /tmp/tl > $OUT/results.txt
fi
for f in /tmp/nc_*.log; do echo "=== $f"; tail -c 20000 $f; done > $OUT/logs.txt
