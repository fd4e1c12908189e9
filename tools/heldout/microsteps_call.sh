#!/bin/bash
# One device call: tools/heldout/microsteps.py's runs (predictions committed first). .nanogpt and .bng carried.
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 BNG=$PWD/.bng \
  PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=2 GPU_GB=134
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; } > $OUT/env.txt 2>&1
python3 tools/heldout/microsteps.py jobs /tmp/ms_jobs.json
python3 tools/build-nanogpt-probe/drive.py /tmp/ms_jobs.json 6 400 2>&1 | tee $OUT/driver.log | tail -8
