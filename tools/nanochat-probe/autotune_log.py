"""Which kernels a cold run times, and with how many configurations (vramfit measurement harness).

Wraps Inductor's `CachingAutotuner.autotune_to_one_config` (PyTorch 2.11, runtime/triton_heuristics.py), which a
kernel runs at its first launch when it has more than one launcher, and prints one line per call:
    AUTOTUNE <kernel name> <launchers> <memory_allocated> [(config kwargs, num_warps, n_regs), ...]
then runs run_base.py with the same arguments (its RESULT line as usual). The launchers include the ones
`_dynamic_scale_rblock` adds (a reduction's R0_BLOCK halved where its register count limits occupancy), which the
heuristics' own config lists do not show. Written for docs/allocation-order.md §19 (issue 27, stop 64; autotune_call.sh runs it):
    NANOCHAT=.nanochat ALLOC=default NORESET=1 python3 autotune_log.py NAME <base_train.py flags>
"""
import os
import runpy
import sys

import torch
from torch._inductor.runtime import triton_heuristics as th

_inner = th.CachingAutotuner.autotune_to_one_config


def _logged(self, *args, **kwargs):
    ls = [(dict(l.config.kwargs), l.config.num_warps, getattr(l, 'n_regs', None)) for l in self.launchers]
    name = self.inductor_meta.get('kernel_name', getattr(self.fn, '__name__', '?'))
    print(f'AUTOTUNE {name} {len(ls)} {torch.cuda.memory_allocated()} {ls}', flush=True)
    return _inner(self, *args, **kwargs)


th.CachingAutotuner.autotune_to_one_config = _logged
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [os.path.join(here, 'run_base.py'), *sys.argv[1:]]
runpy.run_path(sys.argv[0], run_name='__main__')
