"""What the held-out call scripts share (edge2.py, microsteps.py, nanochat_accum.py): a private compile cache per
run, vramfit's predictions for an H200 written before the runs, and their `predict` / `jobs` command line."""
import datetime
import json
import subprocess
import sys


def cache(name):
    """A private empty Inductor/Triton cache: a user's first run."""
    return {'TORCHINDUCTOR_CACHE_DIR': f'/tmp/ic/{name}', 'TRITON_CACHE_DIR': f'/tmp/ic/{name}/triton'}


def predict(vramfit, runs):
    """One JSON line per (name, vramfit's flags) of `runs`: its peaks as vramfit says them for an H200."""
    head = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    for name, flags in runs:
        out = subprocess.run([vramfit, '--json', '--gpu', 'h200', *flags], capture_output=True, text=True, check=True)
        p = json.loads(out.stdout)['peak_bytes']
        print(json.dumps({'name': name, 'predicted_by': f'vramfit {head}', 'flags': flags,
                          'predicted_at': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%MZ'),
                          'predicted_bytes': {k: p.get(k) for k in ('reserved', 'train_steady', 'train_first_iter',
                                                                    'eval')}}))


def main(doc, runs, jobs):
    """`predict [VRAMFIT]` (vramfit's answers for `runs`, to stdout) or `jobs OUT.json` (drive.py's job list, from
    `jobs`, a list of job dicts)."""
    if sys.argv[1:2] == ['predict']:
        predict(sys.argv[2] if len(sys.argv) > 2 else 'target/release/vramfit', runs)
    elif sys.argv[1:3] and sys.argv[1] == 'jobs' and len(sys.argv) > 2:
        json.dump(jobs, open(sys.argv[2], 'w'), indent=0)
    else:
        sys.exit(doc)
