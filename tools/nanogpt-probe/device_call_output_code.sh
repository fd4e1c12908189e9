#!/bin/bash
# One device call (issue 27): the code Inductor generates for the compiled graphs (forward, backward, eval; and
# nanochat's optimizer steps), to model the compiled runs' allocation order from what PyTorch runs rather than from
# traces alone: each graph's wrapper allocates its buffers (`empty_strided_cuda`), hands a dead buffer's storage to
# the next of its size (`buf7 = buf2; del buf2  # reuse`) and frees the rest (`del`). Each run has its own empty
# Inductor cache; the generated modules (*.py) are collected from it. Carry .nanogpt and .nanochat:
#   bash tools/nanogpt-probe/device_call_output_code.sh        writes $OUT/<name>.tgz and $OUT/env.txt
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 NANOCHAT=$PWD/.nanochat \
  NANOCHAT_BASE_DIR=/tmp/nanochat_base PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 ALLOCATOR=default
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
ng() { # NAME VOCAB ARGS...
  local N=$1 V=$2; shift 2
  ( export TORCHINDUCTOR_CACHE_DIR=/tmp/oc/$N TRITON_CACHE_DIR=/tmp/oc/$N/triton
    timeout 300 python3 tools/nanogpt-probe/run_train.py $N $V --compile=True --eval_iters=2 "$@" > /tmp/oc/$N.log 2>&1
    echo "$N rc=$?" >> $OUT/env.txt
    cd /tmp/oc/$N && find . -name '*.py' -size +1k | tar czf $OUT/$N.tgz -T - ) & }
mkdir -p /tmp/oc
C="--n_layer=6 --n_head=6 --n_embd=384 --dropout=0.2 --bias=False --block_size=256 --batch_size=64 --gradient_accumulation_steps=1"
ng oc_ng_bf16_char_T256_B64 65 $C --dtype=bfloat16
ng oc_ng_fp32_char_T256_B64 65 $C --dtype=float32
ng oc_ng_fp16_char_T256_B64 65 $C --dtype=float16
ng oc_ng_bf16_gpt2_T1024_B8 50304 --n_layer=12 --n_head=12 --n_embd=768 --dropout=0.0 --bias=False --block_size=1024 \
  --batch_size=8 --gradient_accumulation_steps=1 --dtype=bfloat16
( export TORCHINDUCTOR_CACHE_DIR=/tmp/oc/oc_nc_d4 TRITON_CACHE_DIR=/tmp/oc/oc_nc_d4/triton
  timeout 400 python3 tools/nanochat-probe/run_base.py oc_nc_d4 --depth=4 --device-batch-size=8 --max-seq-len=512 \
    --total-batch-size=4096 --window-pattern=SSSL --num-iterations=2 --eval-every=1000 --eval-tokens=8192 \
    --core-metric-every=-1 --sample-every=-1 --warmup-steps=1 > /tmp/oc/oc_nc_d4.log 2>&1
  echo "oc_nc_d4 rc=$?" >> $OUT/env.txt
  cd /tmp/oc/oc_nc_d4 && find . -name '*.py' -size +1k | tar czf $OUT/oc_nc_d4.tgz -T - ) &
wait
ls -la $OUT
