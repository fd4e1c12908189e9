#!/bin/bash
# One device call (tools/driver-va/README.md): every trace's segment sequence replayed alone, cold and
# after a matmul, one fresh process each; the JSON lines go to $OUT/driver_va.jsonl.
set -u
out=${OUT:-/tmp/out}; mkdir -p "$out"
for f in data/traces/*-events.json.gz; do
  for w in "" --warm; do
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 python tools/driver-va/replay_segments.py "$f" $w \
      >> "$out/driver_va.jsonl" 2>> "$out/driver_va.err"
  done
done
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$out/driver_va.err"
tail -5 "$out/driver_va.err"; wc -l "$out/driver_va.jsonl"
