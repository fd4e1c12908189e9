// Nothing a user types may break the page: random valid and invalid query strings must render
// the calculator with no panic and no error in the console (1,000 in Chromium; 300 in Firefox and
// WebKit, the first 300 of the same seeded list: the decoder and the answers are the same wasm in
// all three, fuzzed natively besides, and each thousand cost ~7 minutes of CI's 2 cores there).
// Every tenth is a fresh page load (language, embed and theme keys are read only then); the others
// arrive as history navigations, which re-read the URL through the same decoder.

import assert from 'node:assert/strict';
import { assertNoPanic } from '../lib/page.mjs';
import { describeTasks, mainThreadTasks, quietMachine } from '../lib/trace.mjs';

const KEYS = [
  'n_layer', 'n_head', 'n_embd', 'block_size', 'batch_size', 'gradient_accumulation_steps', 'dropout',
  'bias', 'dtype', 'compile', 'eval_iters', 'eval_interval', 'max_iters', 'vocab_size', 'attention',
  'allocator', 'world_size', 'gpu', 'vram_gib', 'context_gib', 'other_gib', 'cap_gib', 'link_gbps',
  'lang', 'embed', 'theme', 'bg', 'nonsense', '', '%',
  // the other programs' own names
  'program', 'program', 'depth', 'device_batch_size', 'max_seq_len', 'total_batch_size', 'window_pattern',
  'core_max_tokens', 'nproc_per_node', 'load_optimizer', 'B', 'T', 'use_compile',
];
const VALID = {
  n_layer: ['1', '6', '12', '24', '48'], n_head: ['1', '4', '12', '16'], n_embd: ['64', '384', '768', '1024'],
  block_size: ['64', '256', '1024', '2048'], batch_size: ['1', '4', '8', '12', '32'],
  gradient_accumulation_steps: ['1', '2', '8', '40'], dropout: ['0', '0.1', '0.2'], bias: ['True', 'false'],
  dtype: ['float32', 'bfloat16', 'float16'], compile: ['True', 'False'], eval_iters: ['1', '200'],
  vocab_size: ['65', '50304'], attention: ['flash', 'manual'], allocator: ['default', 'expandable_segments'],
  world_size: ['1', '2', '4', '8'], gpu: ['rtx3060', 'rtx4090', 'a6000', 'custom', 'h100'],
  vram_gib: ['8', '24.5'], context_gib: ['0', '0.5'], other_gib: ['0', '1.2'], link_gbps: ['16', '300'],
  lang: ['en', 'de', 'ja', 'zh-Hans', 'zh-Hant'], theme: ['dark', 'light'], embed: ['1', '0'],
  program: ['nanogpt', 'nanochat', 'nanochat-sft', 'build-nanogpt'], depth: ['2', '8', '12', '20'],
  device_batch_size: ['1', '4', '8', '32'], max_seq_len: ['256', '1024', '2048'],
  total_batch_size: ['-1', '16384', '524288'], window_pattern: ['L', 'SSSL', 'SXL'],
  core_max_tokens: ['0', '4096'], nproc_per_node: ['1', '2', '8'], load_optimizer: ['0', '1'],
  B: ['1', '8', '16', '64'], T: ['256', '1024'], use_compile: ['True', 'False'],
};
const HOSTILE = [
  '', 'NaN', 'inf', '-1', '0', '1e308', '-1e308', '1000000', '99999999999999999999', '0x10', '１２', '💥',
  'None', "'x'", '((((((((((', '1/0', '2**99999', '%00', '%ZZ', '%E2%82', '<script>alert(1)</script>',
  'a'.repeat(3000), '8&', '=', 'True=False',
];

/** A small seeded generator, so a failure names a query that fails again. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomQuery(r) {
  const pick = (a) => a[Math.floor(r() * a.length)];
  const n = Math.floor(r() * 8);
  const parts = [];
  for (let i = 0; i < n; i++) {
    const key = pick(KEYS);
    const value = r() < 0.55 && VALID[key] ? pick(VALID[key]) : pick(HOSTILE);
    // half encoded as a browser would, half raw as people paste them
    parts.push(r() < 0.5 ? `${encodeURIComponent(key)}=${encodeURIComponent(value)}` : `${key}=${value}`);
  }
  if (r() < 0.1) parts.push(pick(HOSTILE));
  return parts.join('&');
}

/**
 * One query: into the URL (a fresh load for every tenth, else a history entry the page follows
 * as Back would), then its answer, no console error and no panic.
 */
