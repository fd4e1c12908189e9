#!/bin/bash
# The 30 configurations of data/measured/nanochat.jsonl (`nc_cal_XX`, default allocator) re-measured as a user's
# first run: each process its own empty Inductor/Triton cache. The nc_cal runs shared one compile cache, so their
# iteration 0 and reserve are what a cache other runs had filled decides (README "How accurate"); these are the same
# flags cold. With .nanochat carried:
#   [TRACE_RUNS=1] [NORESET=1] bash tools/nanochat-probe/cold_cal_call.sh PARALLEL DEADLINE_S [nc_cal_XX ...]
# writes $OUT/results.jsonl, $OUT/env.txt, $OUT/logs.txt; given names, only those run. TRACE_RUNS=1 records each run's
# allocator history as $OUT/<name>-events.json.gz (trace_events.py), as device_call_trace.sh does.
# NORESET=1 (run_base.py): the marks leave the peak counters alone, as the script does (names nc_coldcalnr_XX).
# DATA=data/measured/<file>.jsonl (default nanochat.jsonl) takes another file's argv and allocator: its cold runs again
# as they were launched (names <name>_nr with NORESET=1, <name>_again without); `_warm` twins are left out.
# Runs start as earlier ones finish (xargs -P), at most PARALLEL at once on the one GPU (peaks are per process).
P=${1:-10} D=${2:-400}; shift 2; NAMES="$*"; DATA=${DATA:-data/measured/nanochat.jsonl}; export OUT NAMES TRACE_RUNS DATA
L=$(mktemp -d); export L  # this call's logs: a warm machine keeps an earlier call's
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 NANOCHAT_BASE_DIR=/tmp/nanochat_base D
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import torch;print(torch.__version__)'; nproc; } > $OUT/env.txt 2>&1
one() { # NAME ALLOCATOR ARGV...
  local N=${1/nc_cal_/nc_coldcal${NORESET:+nr}_}; [ "$N" = "$1" ] && N=$1${NORESET:+_nr}; [ "$N" = "$1" ] && N=$1_again
  local ALLOC=expandable; [ "$2" = default ] && ALLOC=default; export ALLOC; shift 2
  rm -rf /tmp/cache/$N /tmp/cache/$N.pkl; mkdir -p /tmp/cache/$N  # cold even where an earlier call ran it
  [ -n "$TRACE_RUNS" ] && export TRACE=/tmp/cache/$N.pkl
  TORCHINDUCTOR_CACHE_DIR=/tmp/cache/$N/inductor TRITON_CACHE_DIR=/tmp/cache/$N/triton \
    timeout $D python3 tools/nanochat-probe/run_base.py $N "$@" > $L/$N.log 2>&1
  echo "$N rc=$?" >> $OUT/env.txt
  [ -n "$TRACE_RUNS" ] && (cd tools/nanochat-probe && python3 trace_events.py /tmp/cache/$N.pkl $OUT/$N-events.json.gz) >> $OUT/env.txt 2>&1
}
export -f one
python3 -c '
import json, os
for l in open(os.environ["DATA"]):
    r = json.loads(l)
    if os.environ["NAMES"] and r["name"] not in os.environ["NAMES"].split() or r["name"].endswith("_warm"):
        continue
    print(" ".join([r["name"], r.get("allocator", "default"), *r["argv"]]))' | xargs -P "$P" -L 1 bash -c 'one "$@"' _
grep -h '^RESULT' $L/*.log | sed 's/^RESULT //' > $OUT/results.jsonl
for f in $L/*.log; do echo "=== $f"; tail -c 1500 $f; done > $OUT/logs.txt
