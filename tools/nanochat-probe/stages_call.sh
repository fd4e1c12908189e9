#!/bin/bash
# One device call for the eval / SFT-eval / RL stages (README "Eval, SFT-eval and RL stages"). With .nanochat carried:
#   bash tools/nanochat-probe/stages_call.sh DEADLINE_S [smoke|heldout|rlheldout]
# 1. the synthetic CORE bundle (run_base_eval.py --make-bundle);
# 2. the checkpoints (make_jobs.py `stageck`: run_sft.py = real base_train.py + real chat_sft.py, 1 step each, per
#    depth, three at once; `stageck_smoke`: base_train.py only, linked as the SFT checkpoint);
# 3. the measured runs (make_jobs.py `beval,ceval,rl`, or `stage_smoke`: one of each), up to 10 processes at once on
#    the one GPU (peaks are per process), each with its own empty Inductor/Triton cache.
# `heldout`: make_jobs.py `stageck_heldout` (the d16 T2048 checkpoint) and `stage_heldout` (its base_eval and
#    chat_eval runs) instead of steps 2-3's lists.
# `rlheldout`: the same d16 T2048 checkpoint (`stageck_heldout`), then `rl_heldout` (three chat_rl runs on it); no
#    CORE bundle (chat_rl reads none), and the checkpoint job compiles with 16 Inductor threads instead of 4 (it is
#    not measured; the measured runs keep TORCHINDUCTOR_COMPILE_THREADS=2 as always).
# Writes $OUT/env.txt, $OUT/{beval,ceval,rl}.jsonl, $OUT/ck/stageck.jsonl, $OUT/logs.tar.gz, $OUT/ck/logs.tar.gz.
D=${1:-540}
T0=$(date +%s)
P=tools/nanochat-probe
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 NANOCHAT_BASE_DIR=/tmp/nanochat_base GPU_GB=130
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)'
  python3 -c 'import jinja2; print("jinja2", jinja2.__version__)'
  python3 -c 'import yaml; print("yaml", yaml.__version__)'
  nproc; } > $OUT/env.txt 2>&1
[ "$2" = rlheldout ] || python3 $P/run_base_eval.py --make-bundle >> $OUT/env.txt 2>&1
CKT=4
if [ "$2" = smoke ]; then CK=stageck_smoke; EV=stage_smoke
elif [ "$2" = heldout ]; then CK=stageck_heldout; EV=stage_heldout
elif [ "$2" = rlheldout ]; then CK=stageck_heldout; EV=rl_heldout; CKT=16
else CK=stageck; EV=beval,ceval,rl; fi
python3 $P/make_jobs.py $CK /tmp/ck.json
mkdir -p $OUT/ck
OUT=$OUT/ck TORCHINDUCTOR_COMPILE_THREADS=$CKT python3 $P/drive.py /tmp/ck.json 3 330 > $OUT/ck_driver.log 2>&1
if [ "$2" = smoke ]; then
  mkdir -p $NANOCHAT_BASE_DIR/chatsft_checkpoints
  ln -s $NANOCHAT_BASE_DIR/base_checkpoints/sft_st_ck_d4 $NANOCHAT_BASE_DIR/chatsft_checkpoints/sft_st_ck_d4
fi
ls -laR $NANOCHAT_BASE_DIR/base_checkpoints $NANOCHAT_BASE_DIR/chatsft_checkpoints >> $OUT/env.txt 2>&1
echo "checkpoints done after $(( $(date +%s) - T0 )) s" >> $OUT/env.txt
python3 $P/make_jobs.py $EV /tmp/jobs.json
python3 $P/drive.py /tmp/jobs.json 10 $(( D - ($(date +%s) - T0) )) > $OUT/driver.log 2>&1
echo "all done after $(( $(date +%s) - T0 )) s" >> $OUT/env.txt
