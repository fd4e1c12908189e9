#!/bin/bash
# One device call for the capped runs at a card's edge (make_jobs_capped.py; 2026-11-30): env, the job list (from
# capped_verdicts.json: no vramfit needed here), then the parallel driver (tools/build-nanogpt-probe/drive.py,
# memory-aware: each job counts its cap + 1 GiB against GPU_GB, so the caps and CUDA contexts of the jobs running at
# once never add up to more than the card has).
# usage (repo root; the book's folders exported under tools/llms-from-scratch-probe/.lfs, carried):
#   START_CUTOFF_S=420 GPU_GB=134 bash tools/llms-from-scratch-probe/device_call_capped.sh PARALLEL DEADLINE_S
# Writes $OUT/env.txt, $OUT/jobs_capped.json, $OUT/driver.log, $OUT/{in,spd,cf,lfs}.jsonl (RESULT records),
# $OUT/logs.tar.gz (per-run stdout).
set -x
date -u +%FT%TZ | tee $OUT/env.txt
export LFS=$PWD/tools/llms-from-scratch-probe/.lfs PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=2 \
  TOKENIZER=stub GPU_GB=${GPU_GB:-134}
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a $OUT/env.txt
python3 -c "import torch,sys,triton;print(torch.__version__, torch.version.cuda, 'triton', triton.__version__, sys.version)" | tee -a $OUT/env.txt
python3 -c "import torch;print('total_memory', torch.cuda.get_device_properties(0).total_memory)" | tee -a $OUT/env.txt
python3 -c "import numpy, pandas; print('numpy', numpy.__version__, 'pandas', pandas.__version__)" 2>&1 | tail -1 | tee -a $OUT/env.txt
ls $LFS/ch05 $LFS/ch06 $LFS/ch07 | tee -a $OUT/env.txt
python3 tools/llms-from-scratch-probe/make_jobs_capped.py jobs $OUT/jobs_capped.json | tee -a $OUT/env.txt
python3 tools/build-nanogpt-probe/drive.py $OUT/jobs_capped.json "$1" "$2" 2>&1 | tee $OUT/driver.log
date -u +%FT%TZ | tee -a $OUT/env.txt
