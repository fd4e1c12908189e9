#!/bin/bash
# One device call: make the job list, then run it with drive.py. Usage: device_call.sh PARALLEL DEADLINE_S
set -x
export BNG=$PWD/.bng PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=${TCT:-2} GPU_GB=${GPU_GB:-76}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/env.txt
python3 -c "import torch,sys,numpy;print(torch.__version__, torch.version.cuda, sys.version, numpy.__version__)" | tee -a $OUT/env.txt
python3 tools/build-nanogpt-probe/make_jobs.py /tmp/jobs.json
python3 tools/build-nanogpt-probe/drive.py /tmp/jobs.json "$1" "$2" 2>&1 | tee $OUT/driver.log
