#!/bin/bash
# PyTorch memory snapshots of small real runs of each program, one that fits and one capped to run out
# (issue "Bring your own run"): test fixtures for vramfit's snapshot reader. One device call, run from the
# repository root with .nanochat, .bng and .nanogpt carried:  bash tools/snapshots_call.sh
# Writes $OUT/snapshots.tar (NAME.pickle.gz each), $OUT/results.jsonl (each probe's RESULT record), $OUT/jobs.log
# and $OUT/env.txt (the device returns only a few files).
# Each job gets a private Inductor/Triton cache (a user's first run); history trimmed by SNAPSHOT_ENTRIES.
set -u
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=4 SNAPSHOT_ENTRIES=${SNAPSHOT_ENTRIES:-30000}
export NANOCHAT=$PWD/.nanochat BNG=$PWD/.bng NANOGPT=$PWD/.nanogpt
export NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291
SNAPS=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/env.txt"
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)" | tee -a "$OUT/env.txt"

job() {  # NAME CAP_GIB(or -) COMMAND...
  local name=$1 cap=$2; shift 2
  local cache; cache=$(mktemp -d)
  echo "== $name (cap $cap)"
  ( [ "$cap" != - ] && export CAP_GIB=$cap
    SNAPSHOT="$SNAPS/$name.pickle" TORCHINDUCTOR_CACHE_DIR=$cache/inductor TRITON_CACHE_DIR=$cache/triton \
      timeout 300 "$@" ) 2>&1 | tee -a "$OUT/jobs.log" | grep '^RESULT' | sed 's/^RESULT //' >> "$OUT/results.jsonl"
  gzip -9 -f "$SNAPS/$name.pickle" 2>/dev/null
  ls -la "$SNAPS/$name.pickle.gz" 2>/dev/null
}

NC="--num-iterations=3 --eval-every=1000 --core-metric-every=-1 --sample-every=-1 --warmup-steps=1"
job snap_nanochat_d4 - python3 tools/nanochat-probe/run_base.py snap_nanochat_d4 --depth=4 --device-batch-size=8 \
  --max-seq-len=512 --window-pattern=SSL --total-batch-size=4096 --eval-tokens=8192 $NC
job snap_nanochat_d12_cap6 6 python3 tools/nanochat-probe/run_base.py snap_nanochat_d12_cap6 --depth=12 \
  --device-batch-size=16 --max-seq-len=1024 --window-pattern=SSSL --total-batch-size=16384 --eval-tokens=32768 $NC
job snap_bng_l4 - python3 tools/build-nanogpt-probe/run_train.py snap_bng_l4 4 256 2048 0 4 4 256
job snap_bng_b16_cap8 8 python3 tools/build-nanogpt-probe/run_train.py snap_bng_b16_cap8 16 1024 16384 0
job snap_nanogpt_char - python3 tools/nanogpt-probe/run_train.py snap_nanogpt_char 65 --compile=False \
  --n_layer=4 --n_head=4 --n_embd=256 --block_size=256 --batch_size=8 --gradient_accumulation_steps=2
job snap_nanogpt_b12_cap6 6 python3 tools/nanogpt-probe/run_train.py snap_nanogpt_b12_cap6 50304 --compile=False \
  --batch_size=12 --block_size=1024 --gradient_accumulation_steps=1
tar -C "$SNAPS" -cf "$OUT/snapshots.tar" .
tar -tvf "$OUT/snapshots.tar"
