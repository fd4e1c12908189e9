"""One run of nanoGPT's train.py (run_train.py) with expandable segments, and every allocator event kept.

run_train.py clears PYTORCH_(CUDA_)ALLOC_CONF so its runs use the default allocator; this sets expandable
segments after that and before CUDA starts, and writes beside TRACE's summary the raw event list the summary
leaves out: every alloc, free, segment map and unmap with its address, size and time (no stacks), and the
phase marks' times. Issue 27 needs it: under a `set_per_process_memory_fraction` cap the simulation reserves
6-8 % more than such runs do (exp_s_b16, exp_w576_fp16_b16 in calibration.jsonl), and the events say where
PyTorch unmapped what the simulation kept.

ALLOCATOR=default keeps PyTorch's default caching allocator (the events then hold segment allocs `segment_alloc`
and frees instead of maps): the same event list for default-allocator runs whose reserved bytes the replay
misses (calibration.jsonl's l_b4, char_fp32_b64).

ATTENTION=manual runs train.py's own attention (its `self.flash` is False when torch.nn.functional has no
scaled_dot_product_attention: the attribute is removed before model.py is imported), as calibration.jsonl's
`attention: manual` runs were taken.

FREE_GIB=X instead of CAP_GIB caps the run as a card does, not as a memory fraction: before training, memory
outside PyTorch's allocator (cuMemAlloc) takes the card down to X GiB free, so mapping a page fails where the
card has no more (PyTorch then checks no fraction). The events file then also holds `free_at_start` (bytes free,
torch.cuda.mem_get_info, with nothing reserved by PyTorch) and `card_total`.

usage: TRACE=<summary.json> EVENTS=<events.json> CAP_GIB=18 NANOGPT=... python3 run_train_expandable.py \\
           NAME VOCAB --compile=False ...     (the arguments of run_train.py)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_train  # noqa: E402  (clears the allocator settings at import)

ALLOCATOR = os.environ.get('ALLOCATOR', 'expandable_segments')
if ALLOCATOR == 'expandable_segments':
    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'
EVENTS = os.environ['EVENTS'].replace('{rank}', os.environ.get('RANK', '0'))
_summarize = run_train.summarize
card = {}


def occupy_all_but(free_gib):
    """Leaves `free_gib` GiB of the card free, taken outside PyTorch's allocator (cuMemAlloc)."""
    import ctypes
    import torch
    torch.zeros(1, device='cuda')  # the primary context, current on this thread
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info()
    cuda = ctypes.CDLL('libcuda.so.1')
    ptr = ctypes.c_uint64()
    rc = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(free - int(float(free_gib) * 2**30)))
    assert rc == 0, f'cuMemAlloc: {rc}'
    card.update(free_at_start=torch.cuda.mem_get_info()[0], card_total=total,
                reserved_at_start=torch.cuda.memory_reserved())
    print('card', card, flush=True)


def summarize(snap, top=30):
    import torch
    entries = snap['device_traces'][torch.cuda.current_device()]
    keep = [{'a': e['action'], 'addr': e.get('addr'), 'size': e.get('size'), 't': e.get('time_us')}
            for e in entries]
    with open(EVENTS, 'w') as f:
        json.dump({'allocator': ALLOCATOR, 'marks': run_train.mark_times_us, 'events': keep, **card}, f)
    return _summarize(snap, top)


run_train.summarize = summarize

if __name__ == '__main__':
    if os.environ.get('ATTENTION') == 'manual':
        import torch.nn.functional as F
        del F.scaled_dot_product_attention
    if os.environ.get('FREE_GIB'):
        occupy_all_but(os.environ['FREE_GIB'])
    run_train.main()
