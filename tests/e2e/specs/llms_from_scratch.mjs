// LLMs-from-scratch's ch05 gpt_train.py, its speed scripts, ch06 gpt_class_finetune.py and ch07 on
// the page: their numbers equal the CLI's on three configs each, their names drive the URL, pasted script text switches
// program, and their fixes come with the lines to edit.

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

const PS = 'llms-from-scratch-ch05-speed';
const CASES_SPEED = [
  { query: `?program=${PS}&gpu=rtx4090`, args: [`--program=${PS}`, '--gpu=rtx4090'] },
  {
    query: `?program=${PS}&batch_size=8&drop_rate=0.0&gpu=rtx3060`,
    args: [`--program=${PS}`, '--batch_size=8', '--drop_rate=0.0', '--gpu=rtx3060'],
  },
  {
    query: `?program=${PS}&emb_dim=1024&n_heads=16&n_layers=24&batch_size=16&nproc_per_node=4&gpu=a100_40`,
    args: [`--program=${PS}`, '--emb_dim=1024', '--n_heads=16', '--n_layers=24', '--batch_size=16',
      '--nproc_per_node=4', '--gpu=a100_40'],
  },
];

const P6 = 'llms-from-scratch-ch06';
const CASES6 = [
  { query: `?program=${P6}`, args: [`--program=${P6}`, '--gpu=rtx3060'] },
  {
    query: `?program=${P6}&CHOOSE_MODEL=gpt2-medium%20(355M)&max_length=512&batch_size=16&gpu=rtx4090`,
    args: [`--program=${P6}`, '--CHOOSE_MODEL=gpt2-medium (355M)', '--max_length=512', '--batch_size=16', '--gpu=rtx4090'],
  },
  {
    query: `?program=${P6}&CHOOSE_MODEL=gpt2-large%20(774M)&drop_rate=0.1&max_length=256&train_rows=5000&gpu=t4`,
    args: [`--program=${P6}`, '--CHOOSE_MODEL=gpt2-large (774M)', '--drop_rate=0.1', '--max_length=256',
      '--train_rows=5000', '--gpu=t4'],
  },
];

/** Pastes `text` on a page at `query`, waits for `program` to take it, and checks the page's peak,
 *  verdict (out of memory) and top fix's lines against the CLI's answer for `args`. */
async function pasteSwitches(ctx, { query, text, program, args, shot: name }) {
  const page = await open(ctx, query);
  const before = await hooks(page);
  await page.fill('textarea[name=paste]', text);
  await page.click('[data-testid="paste-read"]');
  await waitForTotalChange(page, before.total);
  await page.waitForFunction((p) => location.search.includes(`program=${p}`), program);
  const j = cli(ctx, args);
  const h = await hooks(page);
  assert.equal(h.total, j.peak_bytes.overall);
  assert.equal(j.verdict.fits, false);
  assert.equal(h.fits, false);
  await page.waitForSelector('[data-testid="top-fix"]');
  const lines = await page.textContent('[data-testid="top-fix"] [data-testid="snippet-config"]');
  assert.equal(lines.trim(), j.fixes[0].edits.join('\n'));
  await shot(ctx, page, name);
  await close(page);
}

const P7 = 'llms-from-scratch-ch07';
const CASES7 = [
  { query: `?program=${P7}`, args: [`--program=${P7}`, '--gpu=rtx3060'] },
  {
    query: `?program=${P7}&CHOOSE_MODEL=gpt2-large%20(774M)&max_length=512&batch_size=2&gpu=rtx4090`,
    args: [`--program=${P7}`, '--CHOOSE_MODEL=gpt2-large (774M)', '--max_length=512', '--batch_size=2', '--gpu=rtx4090'],
  },
  {
    query: `?program=${P7}&CHOOSE_MODEL=gpt2-small%20(124M)&drop_rate=0.1&max_length=300&allowed_max_length=256&gpu=t4`,
    args: [`--program=${P7}`, '--CHOOSE_MODEL=gpt2-small (124M)', '--drop_rate=0.1', '--max_length=300',
      '--allowed_max_length=256', '--gpu=t4'],
  },
];

