"""One run of nanoGPT's train.py (run_train.py) with expandable segments, and every allocator event kept.

run_train.py clears PYTORCH_(CUDA_)ALLOC_CONF so its runs use the default allocator; this sets expandable
segments after that and before CUDA starts, and writes beside TRACE's summary the raw event list the summary
leaves out: every alloc, free, segment map and unmap with its address, size and time (no stacks), and the
phase marks' times. Issue 27 needs it: under a `set_per_process_memory_fraction` cap the simulation reserves
6-8 % more than such runs do (exp_s_b16, exp_w576_fp16_b16 in calibration.jsonl), and the events say where
PyTorch unmapped what the simulation kept.

usage: TRACE=<summary.json> EVENTS=<events.json> CAP_GIB=18 NANOGPT=... python3 run_train_expandable.py \\
           NAME VOCAB --compile=False ...     (the arguments of run_train.py)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_train  # noqa: E402  (clears the allocator settings at import)

os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'
EVENTS = os.environ['EVENTS']
_summarize = run_train.summarize


def summarize(snap, top=30):
    entries = snap['device_traces'][0]
    keep = [{'a': e['action'], 'addr': e.get('addr'), 'size': e.get('size'), 't': e.get('time_us')}
            for e in entries]
    with open(EVENTS, 'w') as f:
        json.dump({'allocator': 'expandable_segments', 'marks': run_train.mark_times_us, 'events': keep}, f)
    return _summarize(snap, top)


run_train.summarize = summarize

if __name__ == '__main__':
    run_train.main()
