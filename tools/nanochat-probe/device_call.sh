#!/bin/bash
# One device call: python3 tools/nanochat-probe/make_jobs.py KINDS ... then drive.py. Usage: device_call.sh KINDS PAR DEADLINE [ONLY]
set -x
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=${TCT:-2} NANOCHAT_BASE_DIR=/tmp/nanochat_base
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
python3 tools/nanochat-probe/make_jobs.py "$1" /tmp/jobs.json $4
python3 tools/nanochat-probe/drive.py /tmp/jobs.json "$2" "$3" 2>&1 | tee $OUT/driver.log
