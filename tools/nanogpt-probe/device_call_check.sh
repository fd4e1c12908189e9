#!/bin/bash
# One device call: bash tools/nanogpt-probe/device_call_check.sh PARALLEL DEADLINE_S   (carry .nanogpt)
set -x
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=${NANOGPT_COMMIT:-3adf61e154c3fe3fca428ad6bc3818b27a3b8291} PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=${TCT:-2} GPU_GB=76
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
rm -rf /tmp/ic
python3 tools/nanogpt-probe/make_jobs_check.py /tmp/jobs_check.json
python3 tools/nanochat-probe/drive.py /tmp/jobs_check.json "$1" "$2" 2>&1 | tee $OUT/driver.log
