#!/bin/bash
# One device call (issue 27, stop 62): train.py compiled, each run a user's first (its own empty Inductor/Triton
# cache), with Inductor's buffer-reuse decisions logged (log_reuse_decisions.py): the graphs' scheduler nodes, the
# estimate the planner checks against, and every should_reuse_buffer answer. The shapes of the eval graphs vramfit
# writes in its own order (docs/allocation-order.md §16, §17). With .nanogpt carried:
#   bash tools/inductor/device_call_reuse_log.sh        writes $OUT/<name>.reuse.jsonl, $OUT/<name>.tgz and $OUT/env.txt
#   bash tools/inductor/device_call_reuse_log.sh fp8    the same for nanochat base_train.py --fp8 at depth 4 (B8 T512
#                                                       SSL) and depth 18 (B2 T2048 L), .nanochat carried
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 PYTHONUNBUFFERED=1 \
  TORCHINDUCTOR_COMPILE_THREADS=2
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
CHAR="--n_layer=6 --n_head=6 --n_embd=384 --dropout=0.2 --bias=False"
GPT2="--n_layer=12 --n_head=12 --n_embd=768 --dropout=0.0 --bias=False"
F="--compile=True --max_iters=2 --eval_iters=2 --eval_interval=1000 --log_interval=1"
run() { # NAME VOCAB ARGS...
  local N=$1 V=$2; shift 2
  ( mkdir -p /tmp/rl/$N
    export TORCHINDUCTOR_CACHE_DIR=/tmp/rl/$N TRITON_CACHE_DIR=/tmp/rl/$N/triton REUSE_LOG=$OUT/$N.reuse.jsonl
    timeout 300 python3 tools/inductor/log_reuse_decisions.py tools/nanogpt-probe/run_train.py $N $V "$@" $F \
      > /tmp/rl/$N.log 2>&1
    echo "$N rc=$?" >> $OUT/env.txt
    tail -3 /tmp/rl/$N.log >> $OUT/env.txt
    cd /tmp/rl/$N && find . -name '*.py' -size +1k | tar czf $OUT/$N.tgz -T - ) &
}
if [ "${1:-}" = fp8 ]; then
  # the graphs vramfit's --fp8 backward is to be written from (docs/allocation-order.md §17)
  export NANOCHAT=$PWD/.nanochat NANOCHAT_BASE_DIR=/tmp/nanochat_base
  nc() { # NAME FLAGS...
    local N=$1; shift
    ( mkdir -p /tmp/rl/$N
      export TORCHINDUCTOR_CACHE_DIR=/tmp/rl/$N TRITON_CACHE_DIR=/tmp/rl/$N/triton REUSE_LOG=$OUT/$N.reuse.jsonl
      timeout 420 python3 tools/inductor/log_reuse_decisions.py tools/nanochat-probe/run_base.py $N "$@" \
        --num-iterations=2 --eval-every=1000 --core-metric-every=-1 --sample-every=-1 --warmup-steps=1 --fp8 \
        > /tmp/rl/$N.log 2>&1
      echo "$N rc=$?" >> $OUT/env.txt
      tail -2 /tmp/rl/$N.log | cut -c1-300 >> $OUT/env.txt
      cd /tmp/rl/$N && find . -name '*.py' -size +1k | tar czf $OUT/$N.tgz -T - ) &
  }
  nc rl_nc_fp8_d4_B8_T512_SSL --depth=4 --device-batch-size=8 --max-seq-len=512 --window-pattern=SSL \
    --total-batch-size=4096 --eval-tokens=8192
  nc rl_nc_fp8_d18_B2_T2048_L --depth=18 --device-batch-size=2 --max-seq-len=2048 --window-pattern=L \
    --total-batch-size=4096 --eval-tokens=8192
  wait
  ls -la $OUT
  exit 0
fi
run rl_fp32_char_T256_B64_ga2 65 $CHAR --dtype=float32 --batch_size=64 --block_size=256 --gradient_accumulation_steps=2
run rl_bf16_char_T256_B64_ga1 65 $CHAR --dtype=bfloat16 --batch_size=64 --block_size=256 --gradient_accumulation_steps=1
run rl_fp32_gpt2_T2048_B1_ga1 50304 $GPT2 --dtype=float32 --batch_size=1 --block_size=2048 --gradient_accumulation_steps=1
wait
ls -la $OUT
