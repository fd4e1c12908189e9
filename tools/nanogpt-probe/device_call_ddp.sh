#!/bin/bash
# One device call on two GPUs (issue 27): nanoGPT's train.py under torchrun --nproc_per_node=2, eager GPT-2 124M as
# data/measured/ddp2.jsonl's runs, to find what decides each rank's reserved bytes.
#   bash tools/nanogpt-probe/device_call_ddp.sh repeats   the same two configs three times each, then each once with
#                                                        PAUSE=0.3 (the watchdog has released the old buckets before
#                                                        iteration 1), and one run with every allocator event kept
#   bash tools/nanogpt-probe/device_call_ddp.sh check     configs vramfit predicted first (data/predictions/ddp2-check.jsonl)
#   bash tools/nanogpt-probe/device_call_ddp.sh check1    on ONE GPU, configs vramfit predicted first
#                                                        (data/predictions/ddp1-check.jsonl)
#   bash tools/nanogpt-probe/device_call_ddp.sh race1     on ONE GPU: torchrun --nproc_per_node=1 (train.py still wraps
#                                                        the model in DDP: the buckets, their rebuild and NCCL's
#                                                        watchdog are all there), two configs three times each and
#                                                        twice with PAUSE=0.3, one run with every allocator event
# with .nanogpt carried; every rank's record goes to $OUT/<mode>.jsonl (the check's results are not printed).
set -u
export NANOGPT=$PWD/.nanogpt NANOGPT_COMMIT=3adf61e154c3fe3fca428ad6bc3818b27a3b8291 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)"
H=tools/nanogpt-probe
G="--compile=False --dtype=bfloat16 --eval_iters=2"
NPROC=2
run() {  # NAME ARGS...: one torchrun, every rank's RESULT line appended to $OUT/$MODE.jsonl
  local name=$1; shift
  timeout 170 torchrun --standalone --nproc_per_node=$NPROC "$@" 2>&1 | grep '^RESULT ' | sed 's/^RESULT //' >> $OUT/$MODE.jsonl
}
summary() {
  python3 - $OUT/$MODE.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    m = r['measured_bytes']
    it = [round(x['reserved'] / 2**20) for x in r['marks'] if x['tag'] == 'optimizer_step']
    print(f"{r['name']:20} rank {r['rank']} {r['gpu']} reserved {m['peak_reserved']} steady {m['peak_allocated_train_steady']} "
          f"iter0 {m['peak_allocated_train_iter0']} reserved after each step (MiB) {it}")
PY
}
MODE=$1
case $MODE in
repeats)
  for r in 1 2 3; do
    run s_b16_r$r $H/run_train.py ddp2_s_b16_r$r 50304 $G --batch_size=16 --gradient_accumulation_steps=4
    run s_b4_r$r $H/run_train.py ddp2_s_b4_r$r 50304 $G --batch_size=4 --gradient_accumulation_steps=4
  done
  PAUSE=0.3 run s_b16_pause $H/run_train.py ddp2_s_b16_pause 50304 $G --batch_size=16 --gradient_accumulation_steps=4
  PAUSE=0.3 run s_b4_pause $H/run_train.py ddp2_s_b4_pause 50304 $G --batch_size=4 --gradient_accumulation_steps=4
  ALLOCATOR=default TRACE=$OUT/ddp2_s_b16_ev_rank{rank}.json EVENTS=$OUT/ddp2_s_b16_ev_rank{rank}.events.json \
    run s_b16_ev $H/run_train_expandable.py ddp2_s_b16_ev 50304 $G --batch_size=16 --gradient_accumulation_steps=4
  gzip -9 $OUT/*.events.json
  summary
  ;;
race1)
  NPROC=1
  for r in 1 2 3; do
    run s_b16_r$r $H/run_train.py ddp1_s_b16_r$r 50304 $G --batch_size=16 --gradient_accumulation_steps=2
    run s_b4_r$r $H/run_train.py ddp1_s_b4_r$r 50304 $G --batch_size=4 --gradient_accumulation_steps=2
  done
  for r in 1 2; do
    PAUSE=0.3 run s_b16_pause$r $H/run_train.py ddp1_s_b16_pause$r 50304 $G --batch_size=16 --gradient_accumulation_steps=2
    PAUSE=0.3 run s_b4_pause$r $H/run_train.py ddp1_s_b4_pause$r 50304 $G --batch_size=4 --gradient_accumulation_steps=2
  done
  ALLOCATOR=default TRACE=$OUT/ddp1_s_b16_ev.json EVENTS=$OUT/ddp1_s_b16_ev.events.json \
    run s_b16_ev $H/run_train_expandable.py ddp1_s_b16_ev 50304 $G --batch_size=16 --gradient_accumulation_steps=2
  gzip -9 $OUT/*.events.json
  summary
  ;;
check1)
  # on ONE GPU under torchrun, configs vramfit predicted first (data/predictions/ddp1-check.jsonl); each compiled
  # run on its own empty Inductor and Triton caches (a user's first run)
  NPROC=1
  run c1 $H/run_train.py ddp1c_m_b2_ga2 50304 $G --batch_size=2 --gradient_accumulation_steps=2 --n_layer=24 --n_head=16 --n_embd=1024
  run c2 $H/run_train.py ddp1c_s_b12_ga1 50304 $G --batch_size=12 --gradient_accumulation_steps=1
  run c3 $H/run_train.py ddp1c_s_fp16_b8_ga2 50304 --compile=False --dtype=float16 --eval_iters=2 --batch_size=8 --gradient_accumulation_steps=2
  PAUSE=0.3 run c4 $H/run_train.py ddp1c_s_b6_ga2_pause 50304 $G --batch_size=6 --gradient_accumulation_steps=2
  TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d) \
    run c5 $H/run_train.py ddp1c_s_comp_b8_ga2 50304 --compile=True --dtype=bfloat16 --eval_iters=2 --batch_size=8 --gradient_accumulation_steps=2
  summary
  ;;
check)
  run c1 $H/run_train.py ddp2c_s_b12_ga2 50304 $G --batch_size=12 --gradient_accumulation_steps=2
  run c2 $H/run_train.py ddp2c_s_b6_ga8 50304 $G --batch_size=6 --gradient_accumulation_steps=8
  run c3 $H/run_train.py ddp2c_m_b2_ga4 50304 $G --batch_size=2 --gradient_accumulation_steps=4 --n_layer=24 --n_head=16 --n_embd=1024
  PAUSE=0.3 run c4 $H/run_train.py ddp2c_s_b20_ga2_pause 50304 $G --batch_size=20 --gradient_accumulation_steps=2
  wc -l $OUT/$MODE.jsonl
  ;;
esac
ls -la $OUT