export const tests = {
  async 'LLMs-from-scratch page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES);
  },

  async 'a pasted dict switches program; out of memory names the dict entry to edit'(ctx) {
    const text = 'GPT_CONFIG_124M = {\n    "vocab_size": 50257,\n    "context_length": 1024,  # Shortened context length (orig: 1024)\n' +
      '    "emb_dim": 768,\n    "n_heads": 12,\n    "n_layers": 12,\n    "drop_rate": 0.1,\n    "qkv_bias": False\n}\n' +
      'OTHER_SETTINGS = {"learning_rate": 5e-4, "num_epochs": 10, "batch_size": 4, "weight_decay": 0.1}';
    // the book's context at batch 4 (one 4-sequence step of the-verdict.txt) needs ~15 GB
    await pasteSwitches(ctx, {
      query: '?gpu=rtx4070', text, program: P,
      args: [`--program=${P}`, '--context_length=1024', '--batch_size=4', '--gpu=rtx4070'],
      shot: 'llms-from-scratch-ch05.png',
    });
  },

  async '01_opt_single_gpu.py and 02_opt_multi_gpu_ddp.py page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES_SPEED);
  },

  async '02_opt_multi_gpu_ddp.py pasted for one GPU is DDP: the ddp box ticked, the CLI\'s peak; unticked, 01\'s'(ctx) {
    const page = await open(ctx, `?program=${PS}&batch_size=8&gpu=rtx4090`);
    const single = await hooks(page);
    await page.fill('textarea[name=paste]', 'torchrun --standalone --nproc_per_node=1 02_opt_multi_gpu_ddp.py');
    await page.click('[data-testid="paste-read"]');
    await page.waitForSelector('input[name=ddp]:checked');
    await waitForTotalChange(page, single.total);
    const ddp = await hooks(page);
    assert.equal(ddp.total, cli(ctx, [`--program=${PS}`, '--batch_size=8', '--ddp=True', '--gpu=rtx4090']).peak_bytes.overall);
    assert.ok(ddp.total > single.total, `${ddp.total} vs ${single.total}`);
    await page.uncheck('input[name=ddp]');
    await waitForTotalChange(page, ddp.total);
    assert.equal((await hooks(page)).total, single.total);
    await close(page);
  },

  async 'gpt_class_finetune.py page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES6);
  },

  async 'pasted ch06 script lines switch program from nanoGPT; out of memory names the line to edit'(ctx) {
    // `batch_size = 16` is a nanoGPT config line too: CHOOSE_MODEL and the dataset line make it the script's
    const text = '        CHOOSE_MODEL = "gpt2-xl (1558M)"\n' +
      '    train_dataset = SpamDataset(\n        csv_file="train.csv",\n        max_length=1024,\n        tokenizer=tokenizer\n    )\n' +
      '    num_workers = 0\n    batch_size = 16\n';
    await pasteSwitches(ctx, {
      query: '?gpu=rtx3060', text, program: P6,
      args: [`--program=${P6}`, '--CHOOSE_MODEL=gpt2-xl (1558M)', '--max_length=1024', '--batch_size=16', '--gpu=rtx3060'],
      shot: 'llms-from-scratch-ch06.png',
    });
  },

  async 'gpt_instruction_finetuning.py page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES7);
  },

  async 'pasted ch07 script lines switch program; out of memory names the line to edit'(ctx) {
    // the book's GPT-2 large at the collate's full 1024 tokens, batch 8: far past a 24 GB card
    const text = '    customized_collate_fn = partial(custom_collate_fn, device=device, allowed_max_length=1024)\n' +
      '    num_workers = 0\n    batch_size = 8\n        CHOOSE_MODEL = "gpt2-large (774M)"\n';
    await pasteSwitches(ctx, {
      query: `?program=${P7}&max_length=1024&gpu=rtx4090`, text, program: P7,
      args: [`--program=${P7}`, '--CHOOSE_MODEL=gpt2-large (774M)', '--max_length=1024', '--gpu=rtx4090'],
      shot: 'llms-from-scratch-ch07.png',
    });
  },
};
