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
    const real = j.fixes.filter((f) => f.impact !== 'not_a_fix').map((f) => [f.kind, f.peak_bytes]);
    const notFixes = j.fixes.filter((f) => f.impact === 'not_a_fix').map((f) => [f.kind, f.peak_bytes]);
    assert.deepEqual(ids, [...real, ...notFixes]);
    const top = await page.getAttribute('[data-testid=top-fix]', 'data-fix');
    assert.equal(top, j.fixes[0].kind);
    const largest = await page.textContent('[data-testid=largest-batch]');
    assert.match(largest, new RegExp(`: ${j.largest_batch_size_that_fits};`));
    assert.match(largest, /gradient_accumulation_steps 32 unchanged that is \d+ sequences per iteration \(now 512\)/);
    // one sign for savings: the page shows what the CLI's text report shows
    const pageSavings = await page.$$eval('[data-testid=fix]', (els) =>
      els.map((e) => [...e.querySelectorAll('dt')].find((dt) => dt.textContent === 'saving').nextElementSibling.textContent));
    for (const [i, f] of j.fixes.entries()) {
      const gib = (Math.abs(f.saving_bytes) / 2 ** 30).toFixed(2);
      const expected = f.saving_bytes < 0 && gib !== '0.00' ? `costs ${gib} GiB` : `${gib} GiB`;
      assert.equal(pageSavings[i], expected, f.kind);
    }
    // every ranked fix that has something to paste has its own copy button
    const rows = await page.$$eval('[data-testid=fix]', (els) =>
      els.map((e) => [e.dataset.fix, !!e.querySelector('button[data-copy^=fix-code-]')]));
    for (const [id, copyable] of rows) {
      const f = j.fixes.find((x) => x.kind === id);
      if (f.impact !== 'not_a_fix' && f.kind !== 'free_the_card') assert.ok(copyable, `${id} has no copy button`);
    }
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
    assert.match(await off.textContent(), /costs \d+\.\d\d GiB/, 'memory grows');
    const firstIsOff = await page.$eval('[data-testid=fix]', (e) => e.dataset.fix === 'compile_off');
    assert.equal(firstIsOff, false);
    await close(page);
  },
};
