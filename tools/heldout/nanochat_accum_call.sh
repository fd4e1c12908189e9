#!/bin/bash
# One device call: tools/heldout/nanochat_accum.py's runs (predictions committed first). .nanochat carried.
export NANOCHAT=$PWD/.nanochat NANOCHAT_BASE_DIR=/tmp/nanochat_base PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 \
  TORCHINDUCTOR_COMPILE_THREADS=2 GPU_GB=134
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; } > $OUT/env.txt 2>&1
python3 tools/heldout/nanochat_accum.py jobs /tmp/nca_jobs.json
python3 tools/build-nanogpt-probe/drive.py /tmp/nca_jobs.json 5 500 2>&1 | tee $OUT/driver.log | tail -8
