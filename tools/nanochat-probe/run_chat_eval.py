"""Measure one karpathy/nanochat `scripts/chat_eval.py -i sft` run on the GPU (nanochat 92d63d4), vramfit harness.

The real script, run as is (runpy), on a real SFT checkpoint (base_train.py then chat_sft.py, both real, made first
by run_sft.py: see stages_call.sh), with only the tokenizer and the task data stubbed (run_base_eval.StageTok;
tasks.arc/mmlu/gsm8k/humaneval replaced by synthetic tasks with the real eval types, letters and lengths below).
A conversation's rendered prompt (tokenizer.render_for_completion) has `prompt_len` tokens, drawn per task and
problem from synthetic_tasks.PROMPT_LEN (seeded; see README "Eval, SFT-eval and RL stages"). The synthetic model is random, so
generation runs to -m/--max-new-tokens (the KV cache is sized prompt + max_new_tokens whatever happens).
Phases: init, load, post_load (Engine), then one per task: categorical:<task> / generative:<task> (a task's phase
starts when its task object is built), cleanup. `forward_calls` / `generate_calls` as in run_base_eval.py:
categorical batches are `forward` calls (B = -b, T = longest prompt of the batch), generative ones a `prefill`
(1, prompt_len) and `decode` (num_samples, 1) calls per problem, kv_len = prompt_len + max_new_tokens.

usage: NANOCHAT=<dir> python3 run_chat_eval.py NAME -i sft -g TAG [-a 'ARC-Easy|MMLU'] [-b 8] [-n 1] [-m 512] [-x N]
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_base_eval as st
from argv import argval
import run_base as rb
from synthetic_tasks import PROMPT_LEN, SIZES, prompt_len


class SynthTask:
    task = None
    eval_type = None
    mark_phase = True
    letters = ('A', 'B', 'C', 'D')

    def __init__(self, subset=None, split=None, **kw):
        self.name = subset if self.task == 'ARC' else self.task
        if self.mark_phase:
            st.phase(f'{self.eval_type}:{self.name}')
        self.n = SIZES.get(self.name, 100)
        if self.name == 'GSM8K' and split == 'train':
            self.n = int(os.environ.get('RL_TRAIN_LEN', 7473))

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {'messages': [{'role': 'user', 'content': ''}, {'role': 'assistant', 'content': 'A'}],
                'prompt_len': prompt_len(self.name, i), 'seed': f'{self.name}:{i}', 'letters': self.letters}

    def evaluate(self, conversation, response):
        return int(response == 'A') if self.eval_type == 'categorical' else 0

    def reward(self, conversation, response):
        return float(len(response) % 2)  # arbitrary 0/1: non-zero advantages


def task_classes():
    mk = lambda t, e: type(t, (SynthTask,), {'task': t, 'eval_type': e})
    return {'ARC': mk('ARC', 'categorical'), 'MMLU': mk('MMLU', 'categorical'),
            'GSM8K': mk('GSM8K', 'generative'), 'HumanEval': mk('HumanEval', 'generative')}


def stub_tasks():
    c = task_classes()
    rb.stub('tasks', __path__=[])
    rb.stub('tasks.arc', ARC=c['ARC'])
    rb.stub('tasks.mmlu', MMLU=c['MMLU'])
    rb.stub('tasks.gsm8k', GSM8K=c['GSM8K'])
    rb.stub('tasks.humaneval', HumanEval=c['HumanEval'])
    return c


def main():
    name, argv = sys.argv[1], sys.argv[2:]
    st.private_base(name)
    st.install(st.StageTok())
    stub_tasks()
    tag = argval(argv, '-g', '--model-tag')
    rec = rb.run_script(name, argv, script='chat_eval.py', extra={'script': 'scripts/chat_eval.py'})

    def summary(pp, seq):
        cat = {k: max(v) for k, v in pp.items() if k.startswith('categorical:')}
        gen = {k: max(v) for k, v in pp.items() if k.startswith('generative:')}
        return {'peak_load': max(pp.get('load', [0])) or None,
                'peak_categorical': max(cat.values()) if cat else None,
                'peak_generative': max(gen.values()) if gen else None, 'peak_per_task': {**cat, **gen}}

    st.finalize(rec, 'sft', tag, summary)
    rec['prompt_len_dist'] = PROMPT_LEN
    print('RESULT ' + json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
