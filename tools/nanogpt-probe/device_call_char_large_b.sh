#!/bin/bash
# One device call (issue 27, stop 56): shakespeare_char's model compiled at the batch of the held-out capped runs
# (B476, bf16, T256, dropout 0.2), a user's first run (its own empty Inductor/Triton cache), default allocator,
# uncapped, every allocator event kept: where iteration 0's peak sits when the GELU backward's autotuning copy
# (357 MiB) is larger than the L2 flush buffer. bash tools/nanogpt-probe/device_call_char_large_b.sh with .nanogpt
# carried; writes $OUT/<name>.events.json.gz, $OUT/results.txt and $OUT/env.txt.
export NANOGPT=$PWD/.nanogpt PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=8 ALLOCATOR=default
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
mkdir -p /tmp/s
N=ngc_bf16_char_T256_B476_ga1
mkdir -p /tmp/ic/$N
TORCHINDUCTOR_CACHE_DIR=/tmp/ic/$N TRITON_CACHE_DIR=/tmp/ic/$N/triton TRACE=/tmp/s/$N.json \
  EVENTS=$OUT/$N.events.json timeout 500 python3 tools/nanogpt-probe/run_train_expandable.py $N 65 \
  --n_layer=6 --n_head=6 --n_embd=384 --dropout=0.2 --bias=False --dtype=bfloat16 --batch_size=476 --block_size=256 \
  --gradient_accumulation_steps=1 --compile=True --max_iters=3 --eval_iters=2 --eval_interval=1000 --log_interval=1 \
  > /tmp/s/$N.log 2>&1
echo "$N rc=$?" >> $OUT/env.txt
gzip -9 $OUT/*.events.json
grep -h '^RESULT' /tmp/s/*.log > $OUT/results.txt
tail -3 /tmp/s/$N.log >> $OUT/env.txt
ls -la $OUT
