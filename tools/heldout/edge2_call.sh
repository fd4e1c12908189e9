#!/bin/bash
# One device call for edge2.py's runs (issue 27, stop 71): nanoGPT 3adf61e, nanochat 92d63d4, build-nanogpt 6104ab1
# and LLMs-from-scratch 28c65cdf exported into .nanogpt/ .nanochat/ .bng/ .lfs/ (carried). The verdicts were written
# (tools/heldout/edge2_verdicts.json, committed) before this ran.
# usage: bash tools/heldout/edge2_call.sh PARALLEL DEADLINE_S      writes $OUT/env.txt, driver.log, <kind>.jsonl, logs
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 NANOCHAT=$PWD/.nanochat \
  BNG=$PWD/.bng LFS=$PWD/.lfs NANOCHAT_BASE_DIR=/tmp/nanochat_base PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 \
  TORCHINDUCTOR_COMPILE_THREADS=2 GPU_GB=${GPU_GB:-134}
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
python3 tools/heldout/edge2.py jobs /tmp/edge2_jobs.json >> $OUT/env.txt
python3 tools/build-nanogpt-probe/drive.py /tmp/edge2_jobs.json "$1" "$2" 2>&1 | tee $OUT/driver.log | tail -20
