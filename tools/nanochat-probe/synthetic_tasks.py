"""The synthetic chat tasks' prompt lengths, shared by the probes (run_chat_eval.py, run_chat_rl.py) and by
categorical_batches.py, which needs them without torch.

A conversation's rendered prompt (tokenizer.render_for_completion) has `prompt_len(task, i)` tokens, drawn per task
and problem from PROMPT_LEN with a seed of its own, so every run sees the same lengths in the same order."""
import math, random

# chat-format prompt lengths in tokens (bos, user_start, question + rendered choices, user_end, assistant_start)
PROMPT_LEN = {
    'ARC-Easy': ('uniform', 60, 160), 'ARC-Challenge': ('uniform', 70, 200),
    'MMLU': ('lognormal', 110, 0.55, 45, 900),  # median 110, long tail (passages) clipped at 900
    'GSM8K': ('uniform', 70, 230), 'HumanEval': ('uniform', 90, 450),
}
SIZES = {'ARC-Easy': 2376, 'ARC-Challenge': 1172, 'MMLU': 14042, 'GSM8K': 1319, 'HumanEval': 164}


def prompt_len(task, i):
    r = random.Random(f'{task}:{i}')
    d = PROMPT_LEN[task]
    if d[0] == 'uniform':
        return r.randint(d[1], d[2])
    return int(min(d[4], max(d[3], round(math.exp(r.gauss(math.log(d[1]), d[2]))))))
