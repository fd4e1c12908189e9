"""Which kernels a cold run times, and with how many configurations (vramfit measurement harness).

Wraps Inductor's `CachingAutotuner.autotune_to_one_config` (PyTorch 2.11, runtime/triton_heuristics.py), which a
kernel runs at its first launch when it has more than one launcher, and prints one line per call:
    AUTOTUNE <kernel name> <launchers> <memory_allocated> [(config kwargs, num_warps, n_regs), ...]
    AUTOTUNED <kernel name> t_us <start> <end> max_allocated <before> <after> reserved <before> <after>
then runs run_base.py with the same arguments (its RESULT line as usual), or the probe PROBE names (PROBE=run_chat_rl.py).
Each kernel's precompile prints one line too, so a kernel that is never timed shows how many configurations it had:
    PRECOMPILE <kernel name> <compiled configs> <launchers> autotune_pointwise=<inductor_meta's>
The launchers include the ones `_dynamic_scale_rblock` adds (a reduction's R0_BLOCK halved where its register count
limits occupancy), which the heuristics' own config lists do not show. Written for docs/allocation-order.md §19 (issue
27, stop 64; autotune_call.sh runs it; rl_trace_call.sh runs it on chat_rl.py, stop 65):
    NANOCHAT=.nanochat ALLOC=default NORESET=1 python3 autotune_log.py NAME <base_train.py flags>
"""
import os
import runpy
import sys
import time

import torch
from torch._inductor.runtime import triton_heuristics as th

_inner = th.CachingAutotuner.autotune_to_one_config


def _logged(self, *args, **kwargs):
    ls = [(dict(l.config.kwargs), l.config.num_warps, getattr(l, 'n_regs', None)) for l in self.launchers]
    name = self.inductor_meta.get('kernel_name', getattr(self.fn, '__name__', '?'))
    print(f'AUTOTUNE {name} {len(ls)} {torch.cuda.memory_allocated()} {ls}', flush=True)
    before = (time.time_ns() // 1000, torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved())
    out = _inner(self, *args, **kwargs)
    after = (time.time_ns() // 1000, torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved())
    print(f'AUTOTUNED {name} t_us {before[0]} {after[0]} max_allocated {before[1]} {after[1]} '
          f'reserved {before[2]} {after[2]}', flush=True)
    return out


_precompile = th.CachingAutotuner.precompile


def _precompile_logged(self, *args, **kwargs):
    out = _precompile(self, *args, **kwargs)
    name = self.inductor_meta.get('kernel_name', getattr(self.fn, '__name__', '?'))
    n = len(getattr(self, 'compile_results', None) or [])
    print(f'PRECOMPILE {name} {n} {len(self.launchers or [])} '
          f'autotune_pointwise={self.inductor_meta.get("autotune_pointwise")}', flush=True)
    return out


th.CachingAutotuner.autotune_to_one_config = _logged
th.CachingAutotuner.precompile = _precompile_logged
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [os.path.join(here, os.environ.get('PROBE', 'run_base.py')), *sys.argv[1:]]
runpy.run_path(sys.argv[0], run_name='__main__')
