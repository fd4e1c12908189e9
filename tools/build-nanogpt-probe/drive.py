"""(Copied from tools/nanochat-probe/drive.py, trace handling removed; since 2026-11-29 with START_CUTOFF_S, each job
in its own process group, killed as a group at the deadline.) Run many probe jobs in parallel on one GPU within a time budget (vramfit
measurement driver).

usage (on the device, from the repo root):  python3 tools/build-nanogpt-probe/drive.py JOBS.json PARALLEL DEADLINE_S
env START_CUTOFF_S: start no job after this many seconds (default DEADLINE_S - 60); GPU_GB (default 72).
JOBS.json (make_jobs.py): list of {"kind": "bng", "name": .., "cmd": [..], "env": {..}}.
Writes $OUT/<kind>.jsonl (one RESULT record a line, appended as jobs finish), $OUT/logs/<name>.log, and at the end
$OUT/logs.tar.gz.
"""
import json, os, signal, subprocess, sys, time, tarfile, glob

jobs = json.load(open(sys.argv[1]))
par, deadline = int(sys.argv[2]), float(sys.argv[3])
cutoff = float(os.environ.get('START_CUTOFF_S', deadline - 60))
OUT = os.environ['OUT']
os.makedirs(f'{OUT}/logs', exist_ok=True)
t_start = time.time()
GPU_GB = float(os.environ.get('GPU_GB', 72))
here = os.path.dirname(os.path.abspath(__file__))
running = {}
pending = list(jobs)
done = []


def finish(j, p, f, t0):
    f.close()
    log = open(f'{OUT}/logs/{j["name"]}.log').read()
    res = [l[7:] for l in log.splitlines() if l.startswith('RESULT ')]
    st = f'rc={p.returncode} results={len(res)}'
    for r in res:
        with open(f'{OUT}/{j["kind"]}.jsonl', 'a') as g:
            g.write(r.strip() + '\n')
    print(f'[{time.time()-t_start:6.0f}s] done {j["name"]} {st} ({time.time()-t0:.0f} s)', flush=True)


while pending or running:
    now = time.time() - t_start
    while pending and len(running) < par and now < cutoff:
        # memory-aware: start the first pending job whose estimated GiB fits next to the running ones
        used = sum(r[0].get('gb', 16) for r in running.values())
        fit = [j for j in pending if used + j.get('gb', 16) <= GPU_GB or not running]
        if not fit:
            break
        j = fit[0]
        pending.remove(j)
        env = dict(os.environ, PYTHONUNBUFFERED='1', **j.get('env', {}))
        f = open(f'{OUT}/logs/{j["name"]}.log', 'w')
        p = subprocess.Popen(j['cmd'], stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        running[j['name']] = (j, p, f, time.time())
        print(f'[{now:6.0f}s] start {j["name"]}', flush=True)
    for name, (j, p, f, t0) in list(running.items()):
        if p.poll() is not None:
            del running[name]
            finish(j, p, f, t0)
        elif time.time() - t_start > deadline:
            os.killpg(p.pid, signal.SIGKILL); p.wait()
            del running[name]
            finish(j, p, f, t0)
            print(f'killed {name} at deadline', flush=True)
    if not pending and not running:
        break
    if pending and time.time() - t_start >= cutoff and not running:
        break
    time.sleep(1)
print('not started:', [j['name'] for j in pending], flush=True)
with tarfile.open(f'{OUT}/logs.tar.gz', 'w:gz') as t:
    t.add(f'{OUT}/logs', arcname='logs')
subprocess.run(['rm', '-rf', f'{OUT}/logs'])
