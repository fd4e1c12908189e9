"""Runs a training script with Inductor's buffer-reuse planning logged (issue 27, stop 62).

    REUSE_LOG=out.jsonl python3 log_reuse_decisions.py SCRIPT [its arguments]

PyTorch 2.11's wrapper codegen hands a dead buffer's storage to a later buffer of the same size only where
`AllocateLine.should_reuse_buffer` allows it, which asks `EfficientPeakEstimate` (memory.py's
`estimate_peak_memory` over the scheduler's nodes) for the graph's overall peak and the peak between the free and
the allocation. This wraps both, without changing what they return, and writes one JSON line per graph (its
scheduler nodes, each output buffer's planned sizes and last reader, the estimate at every node, the overall
peak) and one per decision (the allocation, the buffer it would take, both node indices, the size, the range's
peak, the answer). The script then runs as `python3 SCRIPT ...` would.
"""
import json
import os
import runpy
import sys

from torch._inductor.codegen import wrapper as W

LOG = open(os.environ['REUSE_LOG'], 'a')
_init = W.EfficientPeakEstimate.__init__
_should = W.AllocateLine.should_reuse_buffer


def init(self):
    _init(self)
    from torch._inductor.virtualized import V
    from torch._inductor.memory import estimate_peak_memory, get_freeable_input_buf
    from torch.utils._ordered_set import OrderedSet
    nodes = V.graph.scheduler.nodes
    inputs = OrderedSet(V.graph.graph_inputs.keys())
    outputs = OrderedSet(V.graph.get_output_names())
    freeable = get_freeable_input_buf(nodes, inputs)
    peak, mems = estimate_peak_memory(nodes, freeable, outputs)
    index = {n: i for i, n in enumerate(nodes)}
    rec = {'graph': True, 'peak': peak, 'mems': mems, 'outputs': list(outputs),
           'freeable_inputs': {k: [b.mpi_buffer.size_free, max((index[s] for s in b.mpi_buffer.succ_nodes), default=-1)]
                               for k, b in freeable.items()},
           'nodes': [{'name': n.get_name(),
                      'bufs': [[b.get_name(), b.mpi_buffer.size_alloc, b.mpi_buffer.size_free,
                                max((index[s] for s in b.mpi_buffer.succ_nodes if s in index), default=-1),
                                b.get_name() in V.graph.removed_buffers]
                               for b in n.get_outputs()]} for n in nodes]}
    LOG.write(json.dumps(rec) + '\n')
    LOG.flush()


def should(self, free_line, size):
    ok = _should(self, free_line, size)
    est = self.wrapper.estimate_peak
    LOG.write(json.dumps({'alloc': self.node.get_name(), 'free': free_line.node.get_name(), 'size': size,
                          'free_idx': free_line.scheduler_node_index, 'alloc_idx': self.scheduler_node_index,
                          'range_peak': est.peak_between(free_line, self) if free_line.scheduler_node_index + 1
                          < self.scheduler_node_index else None,
                          'overall': est.overall_peak_memory, 'ok': ok}) + '\n')
    LOG.flush()
    return ok


W.EfficientPeakEstimate.__init__ = init
W.AllocateLine.should_reuse_buffer = should
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name='__main__')
