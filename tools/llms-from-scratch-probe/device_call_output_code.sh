#!/bin/bash
# One device call (issue 27): the code Inductor generates for the speed script's compiled graphs (01_opt_single_gpu.py:
# training forward, backward, eval forward, the sampler's), for the two runs whose reserved bytes the hand-written
# backward misses (N = B·T = 1,024 with E = 768: a weight gradient and a (N, 3E) buffer of one size, so Inductor's
# buffer reuse pairs them) and one where it does not. Each run has its own empty Inductor cache; the generated
# modules (*.py) are collected from it. Carry .lfs:
#   bash tools/llms-from-scratch-probe/device_call_output_code.sh        writes $OUT/<name>.tgz and $OUT/env.txt
export LFS=$PWD/.lfs PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=2
unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"; } > $OUT/env.txt 2>&1
spd() { # NAME ARGS...
  local N=$1; shift
  ( timeout 400 python3 tools/llms-from-scratch-probe/run_speed.py $N --cache-dir /tmp/oc/$N --steps 2 "$@" \
      > /tmp/oc/$N.log 2>&1
    echo "$N rc=$?" >> $OUT/env.txt
    tail -3 /tmp/oc/$N.log >> $OUT/env.txt
    cd /tmp/oc/$N && find . -name '*.py' -size +1k | tar czf $OUT/$N.tgz -T - ) & }
mkdir -p /tmp/oc
spd oc_spd_l2_c256_b4 --layers 2 --ctx 256 --batch 4
spd oc_spd_c1024_b1 --layers 12 --ctx 1024 --batch 1
spd oc_spd_c1024_b8 --layers 12 --ctx 1024 --batch 8
wait
ls -la $OUT
