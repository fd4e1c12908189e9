// build-nanogpt's train_gpt2.py on the page: its numbers equal the CLI's, its constants drive the
// bar and the URL under their own names, a pasted constants block switches program, and its
// fixes come with the lines to edit.

import assert from 'node:assert/strict';
import path from 'node:path';
import { open, close, hooks, cli, waitForTotalChange, assertSameAsCli, shot } from '../lib/page.mjs';

const CASES = [
  { query: '?program=build-nanogpt', args: ['--program=build-nanogpt', '--gpu=rtx3060'] },
  {
    query: '?program=build-nanogpt&B=16&use_compile=True&gpu=rtx4090',
    args: ['--program=build-nanogpt', '--B=16', '--use_compile=True', '--gpu=rtx4090'],
  },
  {
    query: '?program=build-nanogpt&B=4&T=512&total_batch_size=16384&n_layer=24&n_head=16&n_embd=1024&gpu=a6000',
    args: ['--program=build-nanogpt', '--B=4', '--T=512', '--total_batch_size=16384', '--n_layer=24',
      '--n_head=16', '--n_embd=1024', '--gpu=a6000'],
  },
  // one GPU started by torchrun: the script is under DDP, the box under the GPU count ticked
  {
    query: '?program=build-nanogpt&B=16&torchrun=True&gpu=rtx4090',
    args: ['--program=build-nanogpt', '--B=16', '--torchrun=True', '--gpu=rtx4090'],
  },
];

export const tests = {
  async 'build-nanogpt page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES);
    const page = await open(ctx, '?program=build-nanogpt&torchrun=True');
    assert.equal(await page.isChecked('input[name=torchrun]'), true);
    await close(page);
  },

  async 'its constants drive the bar and the URL; a pasted constants block switches program'(ctx) {
    const page = await open(ctx, '?program=build-nanogpt&gpu=rtx4090');
    const before = await hooks(page);
    assert.equal((await page.locator('label[for="field-B"]').textContent()).trim(), 'B');
    const slider = page.locator('input[type=range][name=B]');
    await slider.focus();
    await page.keyboard.press('ArrowLeft');
    await waitForTotalChange(page, before.total);
    await page.waitForFunction(() => location.search.includes('B=32'));
    assert.equal((await hooks(page)).total,
      cli(ctx, ['--program=build-nanogpt', '--B=32', '--gpu=rtx4090']).peak_bytes.overall);
    // the script's assert, named next to the field
    await page.locator('input[type=text][name=B]').fill('48');
    await page.waitForSelector('#error-B:not(:empty)');
    assert.match(await page.innerText('#error-B'), /divisible by B \* T \* ddp_world_size/);
    await close(page);

    const pasted = await open(ctx, '?gpu=rtx3090');
    const nano = await hooks(pasted);
    await pasted.fill('textarea[name=paste]', 'total_batch_size = 524288 # 2**19\nB = 8 # micro batch size\nT = 1024\nuse_compile = True');
    await pasted.click('[data-testid="paste-read"]');
    await waitForTotalChange(pasted, nano.total);
    await pasted.waitForFunction(() => location.search.includes('program=build-nanogpt'));
    assert.equal((await hooks(pasted)).total,
      cli(ctx, ['--program=build-nanogpt', '--B=8', '--use_compile=True', '--gpu=rtx3090']).peak_bytes.overall);
    await close(pasted);
  },

  async 'the defaults on a 24 GB card: out of memory, B to edit'(ctx) {
    const page = await open(ctx, '?program=build-nanogpt&gpu=rtx4090');
    assert.equal((await hooks(page)).fits, false);
    await page.waitForSelector('[data-testid="top-fix"]');
    // textContent: a panel below the fold is not rendered (content-visibility), so it has no innerText in Firefox
    const lines = await page.textContent('[data-testid="top-fix"] [data-testid="snippet-config"]');
    const j = cli(ctx, ['--program=build-nanogpt', '--gpu=rtx4090']);
    assert.equal(lines.trim(), j.fixes[0].edits.join('\n'));
    await shot(ctx, page, 'build-nanogpt-oom.png');
    await close(page);
  },
};
