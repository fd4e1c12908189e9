"""Measure one karpathy/nanochat scripts/chat_rl.py run on the GPU (nanochat 92d63d4), vramfit measurement harness.

The real script, run as is (runpy), on a real SFT checkpoint (base_train.py then chat_sft.py, both real, made first
by run_sft.py: see stages_call.sh), with only the tokenizer and GSM8K stubbed (run_base_eval.StageTok; the synthetic
GSM8K of run_chat_eval.py: prompts of 70-230 tokens, reward 0/1 from the completion's length so advantages are
non-zero). The training split has RL_TRAIN_LEN problems (make_jobs.py: 3 with --examples-per-step=1, so 3 steps); with
--eval-every=60 the pass@k evaluation runs at step 0 only (--eval-examples problems, num_samples = device batch
size, 256 new tokens: run_gsm8k_eval's default), and the last step saves a checkpoint (model.state_dict(), as the
script does). The random model runs every rollout to --max-new-tokens, so every training sequence is
prompt + max_new_tokens - 1 long (the longest the script makes).
Phases (marks name the phase that ended): init, load, post_load (Engine, tasks, setup_optimizer), eval_generate
(step 0's pass@k rollouts), rollout_generate (each engine.generate_batch of get_batch, seeded), fwd (the training
forward of one pass: model(inputs, targets, loss_reduction='none'), which also holds the rollout tensors built after
the last rollout), bwd (loss.backward()), post_bwd, optimizer_step (MuonAdamW.step), post_step (zero_grad, logging,
the final save), cleanup. `forward_calls` / `generate_calls` as in run_base_eval.py (`train` = a training forward).

usage: NANOCHAT=<dir> RL_TRAIN_LEN=3 python3 run_chat_rl.py NAME --model-tag=TAG --device-batch-size=8 \
           --num-samples=16 --max-new-tokens=256 --examples-per-step=1 --eval-every=60 --eval-examples=1
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_base_eval as st
from argv import argval
import run_chat_eval as ceh
import run_base as rb


def main():
    name, argv = sys.argv[1], sys.argv[2:]
    st.private_base(name)
    st.install(st.StageTok(), train_phases=True,
               gen_label=lambda n, kw: 'rollout_generate' if 'seed' in kw else 'eval_generate')
    ceh.SynthTask.mark_phase = False
    ceh.stub_tasks()
    tag = argval(argv, '--model-tag')
    rec = rb.run_script(name, argv, script='chat_rl.py', extra={'script': 'scripts/chat_rl.py'})

    def summary(pp, seq):
        # per optimizer step: the phases since the previous step's optimizer_step (step 0 includes the pass@k eval)
        steps, cur = [], {}
        for ph, peak, _ in seq:
            if ph in ('eval_generate', 'rollout_generate', 'fwd', 'bwd', 'optimizer_step'):
                cur[ph] = max(cur.get(ph, 0), peak)
            if ph == 'optimizer_step':
                steps.append(cur)
                cur = {}
        st_ = pp.get('optimizer_step', [])
        return {'peak_load': max(pp.get('load', [0])) or None,
                'peak_eval_generate': max(pp.get('eval_generate', [0])) or None,
                'peak_rollout_generate': max(pp.get('rollout_generate', [0])) or None,
                'peak_fwd': max(pp.get('fwd', [0])) or None, 'peak_bwd': max(pp.get('bwd', [0])) or None,
                'peak_optimizer_step': st_, 'per_step': steps,
                'peak_train_first_step': max(steps[0].get(k, 0) for k in ('fwd', 'bwd', 'optimizer_step')) if steps else None,
                'peak_train_steady': max(s.get(k, 0) for s in steps[1:] for k in ('fwd', 'bwd', 'optimizer_step'))
                if len(steps) > 1 else None}

    st.finalize(rec, 'sft', tag, summary)
    rec['rl_train_len'] = int(os.environ.get('RL_TRAIN_LEN', 7473))
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
