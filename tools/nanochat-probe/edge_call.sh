#!/bin/bash
# The two cold base_train.py runs vramfit's reserve still misses past 3 % as the script runs (issue 27, stop 66):
# nc_coldcalnr_09 (depth 20, 8 x 256 tokens, SSSL, default allocator) traced and, in a second process, with every
# kernel it times logged (autotune_log.py); and the --fp8 depth-18 run (2 x 2048, L, expandable segments) logged the
# same way. Each on its own empty Inductor/Triton cache, counters never reset (NORESET=1, as the script runs), all
# three at once on the one GPU (peaks are per process). With .nanochat carried:
#   bash tools/nanochat-probe/edge_call.sh      (writes $OUT/*.log, $OUT/nc_edge09_tr.json, $OUT/nc_edge09_tr-events.json.gz)
# `bash tools/nanochat-probe/edge_call.sh check` instead checks the model on runs it had not seen, predicted first
# (data/measured/nanochat-edge-check.jsonl says what vramfit said before they ran): three default-allocator first runs
# past C = 1024 (depth 18 at 2,048 rows, depth 24 at 2,048, depth 20 at 4,096), and nc_coldcalnr_15's flags (depth 20,
# 1,024 rows) with every timed kernel logged. Writes $OUT/<name>.log.
# `bash tools/nanochat-probe/edge_call.sh capped`: depth 20, default allocator, capped as a 24 GB card (CAP_GIB=23.0),
# on both sides of vramfit's verdict at T 2048 (B 6 / 7) and T 1024 (B 13 / 14), GA 2, each a first run with the
# counters left alone (data/predictions/nanochat-capped-d20-default.jsonl holds the verdicts, written before).
# `bash tools/nanochat-probe/edge_call.sh fp8repeat`: the --fp8 depth-18 run four times at once, each on its own
# wiped cache, counters left alone, two with TORCHINDUCTOR_COMPILE_THREADS=2 and two with 4: is its reserve one number?
# `bash tools/nanochat-probe/edge_call.sh fp8check` (stop 67): five --fp8 configurations never measured, predicted
# first (data/predictions/nanochat-fp8-check.jsonl), as base_train.py runs them (expandable segments, counters left
# alone), each cold; depth 8 at 16 x 1024 also with every allocator event kept ($OUT/<name>-events.json.gz).
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=4 NANOCHAT_BASE_DIR=/tmp/nanochat_base NORESET=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import torch;print(torch.__version__)'; } > $OUT/env.txt 2>&1
F="--num-iterations=3 --eval-every=1000 --core-metric-every=-1 --sample-every=-1 --warmup-steps=1"
D09="--depth=20 --device-batch-size=8 --max-seq-len=256 --window-pattern=SSSL --total-batch-size=2048 --eval-tokens=4096"
D18="--depth=18 --device-batch-size=2 --max-seq-len=2048 --window-pattern=L --total-batch-size=4096 --eval-tokens=8192 --fp8"
cold() { rm -rf /tmp/cache/$1 /tmp/cache/$1.pkl; mkdir -p /tmp/cache/$1
  export TORCHINDUCTOR_CACHE_DIR=/tmp/cache/$1/inductor TRITON_CACHE_DIR=/tmp/cache/$1/triton; }
if [ "$1" = check ]; then
  C15="--depth=20 --device-batch-size=4 --max-seq-len=256 --window-pattern=L --total-batch-size=1024 --eval-tokens=2048"
  ( cold nc_edge15_at; ALLOC=default timeout 450 \
      python3 tools/nanochat-probe/autotune_log.py nc_edge15_at $C15 $F > $OUT/nc_edge15_at.log 2>&1 ) &
  for c in "nc_new_d18_b4_t512 --depth=18 --device-batch-size=4 --max-seq-len=512 --window-pattern=SSSL --total-batch-size=2048 --eval-tokens=4096" \
           "nc_new_d24_b2_t1024 --depth=24 --device-batch-size=2 --max-seq-len=1024 --window-pattern=L --total-batch-size=2048 --eval-tokens=4096" \
           "nc_new_d20_b16_t256 --depth=20 --device-batch-size=16 --max-seq-len=256 --window-pattern=SSL --total-batch-size=4096 --eval-tokens=8192"; do
    set -- $c; n=$1; shift
    ( cold $n; ALLOC=default timeout 450 python3 tools/nanochat-probe/run_base.py $n "$@" $F > $OUT/$n.log 2>&1 ) &
  done
  wait; ls -la $OUT >> $OUT/env.txt; exit 0
