// Helpers shared by the specs: open the calculator, read its test hooks, call the CLI.

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import assert from 'node:assert/strict';

/** Opens the page with a query; fails on any console error or uncaught exception (a wasm panic). */
export async function open(ctx, query = '', { viewport = { width: 1280, height: 900 }, context } = {}) {
  const c = context ?? (await ctx.browser.newContext({ viewport }));
  const page = await c.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${ctx.base}/${query}`);
  await page.waitForSelector('[data-testid="total"]');
  // the inputs and the panels below the answer are built a task after the first frame
  // (src/components/app.rs)
  await page.waitForSelector('[data-testid="details"]', { state: 'attached' });
  page.errors = errors;
  page.ctxToClose = context ? null : c;
  return page;
}

export async function close(page) {
  assert.deepEqual(page.errors, [], 'no console errors');
  await assertNoPanic(page);
  if (page.ctxToClose) await page.ctxToClose.close();
  else await page.close();
}

/**
 * A full-page screenshot into the engine's screenshot folder, with every panel laid out: panels
 * below the fold skip rendering (`content-visibility: auto`) until scrolled to, and a full-page
 * shot would show their empty placeholders (set through the CSSOM: the CSP allows no inline
 * style sheets).
 */
export async function shot(ctx, page, file) {
  await page.evaluate(() => new Promise((ok) => {
    for (const el of document.querySelectorAll('*')) {
      if (getComputedStyle(el).contentVisibility === 'auto') el.style.contentVisibility = 'visible';
    }
    requestAnimationFrame(() => requestAnimationFrame(() => ok()));
  }));
  await page.screenshot({ path: path.join(ctx.shots, file), fullPage: true });
}

/** The wasm module has not panicked (src/main.rs marks <html>): readable in every engine. */
export async function assertNoPanic(page, what = '') {
  // between two documents (a navigation in flight) there is no root element, and no record to read
  const panicked = await page.evaluate(() => document.documentElement?.dataset.panicked ?? null);
  assert.equal(panicked, null, `the wasm module panicked ${what}`);
}

/** Every test hook of the page, as numbers. */
export async function hooks(page) {
  // (a language switch builds the page anew, its lower panels a task after the rest)
  await page.waitForSelector('[data-testid="details"]', { state: 'attached' });
  return page.evaluate(() => {
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    const seg = {};
    for (const c of ['params', 'optimizer', 'gradients', 'activations', 'logits', 'other']) {
      seg[c] = Number(q(`segment-${c}`).dataset.bytes);
    }
    const v = q('verdict');
    return {
      total: Number(q('total').dataset.bytes),
      segments: seg,
      fits: v ? v.dataset.fits === 'true' : null,
      risk: v ? v.dataset.risk : null,
      params: Number(q('param-count').dataset.params),
      effectiveBatch: Number(q('effective-batch').dataset.value),
    };
  });
}

/** The CLI's answer for the same settings (`--key=value` list and a GPU id). */
export function cli(ctx, args) {
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(ctx.root, process.env.CARGO_TARGET_DIR) : path.join(ctx.root, 'target');
  const bin = path.join(target, 'release', 'vramfit');
  return JSON.parse(execFileSync(bin, ['--json', ...args], { encoding: 'utf8' }));
}

/** Waits until the page's total peak differs from `before`. */
export async function waitForTotalChange(page, before) {
  await page.waitForFunction(
    (b) => document.querySelector('[data-testid="total"]').dataset.bytes !== String(b),
    before,
  );
}

/** For each `{query, args}`: the page's bar, parameters, batch and verdict equal the CLI's, byte for byte. */
export async function assertSameAsCli(ctx, cases) {
  for (const c of cases) {
    const page = await open(ctx, c.query);
    const h = await hooks(page);
    const j = cli(ctx, c.args);
    assert.equal(h.total, j.peak_bytes.overall, `total ${c.query}`);
    for (const [k, v] of Object.entries(j.components_bytes)) assert.equal(h.segments[k], v, `${k} ${c.query}`);
    assert.equal(h.params, j.params.reported, `params ${c.query}`);
    assert.equal(h.effectiveBatch, j.effective_batch, `batch ${c.query}`);
    assert.equal(h.fits, j.verdict.fits, `fits ${c.query}`);
    assert.equal(h.risk, j.verdict.risk, `risk ${c.query}`);
    await close(page);
  }
}

/**
 * An init script (`page.addInitScript(recordLongTasks)`): every long task's duration (the Long
 * Tasks API, Chromium's) into `window.__tasks`, those before the script ran included.
 */
export function recordLongTasks() {
  window.__tasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__tasks.push(Math.round(e.duration));
  }).observe({ type: 'longtask', buffered: true });
}
