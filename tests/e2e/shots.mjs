// Screenshots of the built site for a person to look at: the pages a newcomer meets, at desktop
// and phone widths, into target/shots/ (node tests/e2e/shots.mjs [out-dir]). Not run by the tests.
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/server.mjs';
import { start } from './lib/engines/chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = process.argv[2] ?? path.join(root, 'target', 'shots');
await mkdir(out, { recursive: true });
const server = await startServer(path.join(root, 'dist'));
const engine = await start();
const browser = engine.browser;
const views = [
  ['desktop-oom', '?batch_size=8&compile=False&gpu=rtx3060', 1280, 900],
  ['desktop-default', '', 1280, 900],
  ['phone-oom', '?batch_size=8&compile=False&gpu=rtx3060', 390, 844],
  ['desktop-nanochat', '?program=nanochat&depth=20&device_batch_size=8&gpu=rtx4090', 1280, 900],
];
for (const [name, query, width, height] of views) {
  const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
  await page.goto(`${server.url}/${query}`);
  await page.waitForSelector('[data-testid=fix]', { timeout: 30000 }).catch(() => {});
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(out, `${name}.png`) });
  await page.screenshot({ path: path.join(out, `${name}-full.png`), fullPage: true });
  await page.context().close();
}
await engine.close();
await server.close();
console.log(`screenshots in ${out}`);
