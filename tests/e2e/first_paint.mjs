// The time from navigation to the first frame with the bar painted, cold (a fresh browser
// context each load: no HTTP cache, no service worker), under Chromium's own network and CPU
// throttling (the DevTools protocol), for the default page and for shared links. Files are
// served as a host serving precompressed files serves them (tests/e2e/lib/server.mjs).
//
//   node tests/e2e/first_paint.mjs [runs]     (scripts/bench.sh runs it through bench.mjs)

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/server.mjs';
import { start as startChromium } from './lib/engines/chromium.mjs';

/** The profiles of issue 16: Lighthouse's mobile "Slow 4G" and a "Fast 4G", with their budgets. */
export const PROFILES = [
  { name: 'unthrottled', budgetMs: 250 },
  { name: 'Fast 4G', downMbps: 9, upMbps: 1.5, rttMs: 60, cpu: 2, budgetMs: 600 },
  { name: 'Slow 4G', downMbps: 1.6, upMbps: 0.75, rttMs: 150, cpu: 4, budgetMs: 1200 },
];

/** URL states: the default page, and links people share (another program, card, language). */
export const STATES = [
  { name: 'default', query: '' },
  { name: 'shared nanoGPT link', query: '?gpu=rtx3060&batch_size=16&compile=False&n_layer=24' },
  { name: 'shared nanochat link (de)', query: '?program=nanochat&depth=16&device_batch_size=8&gpu=rtx4090&lang=de' },
];

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Sets `window.__firstBar`: performance.now() at the first frame painted after a bar appears —
 * the first bar's (crates/first-bar) or the page's own — and `window.__pageBar`: the same for the
 * page's bar (the page interactive).
 */
export function watchFirstBar() {
  const when = (selector) => new Promise((resolve) => {
    const seen = () => {
      if (!document.querySelector(selector)) return false;
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => resolve(performance.now());
        ch.port2.postMessage(0);
      });
      return true;
    };
    const mo = new MutationObserver(() => { if (seen()) mo.disconnect(); });
    document.addEventListener('DOMContentLoaded', () => {
      if (!seen()) mo.observe(document.body, { childList: true, subtree: true });
    });
  });
  window.__firstBar = when('[data-testid="first-bar"], [data-testid="segment-logits"]');
  window.__pageBar = when('[data-testid="segment-logits"]');
}

/**
 * One cold load of `url` under `profile`: ms to the first bar, to the page's bar, the bytes over the
 * wire, and `workMs`, the first bar's own time from its module ready to its paint (its marks;
 * undefined where the page painted first).
 */
export async function oneLoad(browser, url, profile) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  await page.addInitScript(watchFirstBar);
  const cdp = await context.newCDPSession(page);
  if (profile.downMbps) {
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: profile.rttMs,
      downloadThroughput: (profile.downMbps * 1e6) / 8,
      uploadThroughput: (profile.upMbps * 1e6) / 8,
    });
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: profile.cpu });
  }
  await page.goto(url, { waitUntil: 'commit' });
  const ms = await page.evaluate(() => window.__firstBar);
  const pageMs = await page.evaluate(() => window.__pageBar);
  // the bytes this load fetched, as they came over the wire (compressed)
  const bytes = await page.evaluate(() => performance.getEntriesByType('resource')
    .concat(performance.getEntriesByType('navigation'))
    .reduce((a, e) => a + (e.transferSize || 0), 0));
  const workMs = await page.evaluate(() => {
    const at = (name) => performance.getEntriesByName(name)[0]?.startTime;
    return at('vramfit:first-bar-painted') - at('vramfit:first-bar-ready');
  });
  await context.close();
  return { ms, pageMs, bytes, workMs };
}

/** Median first-bar time per profile and URL state, `runs` cold loads each. */
export async function firstPaint(base, browser, runs = 5) {
  const out = [];
  for (const profile of PROFILES) {
    for (const state of STATES) {
      const loads = [];
      for (let i = 0; i < runs; i++) loads.push(await oneLoad(browser, `${base}/${state.query}`, profile));
      const ms = median(loads.map((l) => l.ms));
      const pageMs = median(loads.map((l) => l.pageMs));
      out.push({
        profile: profile.name, state: state.name, query: state.query, budget_ms: profile.budgetMs,
        median_ms: Math.round(ms), all_ms: loads.map((l) => Math.round(l.ms)),
        page_median_ms: Math.round(pageMs),
        transfer_bytes: median(loads.map((l) => l.bytes)), within: ms <= profile.budgetMs,
      });
    }
  }
  return out;
}

/** The Chromium the browser tests drive, launched as they launch it (lib/engines/chromium.mjs). */
export async function launchChromium() {
  return (await startChromium()).browser;
}

export function firstPaintTable(rows) {
  const lines = ['first bar painted, cold, 390 × 844 (median)   budget    (the page interactive; each load; bytes)'];
  for (const r of rows) {
    lines.push(`  ${r.profile.padEnd(12)} ${r.state.padEnd(27)} ${String(r.median_ms).padStart(5)} ms  ${String(r.budget_ms).padStart(5)} ms ${r.within ? 'ok' : 'OVER'}  (page ${r.page_median_ms} ms; ${r.all_ms.join(', ')}; ${(r.transfer_bytes / 1024).toFixed(0)} KB over the wire)`);
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const server = await startServer(path.join(root, 'dist'));
  const browser = await launchChromium();
  const rows = await firstPaint(server.url, browser, Number(process.argv[2] ?? 5));
  await browser.close();
  await server.close();
  console.log(firstPaintTable(rows));
}
