#!/bin/bash
# One device call on ONE GPU (issue 27): build-nanogpt's train_gpt2.py under `torchrun --nproc_per_node=1` (the
# script wraps the model in DDP whenever torchrun sets RANK), eager, H200, default allocator, each run alone on the
# card; one `python` twin. vramfit's predictions were committed first (data/predictions/bng-ddp1.jsonl, written by
# predict_ddp1.py). With .bng carried. Every record goes to $OUT/bng-ddp1.jsonl.
#   bash tools/build-nanogpt-probe/device_call_ddp1.sh
set -u
export BNG=$PWD/.bng PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/env.txt
python3 -c "import torch,sys,numpy;print(torch.__version__, torch.version.cuda, sys.version, numpy.__version__)" | tee -a $OUT/env.txt
H=tools/build-nanogpt-probe
run() {  # NAME B T TOTAL_BATCH LAUNCHER
  local name=$1 b=$2 t=$3 tb=$4 launcher=$5
  echo "[$(date +%T)] start $name"
  if [ "$launcher" = torchrun ]; then
    timeout 240 torchrun --standalone --nproc_per_node=1 $H/run_train.py $name $b $t $tb 0 > $OUT/$name.log 2>&1
  else
    timeout 240 python3 $H/run_train.py $name $b $t $tb 0 > $OUT/$name.log 2>&1
  fi
  grep '^RESULT ' $OUT/$name.log | sed 's/^RESULT //' >> $OUT/bng-ddp1.jsonl
  echo "[$(date +%T)] done $name"
}
run bng_t1_b8_ga2 8 1024 16384 torchrun
run bng_t1_b16_ga2 16 1024 32768 torchrun
run bng_t1_b4_ga4 4 1024 16384 torchrun
run bng_t1_b32_ga1 32 1024 32768 torchrun
run bng_t1_b64_ga1 64 1024 65536 torchrun
run bng_p1_b16_ga2 16 1024 32768 python
python3 - $OUT/bng-ddp1.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    m = r['measured_bytes']
    print(r['name'], r['status'], r['gpu'], 'reserved', m['peak_reserved'])
PY
