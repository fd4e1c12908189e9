import { startServer } from './lib/server.mjs';
import { chromium } from 'playwright-core';
import { ARGS } from './lib/engines/chromium.mjs';
const server = await startServer('/work/main/dist');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
const MAX = '?n_layer=1024&n_head=1024&n_embd=131072&block_size=1048576&batch_size=1048576&gradient_accumulation_steps=1000000&eval_iters=1000000&eval_interval=1000000000&max_iters=1000000000&vocab_size=4194304&gpu=h100';
const variants = { mono: 'code, .details__numbers, .field__number{font-family:monospace !important}', mono650: 'code, .details__numbers, .field__number{font-family:monospace !important} .program__legend, .group > legend{font-weight:600 !important}', allsans: '*{font-family:sans-serif !important;font-weight:400 !important}', base: '', nocq: '.bar__seg{container-type:normal !important}', nocv: '.inputs .group, .paste, .fixes, .export, .chart{content-visibility:visible !important}', font: '*{font-family:sans-serif !important}' };
const sel = process.argv.slice(2);
const res = {};
for (let i = 0; i < 5; i++) for (const [name, css] of Object.entries(variants)) {
  if (sel.length && !sel.includes(name)) continue;
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  await page.addInitScript((css) => {
    window.__tasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__tasks.push(Math.round(e.duration)); }).observe({ type: 'longtask', buffered: true });
    if (css) document.addEventListener('DOMContentLoaded', () => { const s = document.createElement('style'); s.textContent = css; document.head.append(s); });
  }, css);
  await page.goto(server.url + '/' + MAX);
  await page.waitForTimeout(2000);
  (res[name] ??= []).push((await page.evaluate(() => window.__tasks)).join('/'));
  await ctx.close();
}
for (const [k, v] of Object.entries(res)) console.log(k, v.join('  '));
await browser.close(); await server.close();
