"""Opens memory snapshots with PyTorch's own viewer code (torch.cuda._memory_viz), as
pytorch.org/memory_viz would: the text summaries (segsum, trace) and the HTML plots (trace_plot,
segment_plot), for each file given. Used on the device for vramfit's exported snapshots
(`vramfit --export-snapshot`); prints one JSON line per file.

    python tools/snapshot-check/check_viz.py FILE.pickle ...
"""
import json
import pickle
import sys

import torch
from torch.cuda import _memory_viz as viz

for path in sys.argv[1:]:
    with open(path, "rb") as f:
        snap = pickle.load(f)
    row = {"file": path, "torch": torch.__version__}
    for name in ("segsum", "trace"):
        try:
            text = getattr(viz, name)(snap)
            row[name] = {"ok": True, "chars": len(text), "head": text.splitlines()[:3]}
        except Exception as e:  # noqa: BLE001 - what the viewer says is the result
            row[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    for name in ("trace_plot", "segment_plot"):
        try:
            html = getattr(viz, name)(snap)
            row[name] = {"ok": True, "chars": len(html)}
        except Exception as e:  # noqa: BLE001
            row[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    row["segments"] = len(snap["segments"])
    row["events"] = len(snap["device_traces"][0])
    print(json.dumps(row))
