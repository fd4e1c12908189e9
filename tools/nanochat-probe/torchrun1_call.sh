#!/bin/bash
# One device call on ONE GPU (issue 27, stop 69): does `torchrun --nproc_per_node=1` change what base_train.py holds?
# nanochat's optimizer skips its communication at world size 1 (nanochat/optim.py: `if world_size == 1`), so vramfit
# answers a one-GPU torchrun launch as `python -m scripts.base_train`. Two configs, each run both ways, one at a time,
# each with its own empty Inductor and Triton caches (a user's first run), counters left alone (NORESET=1),
# expandable segments as base_train.py sets them. vramfit's answers: data/predictions/nanochat-torchrun1.jsonl,
# committed before the call. With .nanochat carried; records to $OUT/nanochat-torchrun1.jsonl.
set -u
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 NORESET=1 TORCHINDUCTOR_COMPILE_THREADS=8
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/env.txt
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)" | tee -a $OUT/env.txt
run() {  # NAME LAUNCHER DEPTH B T GA PATTERN
  local n=$1 launcher=$2 d=$3 b=$4 t=$5 ga=$6 p=$7
  export TORCHINDUCTOR_CACHE_DIR=/tmp/cache/$n/inductor TRITON_CACHE_DIR=/tmp/cache/$n/triton
  rm -rf /tmp/cache/$n
  local args="$n --depth=$d --device-batch-size=$b --max-seq-len=$t --window-pattern=$p --total-batch-size=$((ga*b*t))
    --num-iterations=3 --eval-every=1000 --eval-tokens=$((2*b*t)) --core-metric-every=-1 --sample-every=-1 --warmup-steps=1"
  echo "[$(date +%T)] start $n"
  if [ "$launcher" = torchrun ]; then
    timeout 280 torchrun --standalone --nproc_per_node=1 tools/nanochat-probe/run_base.py $args > $OUT/$n.log 2>&1
  else
    timeout 280 python3 tools/nanochat-probe/run_base.py $args > $OUT/$n.log 2>&1
  fi
  grep '^RESULT ' $OUT/$n.log | sed 's/^RESULT //' >> $OUT/nanochat-torchrun1.jsonl
  echo "[$(date +%T)] done $n"
}
run nc_t1_d8_B8_T1024_GA1 torchrun 8 8 1024 1 SSSL
run nc_p1_d8_B8_T1024_GA1 python 8 8 1024 1 SSSL
run nc_t1_d12_B4_T1024_GA2 torchrun 12 4 1024 2 SSSL
run nc_p1_d12_B4_T1024_GA2 python 12 4 1024 2 SSSL
python3 - $OUT/nanochat-torchrun1.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    m = r['measured_bytes']
    print(r['name'], r.get('gpu'), r.get('world_size'), 'reserved', m.get('peak_reserved'), 'steady', m.get('peak_allocated_train_steady'))
PY
