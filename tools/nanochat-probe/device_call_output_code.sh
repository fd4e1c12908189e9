#!/bin/bash
# One device call (issue 27): the code Inductor generates for nanochat base_train.py's graphs (eval forward, training
# forward and backward, MuonAdamW's steps) at two of the traced configs whose expandable-segments reserve vramfit
# misses by 7-8 % (nc_tr_exp_cal29: depth 16, B8 T512, L; nc_tr_exp_22: depth 20, B4 T1024, SSL): the training
# backward is what to write from them (docs/allocation-order.md §12). Each run has its own empty Inductor cache; the
# generated modules (*.py) are collected from it. Carry .nanochat:
#   bash tools/nanochat-probe/device_call_output_code.sh        writes $OUT/<name>.tgz and $OUT/env.txt
#   bash tools/nanochat-probe/device_call_output_code.sh fp8    --fp8's graphs (d4 B8 T512 SSL, d18 B2 T2048 L), with
#                                                             Dynamo's graph-break and recompile logs in <name>.tgz
#   bash tools/nanochat-probe/device_call_output_code.sh over   the three configs the generated-code backward of stop 58
#                                                             still misses past 3 % (nc_tr_exp_23, nc_tr_exp_cal24,
#                                                             nc_tr_d18_B8_T512_L; allocation-order.md §13)
export NANOCHAT=$PWD/.nanochat NANOCHAT_BASE_DIR=/tmp/nanochat_base PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 \
  ALLOC=expandable
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
nc() { # NAME FLAGS...
  local N=$1; shift
  ( export TORCHINDUCTOR_CACHE_DIR=/tmp/oc/$N TRITON_CACHE_DIR=/tmp/oc/$N/triton
    timeout 500 python3 tools/nanochat-probe/run_base.py $N "$@" --num-iterations=2 --eval-every=1000 \
      --core-metric-every=-1 --sample-every=-1 --warmup-steps=1 > /tmp/oc/$N.log 2>&1
    echo "$N rc=$?" >> $OUT/env.txt
    cp /tmp/oc/$N.log /tmp/oc/$N/run.log
    cd /tmp/oc/$N && { find . -name '*.py' -size +1k; echo run.log; } | tar czf $OUT/$N.tgz -T - ) & }
mkdir -p /tmp/oc
if [ "${1:-}" = fp8 ]; then
  # stop 62: --fp8's graphs, at the traced d4 config and at the one whose reserve the model misses most
  # (nc_fp8tr_d18_B2_T2048_GA1_L); Dynamo's graph breaks and recompiles logged beside them
  export TORCH_LOGS=graph_breaks,recompiles
  nc oc_nc_fp8_d4_B8_T512_SSL --depth=4 --device-batch-size=8 --max-seq-len=512 --window-pattern=SSL \
    --total-batch-size=4096 --eval-tokens=8192 --fp8
  nc oc_nc_fp8_d18_B2_T2048_L --depth=18 --device-batch-size=2 --max-seq-len=2048 --window-pattern=L \
    --total-batch-size=4096 --eval-tokens=8192 --fp8
elif [ "${1:-}" = over ]; then
  nc oc_nc_d20_B16_T512_L --depth=20 --device-batch-size=16 --max-seq-len=512 --window-pattern=L \
    --total-batch-size=8192 --eval-tokens=16384
  nc oc_nc_d8_B8_T1024_SSSL --depth=8 --device-batch-size=8 --max-seq-len=1024 --window-pattern=SSSL \
    --total-batch-size=16384 --eval-tokens=16384
  nc oc_nc_d18_B8_T512_L --depth=18 --device-batch-size=8 --max-seq-len=512 --window-pattern=L \
    --total-batch-size=4096 --eval-tokens=8192
else
  nc oc_nc_d16_B8_T512_L --depth=16 --device-batch-size=8 --max-seq-len=512 --window-pattern=L --total-batch-size=4096 \
    --eval-tokens=8192
  nc oc_nc_d20_B4_T1024_SSL --depth=20 --device-batch-size=4 --max-seq-len=1024 --window-pattern=SSL \
    --total-batch-size=8192 --eval-tokens=8192
fi
wait
ls -la $OUT
