#!/bin/bash
# One device call for ch07 gpt_instruction_finetuning.py: env, job list, then drive.py (always the stub tokenizer).
# Usage: device_call_ch07.sh PARALLEL DEADLINE_S [NAME,NAME,...]
set -x
date -u
export LFS=$PWD/.lfs PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 GPU_GB=${GPU_GB:-128}
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/env.txt
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)" | tee -a $OUT/env.txt
python3 -c "import tqdm; print('tqdm', tqdm.__version__)" 2>&1 | tail -1 | tee -a $OUT/env.txt
python3 tools/llms-from-scratch-probe/make_jobs_ch07.py /tmp/jobs.json ${3:-} | tee -a $OUT/env.txt
python3 tools/build-nanogpt-probe/drive.py /tmp/jobs.json "$1" "$2" 2>&1 | tee $OUT/driver.log
date -u
