// The first bar (crates/first-bar): painted from its own small module before the page's module
// has arrived, for any URL state, in the page's language, with the CLI's numbers; replaced by the
// page when it mounts. The page's module is held back (request interception) so the first bar
// can be read before the page takes its place.

import assert from 'node:assert/strict';
import { cli, assertNoPanic } from '../lib/page.mjs';

const SEGMENTS = ['params', 'optimizer', 'gradients', 'activations', 'logits', 'other'];

/** Links as people share them, with the CLI's flags for the same state. */
const CASES = [
  { query: '', args: ['--gpu=rtx3060'], word: 'Fits' },
  {
    query: '?gpu=rtx3060&batch_size=16&compile=False&n_layer=24',
    args: ['--gpu=rtx3060', '--batch_size=16', '--compile=False', '--n_layer=24'],
    word: 'Out of memory',
  },
  {
    query: '?program=nanochat&depth=16&device_batch_size=8&gpu=rtx4090&lang=de',
    args: ['--program=nanochat', '--depth=16', '--device-batch-size=8', '--gpu=rtx4090'],
    word: 'Passt',
    decimalComma: true,
  },
  { query: '?program=build-nanogpt&B=32&gpu=rtx4090', args: ['--program=build-nanogpt', '--B=32', '--gpu=rtx4090'] },
  // a link with values the page refuses: the first bar shows what the page will (the defaults)
  { query: '?batch_size=abc&n_layer=-3&gpu=nope', args: ['--gpu=rtx3060'], word: 'Fits' },
];

/** A page whose own module is held until `release()`: only the first bar can paint. */
async function held(ctx, query, { viewport = { width: 390, height: 844 }, refuse, colorScheme = 'light' } = {}) {
  const context = await ctx.browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  let release;
  const gate = new Promise((r) => { release = r; });
  await page.route(/vramfit-web-[0-9a-f]+_bg\.wasm$/, async (route) => { await gate; await route.continue(); });
  if (refuse) await page.route(refuse, (route) => route.abort());
  await page.goto(`${ctx.base}/${query}`);
  return { page, context, errors, release };
}

/** What the first bar shows, as numbers and text. */
function readFirstBar(page) {
  return page.evaluate((segments) => {
    const bar = document.querySelector('[data-testid="first-bar"]');
    const seg = {};
    for (const c of segments) seg[c] = Number(bar.querySelector(`[data-component="${c}"]`).dataset.bytes);
    return {
      total: Number(bar.querySelector('[data-testid="first-bar-total"]').dataset.bytes),
      segments: seg,
      className: bar.className,
      text: bar.textContent,
      widths: [...bar.querySelectorAll('[data-component]')].map((s) => parseFloat(s.style.width)),
    };
  }, SEGMENTS);
}

export const tests = {
  async 'the first bar comes before the page, equals the CLI, and the page replaces it'(ctx) {
    for (const c of CASES) {
      const { page, context, errors, release } = await held(ctx, c.query);
      await page.waitForSelector('[data-testid="first-bar"]');
      assert.equal(await page.$('[data-testid="total"]'), null, `${c.query}: the page is not there yet`);
      const first = await readFirstBar(page);
      const j = cli(ctx, c.args);
      // the line leads with what the verdict weighs (the peak and the allocator's reserve)
      assert.equal(first.total, j.verdict.need_bytes, `${c.query}: the first bar's need is the CLI's`);
      assert.deepEqual(first.segments, j.components_bytes, `${c.query}: its six components are the CLI's`);
      assert.match(first.className, new RegExp(`verdict--${j.verdict.risk}`), `${c.query}: its verdict is the CLI's`);
      if (c.word) assert.ok(first.text.includes(c.word), `${c.query}: "${first.text}" says ${c.word}`);
      assert.match(first.text, c.decimalComma ? /\d,\d\d GiB/ : /\d\.\d\d GiB/, `${c.query}: the language's numbers`);
      assert.ok(first.widths.every((w) => w >= 0) && first.widths.reduce((a, b) => a + b) <= 100.001,
        `${c.query}: the segments fit the bar (${first.widths})`);

      release();
      await page.waitForSelector('[data-testid="total"]');
      const after = await page.evaluate(() => ({
        firstBars: document.querySelectorAll('#first-bar').length,
        total: Number(document.querySelector('[data-testid="sticky-total"]').dataset.bytes),
      }));
      assert.equal(after.firstBars, 0, `${c.query}: the page took the first bar's place`);
      assert.equal(after.total, first.total, `${c.query}: and its line shows the same number`);
      await assertNoPanic(page, c.query);
      assert.deepEqual(errors, [], `${c.query}: no console errors`);
      await context.close();
    }
  },

  async 'no first bar in an embed, nor in a language whose file cannot be had'(ctx) {
    for (const [query, refuse] of [['?embed=1', null], ['?lang=ja', /(i18n|first-bar)\/ja\.txt$/]]) {
      const { page, context, release } = await held(ctx, query, { refuse });
      // the first bar's module has run to its end
      await page.waitForFunction(() => performance.getEntriesByName('vramfit:first-bar-painted').length > 0);
      assert.equal(await page.$('[data-testid="first-bar"]'), null, `${query}: no first bar`);
      release();
      await page.waitForSelector('[data-testid="total"]');
      await assertNoPanic(page, query);
      await context.close();
    }
  },

  async 'the first bar opens in the theme the page will have'(ctx) {
    for (const [scheme, query, theme] of [['dark', '', 'dark'], ['light', '?theme=dark', 'dark'], ['dark', '?theme=light', 'light']]) {
      const { page, context, release } = await held(ctx, query, { colorScheme: scheme });
      await page.waitForSelector('[data-testid="first-bar"]');
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme, `${scheme} system, ${query}`);
      release();
      await page.waitForSelector('[data-testid="total"]');
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme, `${scheme} system, ${query}: the page agrees`);
      await context.close();
    }
  },
};

/** Holding back the page's module needs request interception (see lib/suite.mjs). */
export const needs = {
  'the first bar comes before the page, equals the CLI, and the page replaces it': ['route'],
  'no first bar in an embed, nor in a language whose file cannot be had': ['route'],
  'the first bar opens in the theme the page will have': ['route'],
};
