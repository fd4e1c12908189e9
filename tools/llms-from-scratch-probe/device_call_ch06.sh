#!/bin/bash
# One device call for ch06 gpt_class_finetune.py: env, tiktoken check, job list, then drive.py.
# Usage: device_call_ch06.sh PARALLEL DEADLINE_S [main|extra|all] [NAME,NAME,...]
set -x
date -u
export LFS=$PWD/.lfs PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 GPU_GB=${GPU_GB:-128}
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/env.txt
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)" | tee -a $OUT/env.txt
python3 -c "import numpy, pandas, requests; print('numpy', numpy.__version__, 'pandas', pandas.__version__, 'requests', requests.__version__)" 2>&1 | tail -1 | tee -a $OUT/env.txt
# tiktoken: the real gpt2 encoding if it loads within 60 s (no network here), else the stub (counts words = the real
# GPT-2 count for run_finetune.py's texts, checked by make_ch06_texts_check.py)
if timeout 60 python3 -c "import tiktoken; print('tiktoken', tiktoken.__version__, len(tiktoken.get_encoding('gpt2').encode('you call free')))" >> $OUT/env.txt 2>$OUT/tiktoken_check.txt; then
  export TOKENIZER=real; else export TOKENIZER=stub; tail -2 $OUT/tiktoken_check.txt; fi
echo "TOKENIZER=$TOKENIZER" | tee -a $OUT/env.txt
python3 tools/llms-from-scratch-probe/make_jobs_ch06.py /tmp/jobs.json ${3:-main} ${4:-} | tee -a $OUT/env.txt
python3 tools/build-nanogpt-probe/drive.py /tmp/jobs.json "$1" "$2" 2>&1 | tee $OUT/driver.log
date -u