async function oneQuery(page, errors, base, i, q, lanes) {
  if (i % 10 < lanes) {
    await page.goto(`${base}/?${q}`);
  } else {
    const pushed = await page.evaluate((query) => {
      try {
        history.pushState(null, '', `?${query}`);
      } catch (e) {
        // Firefox refuses History calls past its rate limit (200 in 10 s, its
        // dom.navigation.locationChangeRateLimit) with a SecurityError: seen once in CI
        if (e.name === 'SecurityError') return false;
        throw e;
      }
      window.dispatchEvent(new PopStateEvent('popstate'));
      // a frame, for the page to draw the state; a browser that holds frames back is not the
      // page's fault, so not past 2 s (the wait for the answer below is what the test judges)
      return new Promise((ok) => {
        requestAnimationFrame(() => ok(true));
        setTimeout(() => ok(true), 2000);
      });
    }, q);
    if (!pushed) await page.goto(`${base}/?${q}`);
  }
  try {
    // the answer: the verdict (first on the page), else the bar (a run past the ceiling has
    // no bar, and a multi-GPU nanochat run no verdict); generous: CI machines are busy
    await page.waitForSelector('[data-testid="verdict"], [data-testid="total"]', { timeout: 20000 });
  } catch {
    // whether the module had panicked tells a dead module from a page that never rendered
    const panicked = await page.evaluate(() => document.documentElement?.dataset.panicked ?? null).catch(() => 'the page did not answer');
    assert.fail(`blank page for ?${q}${panicked ? ` (wasm panic: ${panicked})` : ' (no panic recorded)'}`);
  }
  assert.deepEqual(errors, [], `console errors for ?${q}`);
  await assertNoPanic(page, `for ?${q}`);
}

export const tests = {
  async 'random valid and invalid query strings (1,000 in Chromium, 300 in the others): no panic, never a blank page'(ctx) {
    ctx.can('console', 'no console error on any query (panics are still caught: <html data-panicked>)');
    const r = rng(20261126);
    const queries = Array.from({ length: ctx.engine === 'chromium' ? 1000 : 300 }, () => randomQuery(r));
    // Two pages at once, but one in Firefox: there, two pages of one context navigating at once
    // through the service worker now and then end a cached response's body copy into a page's
    // load with an error Gecko logs in the console ("A ServiceWorker intercepted the request and
    // encountered an unexpected error": BodyComplete failing in dom/serviceworkers), on the first
    // bar's files of a page that had already drawn. Seen in 2 of 4 runs here and once in CI with
    // two lanes, in none of 3 with one (1 lane is no slower on two cores: 195 s against 340 s).
    const lanes = ctx.engine === 'firefox' ? 1 : 2;
    const context = await ctx.browser.newContext();
    const done = Promise.all(Array.from({ length: lanes }, async (_, lane) => {
      const page = await context.newPage();
      const errors = [];
      // Firefox logs each load the service worker intercepted and the next navigation abandoned
      // ("A ServiceWorker intercepted the request and encountered an unexpected error", for
      // first-bar.js, pwa.js, the first bar's wasm; the worker answers a failed fetch with a network
      // error, sw.js): hundreds of navigations a second abandon them; no page that stays does.
      // Seen in a CI rehearsal, 2026-11-29 (query 131 of 300).
      const abandoned = /A ServiceWorker intercepted the request and encountered an unexpected error/;
      page.on('console', (m) => { if (m.type() === 'error' && !abandoned.test(m.text())) errors.push(m.text()); });
      page.on('pageerror', (e) => errors.push(String(e)));
      for (let i = lane; i < queries.length; i += lanes) {
        const q = queries[i];
        const started = Date.now();
        try {
          await oneQuery(page, errors, ctx.base, i, q, lanes);
        } catch (e) {
          // a driver's own error (a protocol timeout) names no query: this one does
          e.message = `query ${i} (?${q}), after ${Date.now() - started} ms: ${e.message}`;
          throw e;
        }
        // VRAMFIT_TRACE_QUERIES=1: every query's time on stderr, to find one that stalls a browser
        if (process.env.VRAMFIT_TRACE_QUERIES) console.error(`${ctx.engine} ${i} ${Date.now() - started} ms ?${q}`);
      }
      await page.close();
    }));
    // A browser that stops answering must fail this test, not hold the suite forever (seen once in
    // WebKitGTK: its MiniBrowser session vanished mid-run and the driver never answered again).
    // What the abandoned lanes throw once the suite closes the browser is theirs, not a new failure.
    done.catch(() => {});
    let timer;
    const deadline = new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`the ${queries.length} queries took over ${DEADLINE_MIN} minutes: the browser stopped answering`)), DEADLINE_MIN * 60_000);
    });
    try {
      await Promise.race([done, deadline]);
    } finally {
      clearTimeout(timer);
    }
    await context.close();
  },

  async 'every field at its maximum: "beyond any card" within a second, no task over 200 ms'(ctx) {
    // (Chromium: the trace is its alone; the answer itself is the same in every engine, which the
    // random queries above and the CLI's tests cover)
    // Three cold loads, each traced, once the machine is quiet. On this 2-core machine a load's
    // longest task was over 200 ms in 1 of 44 (225 ms, its main-thread CPU under 80: the thread
    // waiting for a core), so one load of three may be; two would be the page's own work again
    // (before the inputs and the lower panels were built a task later, 20 of 30 loads were over).
    await quietMachine();
    const loads = [];
    let last;
    for (let i = 0; i < 3; i++) {
      if (last) await last.context.close();
      last = await loadAtTheMaximum(ctx);
      loads.push(last);
    }
    const { page, context, errors } = last;
    // slider steps down from the maxima, and the fix ranking after them (it runs once typing pauses)
    const steps = await mainThreadTasks(ctx.browser, page, async () => {
      await page.locator('input[type=range][name=batch_size]').focus();
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowLeft');
      await page.waitForTimeout(1500);
    });
    const each = loads.map((l) => `answered after ${Math.round(l.ms)} ms, long tasks ${describeTasks(l.loading)}`);
    console.log(`# every field at its maximum: ${each.join('; ')}; then three slider steps ${describeTasks(steps)}`);
    const longest = (tasks) => Math.max(0, ...tasks.map((t) => t.wall));
    for (const l of loads) {
      assert.ok(l.ms <= 1000, `"beyond any card" after ${Math.round(l.ms)} ms`);
      assert.ok(longest(l.loading) <= 400, `loading: tasks of ${describeTasks(l.loading)}`);
    }
    const over = loads.filter((l) => longest(l.loading) > 200);
    assert.ok(over.length <= 1, `a task over 200 ms in ${over.length} of 3 loads: ${each.join('; ')}`);
    assert.ok(longest(steps) <= 200, `slider steps: tasks of ${describeTasks(steps)}`);
    assert.deepEqual(errors, []);
    await assertNoPanic(page);
    await context.close();
  },
};

