#!/bin/bash
# One device call for the ch05/10_llm-training-speed runs: env, job list, then the parallel driver (tools/build-nanogpt-probe/drive.py).
# usage (repo root, .lfs carried): bash tools/llms-from-scratch-probe/device_call_speed.sh PARALLEL DEADLINE_S [single|sdpa|ddp] [make_jobs_speed.py options]
# Writes $OUT/env.txt, $OUT/driver.log, $OUT/spd.jsonl (RESULT records), $OUT/logs.tar.gz, $OUT/trace_*.tar.
set -x
date -u +%FT%TZ | tee $OUT/env.txt
export LFS=$PWD/.lfs PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=2 GPU_GB=${GPU_GB:-120}
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a $OUT/env.txt
python3 -c "import torch,sys,triton;print(torch.__version__, torch.version.cuda, 'triton', triton.__version__, sys.version)" | tee -a $OUT/env.txt
nproc | tee -a $OUT/env.txt
env | grep -E '^(NCCL_NVLS|TORCH_SYMM|NVSHMEM_DISABLE)' | tee -a $OUT/env.txt
if [ "$3" = ddp ]; then
  python3 -c "import torch;print('device_count', torch.cuda.device_count(), 'nccl', torch.cuda.nccl.version())" | tee -a $OUT/env.txt
  nvidia-smi topo -m | tee -a $OUT/env.txt
fi
python3 tools/llms-from-scratch-probe/make_jobs_speed.py /tmp/jobs_speed.json "${@:3}" | tee -a $OUT/env.txt
python3 tools/build-nanogpt-probe/drive.py /tmp/jobs_speed.json "$1" "$2" 2>&1 | tee $OUT/driver.log
date -u +%FT%TZ | tee -a $OUT/env.txt
