#!/bin/bash
# One device call: bash tools/nanogpt-probe/device_call_iso.sh PARALLEL COLD_S WARM_S CROSS_S   (carry .nanogpt)
# cold wave, warm wave, cross wave; each run with its own Inductor/Triton cache dir (make_jobs_iso.py).
set -x
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=${NANOGPT_COMMIT:-3adf61e154c3fe3fca428ad6bc3818b27a3b8291} PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=${TCT:-2} GPU_GB=76
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
rm -rf /tmp/ic; ROOT_OUT=$OUT
declare -A DL=([cold]=$2 [warm]=$3 [cross]=$4)
for w in cold warm cross; do
  mkdir -p $ROOT_OUT/$w
  OUT=$ROOT_OUT/$w python3 tools/nanogpt-probe/make_jobs_iso.py $w /tmp/jobs_$w.json
  OUT=$ROOT_OUT/$w python3 tools/nanochat-probe/drive.py /tmp/jobs_$w.json "$1" "${DL[$w]}" 2>&1 | tee -a $ROOT_OUT/driver.log
done
cd $ROOT_OUT && tar czf logs_all.tgz */logs.tar.gz && rm */logs.tar.gz; ls -laR $ROOT_OUT
