// A hunt for the intermittent WebKit failure (docs/TESTING.md): the same wasm driven hot in
// one engine, its answers checked against another, outside the test suite.
//
//   node tests/e2e/stress.mjs [engine] [navigations] [seed]      (engine: webkit, firefox, chromium)
//
// 1. The page: `navigations` URL states (every program, card and a few settings of each, drawn
//    from `seed`) arrive as history navigations in one page, as in the robustness test; after
//    each, the page must not have panicked (`<html data-panicked>`) and no text may hold a
//    garbled number (a GiB or MiB figure with 7+ integer digits, or any 16+ digit run). Each
//    state's total bytes are written to target/stress-ENGINE.json, to compare between engines.
// 2. The npm package's web build (scripts/build-js.sh): `analyze` and `rankFixes` for 120
//    configurations, 20 rounds of 5, each answer equal to Node's (V8) for the same call.
//
// Run on 2026-11-26 in WebKitGTK 2.50.6 (600 navigations; 12,000 package calls): nothing found,
// also with JSC_useWasmFastMemory=false and with JavaScriptCore's tier-up thresholds at 0 (JSC_
// options in the environment reach the browser's web process).

import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const [engineName = 'webkit', navigations = '300', seed = '7'] = process.argv.slice(2);
const engine = await import(`./lib/engines/${engineName}.mjs`);

/** The robustness test's seeded generator, so a failure names states that fail again. */
function rng(s) {
  s >>>= 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function states(n, r) {
  const pick = (a) => a[Math.floor(r() * a.length)];
  return Array.from({ length: n }, () => {
    const program = pick(['nanogpt', 'nanogpt', 'nanochat', 'nanochat-sft', 'build-nanogpt']);
    const q = [`program=${program}`, `gpu=${pick(['rtx3060', 'rtx4090', 'a6000', 'h100'])}`];
    if (program === 'nanogpt') {
      q.push(`batch_size=${pick([1, 4, 8, 12, 32])}`, `block_size=${pick([256, 1024])}`,
        `compile=${pick(['True', 'False'])}`, `allocator=${pick(['default', 'expandable_segments'])}`,
        `world_size=${pick([1, 2, 8])}`, `dtype=${pick(['bfloat16', 'float16', 'float32'])}`);
    } else if (program === 'build-nanogpt') {
      q.push(`B=${pick([1, 8, 16, 64])}`, `T=${pick([256, 1024])}`, `use_compile=${pick(['True', 'False'])}`);
    } else {
      q.push(`depth=${pick([2, 8, 12, 20])}`, `device_batch_size=${pick([1, 4, 8, 32])}`,
        `max_seq_len=${pick([256, 1024, 2048])}`);
    }
    return q.join('&');
  });
}

/** In the page: each state as a history navigation, then what it shows. */
function visit(queries) {
  const frame = () => new Promise((ok) => requestAnimationFrame(() => ok()));
  return (async () => {
    const seen = [];
    for (const q of queries) {
      history.pushState(null, '', `?lang=en&${q}`);
      window.dispatchEvent(new PopStateEvent('popstate'));
      await frame();
      await frame();
      // WebKit refuses more than 100 pushState calls in 10 s
      await new Promise((ok) => setTimeout(ok, 110));
      const garbled = [];
      const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (/\d{7,}[.,]\d\d (GiB|MiB)|\d{16,}/.test(n.data)) garbled.push(n.data.slice(0, 200));
      }
      const panicked = document.documentElement.dataset.panicked ?? null;
      seen.push({ q, bytes: document.querySelector('[data-testid="total"]')?.dataset.bytes ?? null, garbled, panicked });
      if (panicked) break;
    }
    return seen;
  })();
}

function packageConfigs() {
  return Array.from({ length: 120 }, (_, i) => [
    { batch_size: 1 + (i * 7) % 48, block_size: [256, 512, 1024][i % 3], compile: i % 5 === 0, n_layer: 6 + i % 7 },
    { program: 'nanochat', depth: 4 + i % 20, device_batch_size: 1 + i % 32 },
    { program: 'build-nanogpt', B: 1 + i % 64 },
    { program: 'nanochat-sft', depth: 6 + i % 14, device_batch_size: 1 + i % 16 },
  ][i % 4]);
}

/** In the page: every call five times, each answer against Node's. */
function callPackage([configs, expected, cards]) {
  const wrong = [];
  for (let k = 0; k < 5; k++) {
    for (const [i, c] of configs.entries()) {
      let got;
      try {
        got = JSON.stringify([window.vramfit.analyze(c, cards[i % 3]), window.vramfit.rankFixes(c, cards[i % 3])]);
      } catch (e) {
        got = `threw ${e.message}`;
      }
      if (got !== expected[i]) wrong.push({ config: c, got: got.slice(0, 500), expected: expected[i].slice(0, 500) });
    }
  }
  return wrong;
}

const running = await engine.start();
const server = await startServer(path.join(root, 'dist'), {
  extraRoots: {
    '/test-pages/': path.join(root, 'tests', 'e2e', 'pages'),
    '/npm/': path.join(root, 'target', 'npm', 'vramfit'),
  },
});
let failed = false;
try {
  const context = await running.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/?lang=en`);
  await page.waitForSelector('[data-testid="total"]');
  const all = states(Number(navigations), rng(Number(seed)));
  const seen = [];
  for (let start = 0; start < all.length && !failed; start += 50) {
    const batch = await page.evaluate(visit, all.slice(start, start + 50));
    seen.push(...batch);
    for (const s of batch.filter((b) => b.garbled.length || b.panicked)) {
      failed = true;
      console.log(`${engineName}: ?${s.q}: ${s.panicked ? `panicked: ${s.panicked}` : `garbled: ${s.garbled.join(' | ')}`}`);
    }
    console.log(`${engineName}: page, ${seen.length} of ${all.length} states`);
  }
  await writeFile(path.join(root, 'target', `stress-${engineName}.json`), JSON.stringify(seen, null, 1));

  const require = createRequire(import.meta.url);
  const node = require(path.join(root, 'target', 'npm', 'vramfit', 'nodejs', 'vramfit.js'));
  const configs = packageConfigs();
  const cards = ['rtx3060', 'rtx4090', 'a6000'];
  const expected = configs.map((c, i) => {
    try {
      return JSON.stringify([node.analyze(c, cards[i % 3]), node.rankFixes(c, cards[i % 3])]);
    } catch (e) {
      return `threw ${e.message}`;
    }
  });
  await page.goto(`${server.url}/test-pages/npm-blog.html`);
  await page.waitForFunction(() => window.vramfit !== undefined);
  for (let round = 0; round < 20 && !failed; round++) {
    const wrong = await page.evaluate(callPackage, [configs, expected, cards]);
    if (wrong.length) {
      failed = true;
      console.log(`${engineName}: package, round ${round}: ${wrong.length} answers differ from Node's`, JSON.stringify(wrong.slice(0, 3), null, 1));
    }
    console.log(`${engineName}: package, ${configs.length * 5 * (round + 1)} calls checked`);
  }
  await context.close();
} finally {
  await running.close();
  await server.close();
}
console.log(failed ? `${engineName}: FOUND (above)` : `${engineName}: nothing found`);
process.exitCode = failed ? 1 : 0;
