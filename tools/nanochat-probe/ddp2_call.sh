#!/bin/bash
# 2-GPU (torchrun, DDP) base_train.py runs, all launched at once (peaks are per process), each with a deadline.
# usage: bash tools/nanochat-probe/ddp2_call.sh DEADLINE_S   (writes $OUT/ddp2_*.log, $OUT/results.txt, $OUT/env.txt)
D=${1:-280}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import torch;print(torch.__version__, torch.cuda.device_count())'; env | grep -E 'NCCL|MULTICAST|NVLS'; nproc; } > $OUT/env.txt 2>&1
run() { # NAME DEPTH B T GA PATTERN
  local N=$1 d=$2 B=$3 T=$4 GA=$5 P=$6
  timeout $D torchrun --standalone --nproc_per_node=2 --tee 3 --log-dir /tmp/tl/$N tools/nanochat-probe/run_base.py $N \
    --depth=$d --device-batch-size=$B --max-seq-len=$T --window-pattern=$P --total-batch-size=$((GA*B*T*2)) \
    --num-iterations=3 --eval-every=1000 --eval-tokens=$((2*B*T*2)) --core-metric-every=-1 --sample-every=-1 \
    --warmup-steps=1 > /tmp/$N.log 2>&1
  echo "$N rc=$?" >> $OUT/env.txt
}
run nc_ddp2_d4_B8_T512_GA1 4 8 512 1 SSL &
run nc_ddp2_d8_B4_T1024_GA2 8 4 1024 2 SSSL &
run nc_ddp2_d12_B8_T1024_GA1 12 8 1024 1 SSSL &
run nc_ddp2_d20_B2_T512_GA2 20 2 512 2 SSSL &
run nc_ddp2_d6_B4_T512_GA1 6 4 512 1 SSSL &
wait
grep -rh '^RESULT' /tmp/tl > $OUT/results.txt
for f in /tmp/nc_ddp2_*.log; do echo "=== $f"; cat $f; done | tail -c 12000000 > $OUT/ddp2_logs.txt
