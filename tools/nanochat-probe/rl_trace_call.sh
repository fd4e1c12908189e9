#!/bin/bash
# One device call on chat_rl.py's run whose reserve vramfit misses most (nc_rl_d12_b4_n8_m128), measured several ways
# beside each other, each on its own wiped, empty Inductor/Triton cache (issue 27, stop 65). With .nanochat carried:
#   bash tools/nanochat-probe/rl_trace_call.sh [SUFFIX ...]        (every variant unless some are named)
# First the depth-12 SFT checkpoint, as stages_call.sh makes it (make_jobs.py `stageck`, its d12 job only). Variants:
#   _trace           as the stages probe measured it (its marks reset the peak counters), allocator history recorded
#   _nr, _nr_trace   without the resets (NORESET=1, as chat_rl.py runs), untraced and traced
#   _autotune        under autotune_log.py: every kernel's precompile and timing (its log in logs.tar.gz)
#   _autotune_trace  the same, traced
#   _snap            traced, and the allocator's segments at the second post_bwd mark (just before step 0's
#                    optimizer step) written to $OUT/rl_snap.layout.json.gz (run_base_eval.py SNAPSHOT_AT)
# Writes $OUT/env.txt, $OUT/rl.jsonl and trace.jsonl (the records), $OUT/<trace>.events.json.gz (trace_events.py's
# compact events), $OUT/logs.tar.gz, $OUT/ck/. The traced variants take ~120 s each beside the checkpoint's 60-180 s.
P=tools/nanochat-probe
export OUT
export NANOCHAT=$PWD/.nanochat PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=2 NANOCHAT_BASE_DIR=/tmp/nanochat_base GPU_GB=130
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch,sys;print(torch.__version__, torch.version.cuda, sys.version)'; nproc; } > $OUT/env.txt 2>&1
python3 $P/make_jobs.py stageck /tmp/ck_all.json
python3 -c "import json; j=json.load(open('/tmp/ck_all.json')); json.dump([x for x in j if x['name']=='st_ck_d12'], open('/tmp/ck.json','w'))"
mkdir -p $OUT/ck
OUT=$OUT/ck TORCHINDUCTOR_COMPILE_THREADS=16 python3 $P/drive.py /tmp/ck.json 1 300 > $OUT/ck_driver.log 2>&1
echo "checkpoint done after $(( $(date +%s) - T0 )) s" >> $OUT/env.txt
python3 $P/make_jobs.py rl /tmp/rl_all.json
SUFFIXES="$*" python3 - <<'PY'
import json, os
base = [x for x in json.load(open('/tmp/rl_all.json')) if x['name'] == 'nc_rl_d12_b4_n8_m128'][0]
jobs = []
for suffix, extra in (('_trace', {'TRACE': '/tmp/traces/rl_trace.pkl'}), ('_nr', {'NORESET': '1'}),
                      ('_nr_trace', {'NORESET': '1', 'TRACE': '/tmp/traces/rl_nr_trace.pkl'}),
                      ('_autotune', {'NORESET': '1', 'PROBE': 'run_chat_rl.py'}),
                      ('_autotune_trace', {'NORESET': '1', 'PROBE': 'run_chat_rl.py',
                                           'TRACE': '/tmp/traces/rl_autotune_trace.pkl'}),
                      ('_snap', {'NORESET': '1', 'TRACE': '/tmp/traces/rl_snap.pkl', 'SNAPSHOT_AT': 'post_bwd:2',
                                 'SNAPSHOT_FILE': os.environ['OUT'] + '/rl_snap.layout.json.gz'})):
    if os.environ['SUFFIXES'] and suffix not in os.environ['SUFFIXES'].split():
        continue
    n = base['name'] + suffix
    env = dict(base['env'], TORCHINDUCTOR_CACHE_DIR=f'/tmp/cache/{n}/inductor', TRITON_CACHE_DIR=f'/tmp/cache/{n}/triton', **extra)
    cmd = list(base['cmd']); cmd[2] = n
    if 'PROBE' in extra:  # autotune_log.py: every kernel's precompile and timing, then the probe
        cmd[1] = cmd[1].replace('run_chat_rl.py', 'autotune_log.py')
    jobs.append(dict(base, name=n, env=env, cmd=cmd, kind='trace' if 'TRACE' in extra else 'rl'))
json.dump(jobs, open('/tmp/jobs.json', 'w'))
PY
# a warm machine keeps /tmp/cache from an earlier call: wipe each run's cache, or its compile is warm
rm -rf /tmp/cache/nc_rl_d12_b4_n8_m128_*
python3 $P/drive.py /tmp/jobs.json 3 $(( 560 - ($(date +%s) - T0) )) > $OUT/driver.log 2>&1
for t in /tmp/traces/*.pkl; do python3 $P/trace_events.py $t $OUT/$(basename $t .pkl).events.json.gz; done
rm -f $OUT/traces.tar
echo "all done after $(( $(date +%s) - T0 )) s" >> $OUT/env.txt
