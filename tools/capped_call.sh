#!/bin/bash
# One device call for the capped runs (tools/capped_jobs.py), nanochat and build-nanogpt exported at their pinned
# commits into .nanochat/ and .bng/ (carried). Usage: bash tools/capped_call.sh PARALLEL DEADLINE_S [WAVE]
set -x
export NANOCHAT=$PWD/.nanochat BNG=$PWD/.bng PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=${TCT:-2} \
  NANOCHAT_BASE_DIR=/tmp/nanochat_base GPU_GB=${GPU_GB:-130}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/env.txt
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)" | tee -a $OUT/env.txt
python3 tools/capped_jobs.py /tmp/jobs.json $3
python3 tools/nanochat-probe/drive.py /tmp/jobs.json "$1" "$2" 2>&1 | tee $OUT/driver.log
