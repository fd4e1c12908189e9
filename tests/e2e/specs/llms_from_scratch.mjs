// LLMs-from-scratch's ch05 gpt_train.py on the page: its numbers equal the CLI's on three
// configs, its dict keys drive the URL, a pasted dict switches program, and its fixes come
// with the dict entries to edit.

import assert from 'node:assert/strict';
import { open, close, hooks, cli, waitForTotalChange, assertSameAsCli, shot } from '../lib/page.mjs';

const P = 'llms-from-scratch-ch05';
const CASES = [
  { query: `?program=${P}`, args: [`--program=${P}`, '--gpu=rtx3060'] },
  {
    query: `?program=${P}&context_length=1024&batch_size=4&train_tokens=20000&gpu=rtx4090`,
    args: [`--program=${P}`, '--context_length=1024', '--batch_size=4', '--train_tokens=20000', '--gpu=rtx4090'],
  },
  {
    query: `?program=${P}&emb_dim=1024&n_heads=16&n_layers=24&drop_rate=0.0&batch_size=8&gpu=t4`,
    args: [`--program=${P}`, '--emb_dim=1024', '--n_heads=16', '--n_layers=24', '--drop_rate=0.0', '--batch_size=8',
      '--gpu=t4'],
  },
];

export const tests = {
  async 'LLMs-from-scratch page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES);
  },

  async 'a pasted dict switches program; out of memory names the dict entry to edit'(ctx) {
    const page = await open(ctx, '?gpu=rtx4070');
    const nano = await hooks(page);
    const dict = 'GPT_CONFIG_124M = {\n    "vocab_size": 50257,\n    "context_length": 1024,  # Shortened context length (orig: 1024)\n' +
      '    "emb_dim": 768,\n    "n_heads": 12,\n    "n_layers": 12,\n    "drop_rate": 0.1,\n    "qkv_bias": False\n}\n' +
      'OTHER_SETTINGS = {"learning_rate": 5e-4, "num_epochs": 10, "batch_size": 4, "weight_decay": 0.1}';
    await page.fill('textarea[name=paste]', dict);
    await page.click('[data-testid="paste-read"]');
    await waitForTotalChange(page, nano.total);
    await page.waitForFunction((p) => location.search.includes(`program=${p}`), P);
    const args = [`--program=${P}`, '--context_length=1024', '--batch_size=4', '--gpu=rtx4070'];
    const j = cli(ctx, args);
    const h = await hooks(page);
    assert.equal(h.total, j.peak_bytes.overall);
    // the book's context at batch 4 (one 4-sequence step of the-verdict.txt) needs ~15 GB
    assert.equal(j.verdict.fits, false);
    assert.equal(h.fits, false);
    await page.waitForSelector('[data-testid="top-fix"]');
    const lines = await page.textContent('[data-testid="top-fix"] [data-testid="snippet-config"]');
    assert.equal(lines.trim(), j.fixes[0].edits.join('\n'));
    await shot(ctx, page, 'llms-from-scratch-ch05.png');
    await close(page);
  },
};