fi
if [ "$1" = fp8check ]; then
  for c in "nc_fp8new_d12_b4_t2048 --depth=12 --device-batch-size=4 --max-seq-len=2048 --window-pattern=SSSL --total-batch-size=8192 --eval-tokens=16384" \
           "nc_fp8new_d20_b2_t2048 --depth=20 --device-batch-size=2 --max-seq-len=2048 --window-pattern=L --total-batch-size=4096 --eval-tokens=8192" \
           "nc_fp8new_d16_b16_t512 --depth=16 --device-batch-size=16 --max-seq-len=512 --window-pattern=L --total-batch-size=8192 --eval-tokens=16384" \
           "nc_fp8new_d8_b16_t1024 --depth=8 --device-batch-size=16 --max-seq-len=1024 --window-pattern=SL --total-batch-size=16384 --eval-tokens=32768" \
           "nc_fp8new_d26_b2_t2048 --depth=26 --device-batch-size=2 --max-seq-len=2048 --window-pattern=SSSL --total-batch-size=4096 --eval-tokens=8192" \
           "nc_fp8newtr_d8_b16_t1024 --depth=8 --device-batch-size=16 --max-seq-len=1024 --window-pattern=SL --total-batch-size=16384 --eval-tokens=32768"; do
    set -- $c; n=$1; shift
    ( cold $n; [ "${n#nc_fp8newtr}" != "$n" ] && export TRACE=/tmp/cache/$n.pkl
      ALLOC=expandable timeout 520 python3 tools/nanochat-probe/run_base.py $n "$@" $F --fp8 > $OUT/$n.log 2>&1
      if [ -n "$TRACE" ]; then
        grep '^RESULT ' $OUT/$n.log | sed 's/^RESULT //' > $OUT/$n.json
        (cd tools/nanochat-probe && python3 trace_events.py $TRACE $OUT/$n-events.json.gz) >> $OUT/env.txt 2>&1
      fi ) &
  done
  wait; ls -la $OUT >> $OUT/env.txt; exit 0
fi
if [ "$1" = fp8repeat ]; then
  for k in "a 2" "b 2" "c 4" "d 4"; do
    set -- $k; n=nc_fp8nr_d18_rep_$1_t$2
    ( cold $n; TORCHINDUCTOR_COMPILE_THREADS=$2 ALLOC=expandable timeout 500 \
        python3 tools/nanochat-probe/run_base.py $n $D18 $F > $OUT/$n.log 2>&1 ) &
  done
  wait; ls -la $OUT >> $OUT/env.txt; exit 0
fi
if [ "$1" = capped ]; then
  for tb in "2048 6" "2048 7" "1024 13" "1024 14"; do
    set -- $tb; T=$1 B=$2 n=nc_capdef23_d20_b${2}_t${1}
    ( cold $n; ALLOC=default CAP_GIB=23.0 timeout 500 python3 tools/nanochat-probe/run_base.py $n --depth=20 \
        --max-seq-len=$T --device-batch-size=$B --total-batch-size=$((2*B*T)) --window-pattern=SSSL \
        --eval-tokens=$((2*B*T)) $F > $OUT/$n.log 2>&1 ) &
  done
  wait; ls -la $OUT >> $OUT/env.txt; exit 0
fi
( cold nc_edge09_tr; TRACE=/tmp/cache/nc_edge09_tr.pkl ALLOC=default timeout 450 \
    python3 tools/nanochat-probe/run_base.py nc_edge09_tr $D09 $F > $OUT/nc_edge09_tr.log 2>&1
  grep '^RESULT ' $OUT/nc_edge09_tr.log | sed 's/^RESULT //' > $OUT/nc_edge09_tr.json
  (cd tools/nanochat-probe && python3 trace_events.py /tmp/cache/nc_edge09_tr.pkl $OUT/nc_edge09_tr-events.json.gz) ) &
( cold nc_edge09_at; ALLOC=default timeout 450 \
    python3 tools/nanochat-probe/autotune_log.py nc_edge09_at $D09 $F > $OUT/nc_edge09_at.log 2>&1 ) &
( cold nc_fp8_d18_at; ALLOC=expandable timeout 450 \
    python3 tools/nanochat-probe/autotune_log.py nc_fp8_d18_at $D18 $F > $OUT/nc_fp8_d18_at.log 2>&1 ) &
wait
ls -la $OUT >> $OUT/env.txt
