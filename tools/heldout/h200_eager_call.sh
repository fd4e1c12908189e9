#!/bin/bash
# One device call (issue 27): eager runs of nanoGPT's train.py and build-nanogpt's train_gpt2.py at configs no
# model in vramfit was written from, chosen before any prediction was looked at, on an H200 (the project's other
# runs are H100's), default caching allocator, uncapped: do the allocated peaks and reserved bytes vramfit gives
# for eager runs (exact on the H100 runs) hold on runs it never saw? Carry .nanogpt and .bng:
#   bash tools/heldout/h200_eager_call.sh        writes $OUT/results.txt (one RESULT record per run) and $OUT/env.txt
# Two waves of parallel processes (peaks are per process, so parallelism does not change them).
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 BNG=$PWD/.bng PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
mkdir -p /tmp/h
F="--compile=False --eval_iters=2"
ng() { # NAME VOCAB ARGS... : train.py, default allocator (run_train.py clears any allocator setting)
  local N=$1 V=$2; shift 2
  timeout 300 python3 tools/nanogpt-probe/run_train.py $N $V $F "$@" > /tmp/h/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt; }
ngm() { # the same with train.py's own attention (no scaled_dot_product_attention), as run_train_expandable.py does
  local N=$1 V=$2; shift 2
  ALLOCATOR=default ATTENTION=manual EVENTS=/tmp/h/$N.events.json TRACE=/tmp/h/$N.trace.json timeout 300 \
    python3 tools/nanogpt-probe/run_train_expandable.py $N $V $F "$@" > /tmp/h/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt; }
bng() { # NAME B T TOTAL [N_LAYER N_HEAD N_EMBD] : build-nanogpt, eager, default allocator
  local N=$1; shift
  timeout 300 python3 tools/build-nanogpt-probe/run_train.py $N $1 $2 $3 0 ${@:4} > /tmp/h/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt; }
ng  ho_ng_l8c512_t512_b12_ga3_bf16_d01_bias 50304 --n_layer=8 --n_head=8 --n_embd=512 --block_size=512 --batch_size=12 --gradient_accumulation_steps=3 --dtype=bfloat16 --dropout=0.1 --bias=True &
ng  ho_ng_l4c256_t128_b48_fp32_char 65 --n_layer=4 --n_head=4 --n_embd=256 --block_size=128 --batch_size=48 --gradient_accumulation_steps=1 --dtype=float32 --dropout=0.0 --bias=False &
ng  ho_ng_l12c768_t1024_b6_ga2_fp16 50304 --n_layer=12 --n_head=12 --n_embd=768 --block_size=1024 --batch_size=6 --gradient_accumulation_steps=2 --dtype=float16 --dropout=0.0 --bias=False &
ng  ho_ng_l16c1024_t256_b20_bf16 50304 --n_layer=16 --n_head=16 --n_embd=1024 --block_size=256 --batch_size=20 --gradient_accumulation_steps=1 --dtype=bfloat16 --dropout=0.0 --bias=False &
ng  ho_ng_l6c384_t256_b96_bf16_char_d02 65 --n_layer=6 --n_head=6 --n_embd=384 --block_size=256 --batch_size=96 --gradient_accumulation_steps=1 --dtype=bfloat16 --dropout=0.2 --bias=False &
ng  ho_ng_l10c640_t768_b5_ga4_bf16_d005_bias 50304 --n_layer=10 --n_head=10 --n_embd=640 --block_size=768 --batch_size=5 --gradient_accumulation_steps=4 --dtype=bfloat16 --dropout=0.05 --bias=True &
ng  ho_ng_l12c768_t1024_b3_fp32 50304 --n_layer=12 --n_head=12 --n_embd=768 --block_size=1024 --batch_size=3 --gradient_accumulation_steps=1 --dtype=float32 --dropout=0.0 --bias=False &
ngm ho_ng_l3c192_t64_b32_ga2_fp32_char_manual 65 --n_layer=3 --n_head=3 --n_embd=192 --block_size=64 --batch_size=32 --gradient_accumulation_steps=2 --dtype=float32 --dropout=0.1 --bias=False &
wait
ng  ho_ng_l24c1024_t1024_b4_ga2_bf16 50304 --n_layer=24 --n_head=16 --n_embd=1024 --block_size=1024 --batch_size=4 --gradient_accumulation_steps=2 --dtype=bfloat16 --dropout=0.0 --bias=False &
ngm ho_ng_l6c512_t2048_b2_bf16_manual 50304 --n_layer=6 --n_head=8 --n_embd=512 --block_size=2048 --batch_size=2 --gradient_accumulation_steps=1 --dtype=bfloat16 --dropout=0.0 --bias=False &
ng  ho_ng_l12c768_t512_b24_bf16_d01 50304 --n_layer=12 --n_head=12 --n_embd=768 --block_size=512 --batch_size=24 --gradient_accumulation_steps=1 --dtype=bfloat16 --dropout=0.1 --bias=False &
ng  ho_ng_l2c128_t32_b8_ga8_fp16_char 65 --n_layer=2 --n_head=2 --n_embd=128 --block_size=32 --batch_size=8 --gradient_accumulation_steps=8 --dtype=float16 --dropout=0.0 --bias=False &
bng ho_bng_b20_t1024_ga1 20 1024 20480 &
bng ho_bng_b12_t512_ga4 12 512 24576 &
bng ho_bng_b40_t256_ga1 40 256 10240 &
bng ho_bng_l8c512_b6_t1024_ga2 6 1024 12288 8 8 512 &
wait
bng ho_bng_l24c1024_b10_t1024_ga1 10 1024 10240 24 16 1024 &
bng ho_bng_b48_t1024_ga1 48 1024 49152 &
wait
grep -h '^RESULT' /tmp/h/*.log > $OUT/results.txt
for f in /tmp/h/*.log; do echo "=== $f"; grep -v '^RESULT' $f | tail -5; done > $OUT/logs.txt
