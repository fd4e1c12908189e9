// The npm package's web build (target/npm/vramfit/web, from scripts/build-js.sh) imported by a
// blog post as an ES module in Chromium: its answers equal the CLI's for every program, bad
// input throws the CLI's message with its field, and it fetches nothing from elsewhere.

import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer } from '../lib/server.mjs';
import { cli } from '../lib/page.mjs';

const FIX_KEYS = [
  'fixes', 'largest_batch_size_that_fits', 'iter_seconds', 'largest_device_batch_size_that_fits',
  'largest_core_example_that_fits', 'largest_B_that_fits',
];

const CASES = [
  { config: { batch_size: 8, compile: false }, gpu: 'rtx3060', args: ['--batch_size=8', '--compile=False', '--gpu=rtx3060'] },
  {
    config: { program: 'nanochat', depth: 12, device_batch_size: 8 },
    gpu: { gpu: 'rtx4090', other_gib: 0.5 },
    args: ['--program=nanochat', '--depth=12', '--device-batch-size=8', '--gpu=rtx4090', '--other-gib=0.5'],
  },
  { config: { program: 'build-nanogpt', B: 16 }, gpu: 'a6000', args: ['--program=build-nanogpt', '--B=16', '--gpu=a6000'] },
];

export const tests = {
  async 'npm package: a blog post imports the web build; its answers equal the CLI'(ctx) {
    const server = await startServer(path.join(ctx.root, 'dist'), {
      extraRoots: {
        '/test-pages/': path.join(ctx.root, 'tests', 'e2e', 'pages'),
        '/npm/': path.join(ctx.root, 'target', 'npm', 'vramfit'),
      },
    });
    const context = await ctx.browser.newContext();
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const foreign = [];
    page.on('request', (r) => { if (!r.url().startsWith(server.url)) foreign.push(r.url()); });
    await page.goto(`${server.url}/test-pages/npm-blog.html`);
    await page.waitForFunction(() => window.vramfit !== undefined);
    const first = cli(ctx, CASES[0].args);
    assert.equal(await page.textContent('#need'), `${(first.peak_bytes.overall / 2 ** 30).toFixed(2)} GiB`);
    assert.equal(await page.textContent('#verdict'), first.verdict.risk);

    for (const { config, gpu, args } of CASES) {
      const answer = cli(ctx, args);
      const got = await page.evaluate(([c, g]) => ({
        analysis: window.vramfit.analyze(c, g),
        fixes: window.vramfit.rankFixes(c, g),
      }), [config, gpu]);
      const expected = Object.fromEntries(Object.entries(answer).filter(([k]) => !FIX_KEYS.includes(k)));
      assert.deepStrictEqual(got.analysis, expected, JSON.stringify(config));
      assert.deepStrictEqual(got.fixes, answer.fixes, JSON.stringify(config));
    }

    const thrown = await page.evaluate(() => {
      try {
        window.vramfit.analyze({ program: 'nanochat', depth: 0 });
        return null;
      } catch (e) {
        return { isError: e instanceof Error, message: e.message, field: e.field };
      }
    });
    assert.ok(thrown?.isError, 'throws an Error');
    assert.equal(thrown.field, 'depth');
    assert.match(thrown.message, /^depth=0/);
    assert.deepEqual(await page.evaluate(() => window.vramfit.gpus().map((g) => g.id).slice(0, 1)), ['rtx3060']);
    if (ctx.can('requests', 'the package fetches nothing outside the blog\'s host')) {
      assert.deepEqual(foreign, [], 'no requests outside the blog\'s own host');
    }
    assert.deepEqual(errors, []);
    await context.close();
    await server.close();
  },
};
