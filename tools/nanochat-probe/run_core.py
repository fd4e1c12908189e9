"""Measure the GPU memory of nanochat's CORE evaluation (scripts/base_eval.py evaluate_core -> nanochat/core_eval.py)
inside a real scripts/base_train.py run (nanochat 92d63d4), vramfit measurement harness.

base_train.py calls evaluate_core(orig_model, ...) at `--core-metric-every` steps and at the last step: on the
UNCOMPILED model, after model.eval(), with the optimizer state alive and grads None (zero_grad(set_to_none)).
The eval bundle cannot be downloaded on the device, so evaluate_core is replaced by a stub that does what
core_eval.evaluate_example does memory-wise for synthetic task batches: build the (n_choices, seq_len) int64 batch on
the CPU (stack_sequences), .to(device), and call the REAL nanochat.core_eval.forward_model(model, input_ids)
(@no_grad: model(input_ids) -> fp32 softcapped logits (n, s, V); cross_entropy(reduction='none') over all positions;
argmax), then the per-choice loss means (.item()). GPT has no `max_seq_len` attribute, so core_eval never truncates:
sequences longer than the training T run as they are (rotary cache is 10*T; every layer then needs an explicit mask).
For each shape it records memory_allocated before, max_memory_allocated during (peak reset before), and
memory_allocated after, for (a) the bare forward `model(input_ids)` and (b) forward_model.

usage:
  NANOCHAT=<dir> python3 run_core.py NAME <base_train flags incl. --core-metric-every=2 --num-iterations=3>
  CORE_SHAPES="1x256,4x256,..." overrides the default shapes (n x s), default from T:
  1xT, 2xT, 4xT, 4x(T/2), 1x2T, 2x2T, 4x2T, 5x(T/4)
Output: one `RESULT {json}` line: the run_base.py record plus `core_calls`: list (one per evaluate_core call) of
lists of {n, s, kind, alloc_before, peak, alloc_after, extra_peak=peak-alloc_before}.
Data in data/measured/nanochat-core.jsonl: PyTorch 2.11.0+cu130, NVIDIA H100 80GB HBM3, ALLOC=expandable,
nanochat 92d63d4; via `bash tools/nanochat-probe/device_call.sh core|core2|core3 ...` (make_jobs.py lists the configs).
Result (all 332 entries within 1 KiB), N = n*s, C = model_dim, V = 32768:
  extra_peak = max(2*V*C + 2*N*V, 12*N*V) + 8*N*C + 10*N
(lm_head moment: bf16 weight copy + bf16 logits; softcap moment: three fp32 (N,V) tensors; cross_entropy lower).
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_base as rb
import torch

core_calls = []


def shapes_for(T):
    env = os.environ.get('CORE_SHAPES')
    if env:
        return [tuple(int(v) for v in s.split('x')) for s in env.split(',')]
    return [(1, T), (2, T), (4, T), (4, T // 2), (1, 2 * T), (2, 2 * T), (4, 2 * T), (5, T // 4)]


def evaluate_core(model, tokenizer, device, max_per_task=-1):
    from nanochat.core_eval import forward_model, stack_sequences
    T = model.config.sequence_len
    out = []
    g = torch.Generator().manual_seed(0)
    for n, s in shapes_for(T):
        for kind in ('bare_forward', 'forward_model'):
            tokens = [torch.randint(0, rb.V, (s,), generator=g).tolist() for _ in range(n)]
            input_ids = stack_sequences(tokens, tokenizer.get_bos_token_id())
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            input_ids = input_ids.to(device)
            if kind == 'bare_forward':
                with torch.no_grad():
                    logits = model(input_ids)
                res = (logits,)
            else:
                losses, predictions = forward_model(model, input_ids)
                m = [losses[i, 1:s - 1].mean().item() for i in range(n)]
                res = (losses, predictions)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            after = torch.cuda.memory_allocated()
            del res, input_ids
            if kind == 'bare_forward':
                del logits
            else:
                del losses, predictions
            out.append({'n': n, 's': s, 'kind': kind, 'alloc_before': before, 'peak': peak, 'alloc_after': after,
                        'extra_peak': peak - before})
    core_calls.append(out)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return {'core_metric': 0.0, 'centered_results': {}, 'results': {},
            'has_max_seq_len': hasattr(model, 'max_seq_len'), 'training': model.training}


def main():
    name, argv = sys.argv[1], sys.argv[2:]
    rb.setup(evaluate_core=evaluate_core)
    rec = rb.run_script(name, argv, extra={'core_calls': core_calls})
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
