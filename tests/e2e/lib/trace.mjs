// The page's main-thread tasks, from a Chromium trace: each task's wall time beside the thread's
// own CPU time in it. On a shared 2-core VM the two part ways: a task far longer than its CPU time
// was waiting for a core (CI's machine showed 16 % CPU steal), not doing the page's work. Used by
// robustness.mjs (issue 33's "no blocking task over 200 ms") and load_tasks.mjs.

import { readFile } from 'node:fs/promises';

const CATEGORIES = ['devtools.timeline', 'v8.execute', 'disabled-by-default-devtools.timeline'];

/**
 * Runs `during()` with tracing on (Playwright's Chromium `browser`, `page` the page traced) and
 * returns the main thread's tasks over `minMs` of wall time, in order: `{ at, wall, cpu, parts }`,
 * times in ms (`at` from the first such task), `parts` the longest kinds of work inside, "name ms".
 */
export async function mainThreadTasks(browser, page, during, minMs = 50) {
  await browser.startTracing(page, { categories: CATEGORIES });
  let trace;
  try {
    await during();
  } finally {
    trace = await browser.stopTracing();
  }
  const events = JSON.parse(trace.toString()).traceEvents;
  // the renderer's main thread that ran the most: the page's (a service worker has its own thread)
  const busiest = new Map();
  for (const e of events) {
    if (e.name === 'RunTask' && e.ph === 'X') busiest.set(`${e.pid}/${e.tid}`, (busiest.get(`${e.pid}/${e.tid}`) ?? 0) + e.dur);
  }
  const main = events
    .filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
    .map((e) => `${e.pid}/${e.tid}`)
    .sort((a, b) => (busiest.get(b) ?? 0) - (busiest.get(a) ?? 0))[0];
  const mine = events.filter((e) => `${e.pid}/${e.tid}` === main && e.ph === 'X');
  const tasks = mine.filter((e) => e.name === 'RunTask' && e.dur > minMs * 1000);
  const ms = (us) => Math.round(us / 1000);
  return tasks.map((t) => {
    const parts = {};
    for (const k of mine) {
      if (k !== t && k.ts >= t.ts && k.ts + k.dur <= t.ts + t.dur && k.dur > 3000) parts[k.name] = (parts[k.name] ?? 0) + k.dur;
    }
    return {
      at: ms(t.ts - tasks[0].ts),
      wall: ms(t.dur),
      // thread time, where the platform records it
      cpu: ms(t.tdur ?? t.dur),
      parts: Object.entries(parts).sort((a, b) => b[1] - a[1]).slice(0, 6).map(([n, d]) => `${n} ${ms(d)}`),
    };
  });
}

/** "237 ms (CPU 80)" for each task, or "none". */
export function describeTasks(tasks) {
  return tasks.map((t) => `${t.wall} ms (CPU ${t.cpu})`).join(', ') || 'none';
}

/**
 * Waits (up to `maxMs`) until this machine's processors were at least 80 % idle over half a
 * second: a timing taken right after another test is still sharing 2 cores with what that test
 * left winding down (CI, 2026-11-27: the first two loads after the 1,000 random queries had tasks
 * of 237 and 208 ms, the third 139). Linux's /proc/stat; elsewhere it returns at once.
 */
export async function quietMachine(maxMs = 15_000) {
  const sample = async () => {
    const cpu = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // idle and iowait beside the total
    return { idle: cpu[3] + (cpu[4] ?? 0), total: cpu.reduce((a, b) => a + b, 0) };
  };
  const until = Date.now() + maxMs;
  try {
    let before = await sample();
    while (Date.now() < until) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await sample();
      const idle = (now.idle - before.idle) / Math.max(1, now.total - before.total);
      if (idle >= 0.8) return;
      before = now;
    }
  } catch {
    // no /proc/stat: nothing to wait for
  }
}
