// Two builds of the site against each other: the first-bar times of first_paint.mjs, with loads of
// the two alternating (A B, B A, …) so that a machine's slow minute falls on both alike. What the
// README's before/after tables of the first bar come from.
//
//   node tests/e2e/first_paint_ab.mjs DIST_A DIST_B [runs]
//
// A DIST is a built dist/ folder (./scripts/build-site.sh), e.g. one built from an older commit in
// a git worktree. Prints, per profile and URL state, each build's median time to the first bar and
// the median of the first bar's own work (its module ready → painted).

import { startServer } from './lib/server.mjs';
import { PROFILES, STATES, launchChromium, median, oneLoad } from './first_paint.mjs';

const [a, b, runs = '7'] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node tests/e2e/first_paint_ab.mjs DIST_A DIST_B [runs]');
  process.exit(2);
}
const builds = [
  { name: 'A', server: await startServer(a) },
  { name: 'B', server: await startServer(b) },
];
const browser = await launchChromium();
console.log(`A = ${a}\nB = ${b}\nmedian of ${runs} cold loads each, 390 × 844: first bar (its work)`);
for (const profile of PROFILES) {
  for (const state of STATES) {
    const loads = { A: [], B: [] };
    for (let i = 0; i < Number(runs); i++) {
      for (const build of i % 2 ? [...builds].reverse() : builds) {
        loads[build.name].push(await oneLoad(browser, `${build.server.url}/${state.query}`, profile));
      }
    }
    const cell = (ls) => `${Math.round(median(ls.map((l) => l.ms)))} ms (${Math.round(median(ls.map((l) => l.workMs)))})`;
    console.log(`${profile.name.padEnd(12)} ${state.name.padEnd(27)} A ${cell(loads.A).padEnd(16)} B ${cell(loads.B)}`);
  }
}
await browser.close();
for (const build of builds) await build.server.close();
