// The fix ranker in the page: the same ranking as the CLI, the best fix with snippets to copy,
// compile=False shown with its true sign, and the largest batch that fits.

import assert from 'node:assert/strict';
import { open, close, cli } from '../lib/page.mjs';

export const tests = {
  async 'the page ranks the same fixes as the CLI'(ctx) {
    const query = '?batch_size=16&gradient_accumulation_steps=32&compile=False&gpu=rtx3060';
    const page = await open(ctx, query);
    // the fixes are ranked once the first bar is painted: wait for them
    await page.waitForSelector('[data-testid=fix]');
    const ids = await page.$$eval('[data-testid=fix]', (els) => els.map((e) => [e.dataset.fix, Number(e.dataset.peak)]));
    const j = cli(ctx, ['--batch_size=16', '--gradient_accumulation_steps=32', '--compile=False', '--gpu=rtx3060']);
    const real = j.fixes.filter((f) => f.impact !== 'not_a_fix').map((f) => [f.id, f.peak_bytes]);
    const notFixes = j.fixes.filter((f) => f.impact === 'not_a_fix').map((f) => [f.id, f.peak_bytes]);
    assert.deepEqual(ids, [...real, ...notFixes]);
    const top = await page.getAttribute('[data-testid=top-fix]', 'data-fix');
    assert.equal(top, j.fixes[0].id);
    assert.match(await page.textContent('[data-testid=largest-batch]'), new RegExp(`: ${j.largest_batch_size_that_fits}$`));
    await close(page);
  },

  async 'the best fix comes with a config snippet and a command line to copy'(ctx) {
    const page = await open(ctx, '?batch_size=16&gradient_accumulation_steps=32&gpu=rtx3060');
    const config = await page.textContent('[data-testid=snippet-config]');
    assert.match(config, /batch_size = 8 {2}# was 16/);
    assert.match(config, /gradient_accumulation_steps = 64 {2}# was 32/);
    const line = await page.textContent('[data-testid=snippet-cli]');
    assert.equal(line, 'python train.py --batch_size=8 --gradient_accumulation_steps=64');
    if (ctx.can('clipboard', 'the copy button fills the clipboard')) {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.click('button[data-copy=snippet-cli]');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), line);
    }
    await close(page);
  },

  async 'compile=False is listed with its true sign, never as a fix'(ctx) {
    const page = await open(ctx, '?batch_size=16&gpu=rtx3060');
    await page.waitForSelector('[data-testid=fix]');
    const off = page.locator('[data-fix=compile_off]');
    assert.equal(await off.count(), 1);
    assert.match(await off.textContent(), /\+\d+\.\d\d GiB/, 'memory grows');
    const firstIsOff = await page.$eval('[data-testid=fix]', (e) => e.dataset.fix === 'compile_off');
    assert.equal(firstIsOff, false);
    await close(page);
  },
};