/**
 * One cold load of the every-field-at-its-maximum link, traced: when "beyond any card" first
 * showed (the first line's or the verdict's), and the main thread's long tasks until 1.5 s later.
 * The page stays open.
 */
async function loadAtTheMaximum(ctx) {
  const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__answered = new Promise((resolve) => {
      // the first line (crates/first-bar) or the page's verdict, whichever says it first
      const seen = () => document.querySelector('[data-risk="beyond"]');
      const mo = new MutationObserver(() => {
        if (seen()) {
          mo.disconnect();
          resolve(performance.now());
        }
      });
      document.addEventListener('DOMContentLoaded', () => mo.observe(document.body, { childList: true, subtree: true, attributes: true }));
    });
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let ms;
  const loading = await mainThreadTasks(ctx.browser, page, async () => {
    await page.goto(`${ctx.base}/?${EVERY_FIELD_AT_ITS_MAXIMUM}&gpu=h100`);
    ms = await page.evaluate(() => window.__answered);
    await page.waitForTimeout(1500);
  });
  const detail = await page.textContent('[data-testid="verdict"]');
  assert.match(detail, /beyond any card/i);
  assert.match(detail, /256 TiB/);
  // the fields keep what the link asked for
  assert.equal(await page.inputValue('input[type=text][name=n_layer]'), '1024');
  return { page, context, errors, ms, loading };
}

/** nanoGPT's fields at their maxima (config.rs `FIELDS`): 2^72 bytes of activations. */
const EVERY_FIELD_AT_ITS_MAXIMUM = 'n_layer=1024&n_head=1024&n_embd=131072&block_size=1048576&batch_size=1048576'
  + '&gradient_accumulation_steps=1000000&eval_iters=1000000&eval_interval=1000000000&max_iters=1000000000'
  + '&vocab_size=4194304';

/** Tracing (and addInitScript) are Chromium's. */
export const needs = {
  'every field at its maximum: "beyond any card" within a second, no task over 200 ms': ['cdp'],
};

/** Far above a slow run (WebKit on 2 busy cores: 9.5 minutes). */
const DEADLINE_MIN = 20;

/**
 * Seen once in four WebKit runs of this test (CI, 2026-11-26), never in Chromium or Firefox: the
 * wasm module panicked during the random navigations (reported after `?allocator=expandable_segments`;
 * the states themselves analyse, rank and chart without a panic natively). The page now records
 * the panic's message in `<html data-panicked>`, which this test prints when it happens.
 */
export const knownFailures = {
  webkit: {
    'random valid and invalid query strings (1,000 in Chromium, 300 in the others): no panic, never a blank page':
      'an intermittent wasm panic in WebKitGTK (1 run in 6), its message not yet captured; once, the browser session vanished mid-run',
  },
};
