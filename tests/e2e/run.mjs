// End-to-end tests of the built site (dist/) in Debian's Chromium, driven by playwright-core.
// Serves dist/ itself on 127.0.0.1, runs every spec in specs/, writes screenshots to
// target/screenshots, and exits non-zero if any spec fails.
//
//   node tests/e2e/run.mjs [name-filter]

import { chromium } from 'playwright-core';
import { readdir, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startServer } from './lib/server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const filter = process.argv[2] ?? '';

const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const server = await startServer(path.join(root, 'dist'));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: CHROMIUM_ARGS,
});
const shots = path.join(root, 'target', 'screenshots');
await mkdir(shots, { recursive: true });

const ctx = { root, base: server.url, browser, shots, server, chromiumArgs: CHROMIUM_ARGS };
const files = (await readdir(path.join(here, 'specs'))).filter((f) => f.endsWith('.mjs')).sort();
let failed = 0;
let passed = 0;
for (const file of files) {
  const mod = await import(pathToFileURL(path.join(here, 'specs', file)).href);
  for (const [name, fn] of Object.entries(mod.tests ?? {})) {
    const full = `${file.replace('.mjs', '')} › ${name}`;
    if (filter && !full.includes(filter)) continue;
    const started = Date.now();
    try {
      await fn(ctx);
      passed += 1;
      console.log(`  ok   ${full} (${Date.now() - started} ms)`);
    } catch (e) {
      failed += 1;
      console.log(`  FAIL ${full}\n       ${(e && e.stack) || e}`.replace(/\n/g, '\n       '));
    }
  }
}
await browser.close();
await server.close();
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
