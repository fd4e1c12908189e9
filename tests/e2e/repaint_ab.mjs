// Slider input → next paint on two builds' default pages, rounds alternating in one headless
// Chromium session, so both see the same machine load: the A/B that a single bench.sh run of
// each build cannot give (their medians move by a millisecond between runs on this machine).
//
//   node tests/e2e/repaint_ab.mjs DIST_A DIST_B [rounds=4] [inputs=200]

import { startServer } from './lib/server.mjs';
import { launchChromium } from './first_paint.mjs';
import { sliderInputs } from './lib/repaint.mjs';

const [distA, distB, rounds = '4', count = '200'] = process.argv.slice(2);
if (!distA || !distB) {
  console.error('usage: node tests/e2e/repaint_ab.mjs DIST_A DIST_B [rounds] [inputs]');
  process.exit(2);
}
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

const inputs = sliderInputs;

const builds = [];
for (const dist of [distA, distB]) builds.push({ dist, server: await startServer(dist), times: [] });
const browser = await launchChromium();
for (const b of builds) {
  b.context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  b.page = await b.context.newPage();
  await b.page.goto(`${b.server.url}/?gpu=rtx3060`);
  await b.page.waitForSelector('input[type=range][name=batch_size]');
  await inputs(b.page, 50); // warm up
}
for (let r = 0; r < Number(rounds); r++) {
  for (const b of r % 2 ? [...builds].reverse() : builds) b.times.push(...(await inputs(b.page, Number(count))));
}
for (const b of builds) {
  console.log(`${b.dist}: median ${quantile(b.times, 0.5).toFixed(1)} ms, p95 ${quantile(b.times, 0.95).toFixed(1)} ms (${b.times.length} inputs)`);
  await b.context.close();
  await b.server.close();
}
await browser.close();
