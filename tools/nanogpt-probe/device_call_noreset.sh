#!/bin/bash
# One device call (issue 27, stop 63): nanogpt-compiled-cold-h200.jsonl's eight first runs again, each on its own empty
# Inductor/Triton cache, default allocator, uncapped, in parallel, with the probe's marks leaving the peak counters
# alone (NORESET=1, run_train.py), as train.py runs: does the probes' reset_peak_memory_stats change train.py's
# reserve, as it does nanochat's (docs/allocation-order.md §18)? With .nanogpt carried:
#   bash tools/nanogpt-probe/device_call_noreset.sh   (writes $OUT/results.jsonl, $OUT/env.txt)
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 PYTHONUNBUFFERED=1 NORESET=1 \
  TORCHINDUCTOR_COMPILE_THREADS=2
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
L=$(mktemp -d)
python3 - > $L/jobs <<'PY'
import json
for l in open('data/measured/nanogpt-compiled-cold-h200.jsonl'):
    r = json.loads(l)
    argv = [a for a in r['script_argv'] if not a.startswith('--out_dir=')]
    print(' '.join([r['name'] + '_noreset', str(r.get('vocab_size') or r['config']['vocab_size']), *argv]))
PY
one() { # NAME VOCAB ARGS...
  local N=$1; rm -rf /tmp/ic/$N; mkdir -p /tmp/ic/$N
  TORCHINDUCTOR_CACHE_DIR=/tmp/ic/$N TRITON_CACHE_DIR=/tmp/ic/$N/triton timeout 400 \
    python3 tools/nanogpt-probe/run_train.py "$@" > $L/$N.log 2>&1
  echo "$N rc=$?" >> $OUT/env.txt
}
export -f one; export L OUT
xargs -P 8 -L 1 bash -c 'one "$@"' _ < $L/jobs
grep -h '^RESULT' $L/*.log | sed 's/^RESULT //' > $OUT/results.jsonl
for f in $L/*.log; do echo "=== $f"; tail -c 1500 $f; done > $OUT/logs.txt
