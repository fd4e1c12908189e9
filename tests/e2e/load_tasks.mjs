// The main thread's long tasks (over 50 ms) while a link loads, cold (a fresh browser context
// each load), at 1280 × 900 in Chromium: what issue 33's "no blocking task over 200 ms" is held
// to. With --trace, one traced load per build instead, each long task split into what ran in it,
// its wall time beside the main thread's own CPU time (a task far longer than its CPU time was
// waiting: for the processor, on this 2-core machine, or for another process).
//
//   node tests/e2e/load_tasks.mjs [--trace] [--runs N] [--query Q | --max] [DIST ...]
//
// DIST: built sites to compare (default: dist/), loaded in turn, so a busy moment of the machine
// falls on each alike. --max: nanoGPT with every field at its maximum (robustness.mjs' link).
// Not run by the tests: a development aid, like first_paint.mjs.

import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/server.mjs';
import { start } from './lib/engines/chromium.mjs';
import { median } from './first_paint.mjs';
import { recordLongTasks } from './lib/page.mjs';
import { mainThreadTasks } from './lib/trace.mjs';

/** robustness.mjs' EVERY_FIELD_AT_ITS_MAXIMUM, on an H100. */
const MAX = 'n_layer=1024&n_head=1024&n_embd=131072&block_size=1048576&batch_size=1048576'
  + '&gradient_accumulation_steps=1000000&eval_iters=1000000&eval_interval=1000000000&max_iters=1000000000'
  + '&vocab_size=4194304&gpu=h100';

/** Loads `url` once, cold; the long tasks' durations (ms) until 2 s after the verdict. */
async function longTasks(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(recordLongTasks);
  await page.goto(url);
  await page.waitForSelector('[data-testid="verdict"]');
  await page.waitForTimeout(2000);
  const tasks = await page.evaluate(() => window.__tasks);
  await context.close();
  return tasks;
}

/** One traced load: each main-thread task over 40 ms with its wall and CPU time and its parts. */
async function traced(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const tasks = await mainThreadTasks(browser, page, async () => {
    await page.goto(url);
    await page.waitForSelector('[data-testid="verdict"]');
    await page.waitForTimeout(2000);
  }, 40);
  await context.close();
  if (!tasks.length) return ['no main-thread task over 40 ms'];
  return tasks.map((t) => `at ${String(t.at).padStart(5)} ms: ${String(t.wall).padStart(4)} ms (CPU ${t.cpu}): ${t.parts.join(', ')}`);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { trace: { type: 'boolean' }, runs: { type: 'string', default: '6' }, query: { type: 'string', default: '' }, max: { type: 'boolean' } },
});
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dists = positionals.length ? positionals : [path.join(root, 'dist')];
const servers = await Promise.all(dists.map((d) => startServer(path.resolve(d))));
const query = values.max ? MAX : values.query.replace(/^\?/, '');
const { browser } = await start();
if (values.trace) {
  for (const [i, s] of servers.entries()) console.log(`${dists[i]}:\n  ${(await traced(browser, `${s.url}/?${query}`)).join('\n  ')}`);
} else {
  const loads = dists.map(() => []);
  for (let r = 0; r < Number(values.runs); r++) {
    for (const [i, s] of servers.entries()) loads[i].push(await longTasks(browser, `${s.url}/?${query}`));
  }
  for (const [i, d] of dists.entries()) {
    const longest = loads[i].map((t) => Math.max(0, ...t));
    console.log(`${d}: the longest task per load, median ${median(longest)} ms; over 200 ms in ${longest.filter((x) => x > 200).length} of ${longest.length}`);
    console.log(`  each load's long tasks (ms): ${loads[i].map((t) => t.join('/') || 'none').join('  ')}`);
  }
}
await browser.close();
await Promise.all(servers.map((s) => s.close()));
