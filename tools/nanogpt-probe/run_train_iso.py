"""run_train.py, plus a line `CACHE {...}` at exit with torch's AOTAutograd / FX-graph / autotune cache counters
(to see whether a compiled graph was loaded from Inductor's on-disk caches or compiled and autotuned afresh).
Same arguments and environment as run_train.py; give each run its own TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR."""
import atexit, json, os, runpy, sys


def dump():
    try:
        from torch._dynamo.utils import counters
        keep = {k: dict(v) for k, v in counters.items() if k in ('aot_autograd', 'inductor')}
        keep = {k: {kk: vv for kk, vv in v.items() if 'cache' in kk or 'autotune' in kk or 'benchmark' in kk}
                for k, v in keep.items()}
        print('CACHE ' + json.dumps({'dir': os.environ.get('TORCHINDUCTOR_CACHE_DIR'), 'counters': keep}), flush=True)
    except Exception as e:  # noqa
        print('CACHE error', repr(e), flush=True)


atexit.register(dump)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_train  # noqa: E402
run_train.main()
