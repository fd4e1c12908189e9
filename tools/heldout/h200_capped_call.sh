#!/bin/bash
# One device call (issue 27): held-out verdicts at a card's edge. The real scripts, capped with a per-process memory
# fraction at what a 12 GB card (11.25 GiB) or a 24 GB card (23.0 GiB) leaves usable, at configs of no capped run
# before, each at the largest batch vramfit said fits and the next (asked as score-accuracy asks, `--vram-gib CAP
# --context-gib 0 --other-gib 0`, and with `--gpu=h200`; both answers were written here before the runs):
#   train.py, compile=True (its default), bf16/fp16, default allocator, a user's first run (private empty cache);
#   nanochat base_train.py, expandable segments (as its scripts launch it), SSSL, GA 2, a user's first run.
# Carry .nanogpt and .nanochat:  bash tools/heldout/h200_capped_call.sh   writes $OUT/results.txt, $OUT/env.txt
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 NANOCHAT=$PWD/.nanochat \
  NANOCHAT_BASE_DIR=/tmp/nanochat_base PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
mkdir -p /tmp/h
cold() { export TORCHINDUCTOR_CACHE_DIR=/tmp/ic/$1 TRITON_CACHE_DIR=/tmp/ic/$1/triton; }
ng() { # NAME CAP VOCAB ARGS...
  local N=$1 C=$2 V=$3; shift 3
  ( cold $N; CAP_GIB=$C timeout 400 python3 tools/nanogpt-probe/run_train.py $N $V --compile=True --eval_iters=2 "$@" \
      > /tmp/h/$N.log 2>&1; echo "$N rc=$?" >> $OUT/env.txt ) & }
nc() { # NAME CAP DEPTH T B : GA 2
  local N=$1 C=$2 d=$3 T=$4 B=$5
  ( cold $N; CAP_GIB=$C timeout 500 python3 tools/nanochat-probe/run_base.py $N --depth=$d --max-seq-len=$T \
      --device-batch-size=$B --total-batch-size=$((2*B*T)) --window-pattern=SSSL --num-iterations=3 --eval-every=1000 \
      --eval-tokens=$((2*B*T)) --core-metric-every=-1 --sample-every=-1 --warmup-steps=1 > /tmp/h/$N.log 2>&1
    echo "$N rc=$?" >> $OUT/env.txt ) & }
G="--n_layer=12 --n_head=12 --n_embd=768 --dropout=0.0 --bias=False --dtype=bfloat16"
M="--n_layer=24 --n_head=16 --n_embd=1024 --dropout=0.0 --bias=False --dtype=bfloat16"
H="--n_layer=12 --n_head=12 --n_embd=768 --dropout=0.1 --bias=True --dtype=float16"
S="--n_layer=6 --n_head=6 --n_embd=384 --dropout=0.2 --bias=False --dtype=bfloat16"
# vramfit (both ways): fits at the first of each pair, out of memory at the second; shakespeare_char: 474 fits both
# ways, 479 fits neither, 476 fits the custom card's answer (478) and not the H200's (474)
ng hc_ng_cap11_b12_t1024_ga5 11.25 50304 $G --block_size=1024 --batch_size=12 --gradient_accumulation_steps=5
ng hc_ng_cap11_b13_t1024_ga5 11.25 50304 $G --block_size=1024 --batch_size=13 --gradient_accumulation_steps=5
ng hc_ng_cap23_med_b14_t1024_ga4 23.0 50304 $M --block_size=1024 --batch_size=14 --gradient_accumulation_steps=4
ng hc_ng_cap23_med_b15_t1024_ga4 23.0 50304 $M --block_size=1024 --batch_size=15 --gradient_accumulation_steps=4
ng hc_ng_cap11_fp16_b25_t512_ga2 11.25 50304 $H --block_size=512 --batch_size=25 --gradient_accumulation_steps=2
ng hc_ng_cap11_fp16_b26_t512_ga2 11.25 50304 $H --block_size=512 --batch_size=26 --gradient_accumulation_steps=2
ng hc_ng_cap11_char_b474 11.25 65 $S --block_size=256 --batch_size=474 --gradient_accumulation_steps=1
ng hc_ng_cap11_char_b476 11.25 65 $S --block_size=256 --batch_size=476 --gradient_accumulation_steps=1
ng hc_ng_cap11_char_b479 11.25 65 $S --block_size=256 --batch_size=479 --gradient_accumulation_steps=1
wait
# vramfit: d10 T2048 15 fits, 16 not; d8 T1024 custom 47 fits, 48 not, H200 46 fits, 47 not; d20 T1024 13/14;
# d14 T2048 18/19
nc hc_nc_cap11_d10_b15_t2048 11.25 10 2048 15
nc hc_nc_cap11_d10_b16_t2048 11.25 10 2048 16
nc hc_nc_cap11_d8_b46_t1024 11.25 8 1024 46
nc hc_nc_cap11_d8_b47_t1024 11.25 8 1024 47
nc hc_nc_cap11_d8_b48_t1024 11.25 8 1024 48
nc hc_nc_cap23_d20_b13_t1024 23.0 20 1024 13
nc hc_nc_cap23_d20_b14_t1024 23.0 20 1024 14
wait
nc hc_nc_cap23_d14_b18_t2048 23.0 14 2048 18
nc hc_nc_cap23_d14_b19_t2048 23.0 14 2048 19
wait
grep -h '^RESULT' /tmp/h/*.log > $OUT/results.txt
for f in /tmp/h/*.log; do echo "=== $f"; grep -v '^RESULT' $f | tail -4; done > $OUT/logs.txt
