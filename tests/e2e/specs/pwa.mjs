// The three ways vramfit is used: installed and offline, embedded in a blog post, hosted as
// static files with nothing loaded from anywhere else.

import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../lib/server.mjs';
import { open, close, hooks, waitForTotalChange, shot } from '../lib/page.mjs';

async function waitForServiceWorker(page) {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, { once: true }));
    }
  });
}

/**
 * Whether the page comes to show no calculator within 10 s. A failed navigation's error page
 * commits after the driver has reported the failure (the calculator's page is still there a
 * moment): waiting for it also keeps it from interrupting the test's next navigation.
 */
async function showsNoCalculator(page) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const shown = await page.evaluate(() => document.querySelector('[data-testid="total"]') !== null).catch(() => null);
    if (shown === false) return true;
    await page.waitForTimeout(100);
  }
  return false;
}

export const tests = {
  async 'precompressed: each file has .br and .gz twins equal to it, and the page is served Brotli'(ctx) {
    const dist = path.join(ctx.root, 'dist');
    const names = (await readdir(dist, { recursive: true })).filter((n) => /\.(html|js|css|wasm|txt|webmanifest)$/.test(n));
    assert.ok(names.some((n) => n.endsWith('.wasm')) && names.some((n) => n.startsWith('i18n')), names.join(' '));
    for (const name of names) {
      const body = await readFile(path.join(dist, name));
      assert.deepEqual(brotliDecompressSync(await readFile(path.join(dist, `${name}.br`))), body, `${name}.br`);
      assert.deepEqual(gunzipSync(await readFile(path.join(dist, `${name}.gz`))), body, `${name}.gz`);
    }
    // the test server serves them as such a host does: the browser gets Brotli and decodes it
    const page = await open(ctx, '?gpu=rtx3060');
    const wasm = await page.evaluate(() => performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm')));
    if (wasm && wasm.encodedBodySize) assert.ok(wasm.encodedBodySize < wasm.decodedBodySize * 0.5, JSON.stringify(wasm));
    await close(page);
  },

  async 'installable: Chromium reports no installability errors'(ctx) {
    // installability is not checked in incognito contexts: use a real profile
    const profile = await mkdtemp(path.join(os.tmpdir(), 'vramfit-profile-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: ctx.chromiumArgs,
    });
    const page = await open(ctx, '', { context });
    await waitForServiceWorker(page);
    const cdp = await context.newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    assert.deepEqual(installabilityErrors, []);
    const manifest = JSON.parse(await (await page.request.get(`${ctx.base}/manifest.webmanifest`)).text());
    assert.equal(manifest.start_url, './');
    assert.ok(manifest.icons.some((i) => i.purpose === 'maskable'));
    await close(page);
    await context.close();
    await rm(profile, { recursive: true, force: true });
  },

  async 'offline: after one visit, a reload with the server stopped still calculates'(ctx) {
    // its own server, so stopping it does not disturb the other tests
    const server = await startServer(path.join(ctx.root, 'dist'));
    const context = await ctx.browser.newContext();
    const page = await open({ ...ctx, base: server.url }, '?batch_size=8&gpu=rtx3090', { context });
    await waitForServiceWorker(page);
    const online = await hooks(page);
    await server.close();
    await page.reload();
    await page.waitForSelector('[data-testid="total"]');
    assert.deepEqual(await hooks(page), online, 'same numbers offline');
    await page.locator('input[type=range][name=batch_size]').focus();
    await page.keyboard.press('ArrowRight');
    await waitForTotalChange(page, online.total);
    assert.ok((await hooks(page)).total > online.total, 'the slider still drives the bar offline');
    // a deep link never visited also opens offline (navigations fall back to the cached page)
    await page.goto(`${server.url}/?batch_size=4&compile=False`);
    // the new page's field, not the old page's total: Firefox's goto can return before an offline
    // navigation's fallback has replaced the page (seen once in three runs here: 12, the old page's)
    await page.waitForFunction(() => document.querySelector('input[type=text][name=batch_size]')?.value === '4');
    await page.waitForSelector('[data-testid="total"]');
    // the plan view's worker and module, never fetched online, come from the precache
    await page.click('[data-testid=plan-open]');
    await page.waitForSelector('[data-testid=plan-stage]');
    assert.ok(await page.evaluate(() => document.querySelector('[data-testid=plan-failed]').hidden), 'the plan worker runs offline');
    page.errors.length = 0; // the failed network navigation is logged before the fallback
    await close(page);
    await context.close();
  },

  async 'offline: a 404, another page in scope or an over-long query visited online leaves the offline page as it was'(ctx) {
    // a host that answers an over-long request line with 414, and another site's page beside
    // vramfit (as at a domain's root): only the app's own page is its offline copy
    const server = await startServer(path.join(ctx.root, 'dist'), {
      maxUrl: 65536,
      extraRoots: { '/blog/': path.join(ctx.root, 'tests', 'e2e', 'pages') },
    });
    const context = await ctx.browser.newContext();
    try {
      const page = await open({ ...ctx, base: server.url }, '?batch_size=8&gpu=rtx3090', { context });
      await waitForServiceWorker(page);
      const online = await hooks(page);
      // while online, each answer is the server's own (the worker does not stand in for it)
      await page.goto(`${server.url}/docs/typo`);
      await page.waitForFunction(() => /no such page/.test(document.title));
      await page.goto(`${server.url}/blog/embed-host.html`);
      await page.waitForFunction(() => document.title === 'A blog post embedding vramfit');
      await page.goto(`${server.url}/?batch_size=8&x=${'a'.repeat(70_000)}`);
      await page.waitForFunction(() => document.body?.textContent.includes('URI too long'));
      await server.close();
      // offline: the app's page is this version's, and calculates
      await page.goto(`${server.url}/?batch_size=8&gpu=rtx3090`);
      await page.waitForSelector('[data-testid="total"]');
      assert.deepEqual(await hooks(page), online, 'same numbers offline');
      await page.locator('input[type=range][name=batch_size]').focus();
      await page.keyboard.press('ArrowRight');
      await waitForTotalChange(page, online.total);
      assert.ok((await hooks(page)).total > online.total, 'the slider still drives the bar offline');
      // index.html is the app's page too
      // (waiting on the field itself: Firefox over BiDi can still show the previous document's
      // total when the navigation's wait returns — a CI run read a null field here once)
      await page.goto(`${server.url}/index.html?batch_size=4`);
      await page.waitForFunction(() => document.querySelector('input[type=text][name=batch_size]')?.value === '4');
      // a path that is not the app's is not answered with the app's page offline (the browser's
      // own offline error)
      await page.goto(`${server.url}/docs/typo`).catch(() => {});
      assert.ok(await showsNoCalculator(page), 'offline, a path that is not the app\'s is not answered with its page');
      await page.goto(`${server.url}/?batch_size=4`);
      await page.waitForSelector('[data-testid="total"]');
      page.errors.length = 0; // the 404, the 414 and the failed offline navigations are logged
      await close(page);
    } finally {
      await context.close();
      await server.close(); // a second close does nothing
    }
  },

  async 'an update behind Cache-Control: max-age=600 caches the new files, not the HTTP cache\'s'(ctx) {
    // a host that lets browsers keep the files whose names do not change (i18n/*.txt, pwa.js, …)
    // for ten minutes: the update must not fill its cache with the copies the browser kept
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vramfit-dist-'));
    await cp(path.join(ctx.root, 'dist'), dir, { recursive: true });
    const server = await startServer(dir, { cacheControl: 'public, max-age=600' });
    const context = await ctx.browser.newContext();
    try {
      const page = await open({ ...ctx, base: server.url }, '?lang=de', { context });
      await waitForServiceWorker(page);
      await page.waitForFunction(() => /nanoGPT-Lauf/.test(document.title));
      // a deploy: a new German title, and the worker's new version
      const title = 'vramfit – neue Fassung';
      const de = path.join(dir, 'i18n', 'de.txt');
      const words = await readFile(de, 'utf8');
      assert.match(words, /^page_title = /m);
      await writeFile(de, words.replace(/^page_title = .*$/m, `page_title = ${title}`));
      const sw = path.join(dir, 'sw.js');
      await writeFile(sw, (await readFile(sw, 'utf8')).replace(/const VERSION = '[0-9a-f]+'/, "const VERSION = 'next'"));
      // a deploy writes the compressed twins anew too; without them the server sends the new file
      for (const file of [de, sw]) {
        await rm(`${file}.br`, { force: true });
        await rm(`${file}.gz`, { force: true });
      }
      await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
      await page.waitForSelector('#vramfit-update');
      await page.evaluate(() => { window.beforeReload = true; });
      await page.click('#vramfit-update button');
      await page.waitForFunction(() => !window.beforeReload && document.querySelector('[data-testid="total"]'));
      await server.close();
      const cached = await page.evaluate(async () => {
        const names = (await caches.keys()).filter((k) => k.startsWith('vramfit-'));
        const response = await caches.match(new URL('i18n/de.txt', document.baseURI).href, { cacheName: names[0] });
        return { names, text: response ? await response.text() : null };
      });
      assert.deepEqual(cached.names, ['vramfit-next'], 'only the new version\'s cache');
      assert.ok(cached.text?.includes(`page_title = ${title}`), `the cached de.txt is the new one: ${cached.text?.match(/^page_title = .*$/m)}`);
      // the page after the update speaks the new file
      await page.waitForFunction((t) => document.title === t, title);
      // and offline the page opens in the new words
      await page.reload();
      await page.waitForSelector('[data-testid="total"]');
      await page.waitForFunction((t) => document.title === t, title);
      await close(page);
    } finally {
      await context.close();
      await server.close(); // a second close does nothing
      await rm(dir, { recursive: true, force: true });
    }
  },

  async 'a new version offers a reload'(ctx) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vramfit-dist-'));
    await cp(path.join(ctx.root, 'dist'), dir, { recursive: true });
    const server = await startServer(dir);
    const context = await ctx.browser.newContext();
    const page = await open({ ...ctx, base: server.url }, '', { context });
    await waitForServiceWorker(page);
    const sw = path.join(dir, 'sw.js');
    await writeFile(sw, (await readFile(sw, 'utf8')).replace(/const VERSION = '[0-9a-f]+'/, "const VERSION = 'next'"));
    // a deploy writes the compressed twins anew too; without them the server sends the new file
    await rm(`${sw}.br`);
    await rm(`${sw}.gz`);
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
    await page.waitForSelector('#vramfit-update');
    assert.match(await page.textContent('#vramfit-update'), /new version/);
    // a mark the reload wipes: the page after it is the new one
    await page.evaluate(() => { window.beforeReload = true; });
    await page.click('#vramfit-update button');
    await page.waitForFunction(() => !window.beforeReload && document.querySelector('[data-testid="total"]'));
    await close(page);
    await context.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  },

  async 'embed: compact, sized by messages, same numbers as the full page'(ctx) {
    const server = await startServer(path.join(ctx.root, 'dist'), {
      extraRoots: { '/test-pages/': path.join(ctx.root, 'tests', 'e2e', 'pages') },
    });
    const context = await ctx.browser.newContext();
    const host = await context.newPage();
    await host.goto(`${server.url}/test-pages/embed-host.html`);
    const query = 'batch_size=16&compile=False&gpu=rtx3060';
    await host.evaluate((src) => { document.getElementById('calc').src = src; }, `/?embed=1&bg=transparent&theme=dark&${query}`);
    // the frame is same-origin here: the host reads it through contentDocument, as every
    // engine's driver can
    await host.waitForFunction(() => document.getElementById('calc').contentDocument?.querySelector('[data-testid="total"]'));
    await host.waitForFunction(() => window.heights.length > 0);
    // the frame follows the latest message (the page grows as its panels render, and a slower
    // engine may send one more after any height the test reads first)
    await host.waitForFunction(() => document.getElementById('calc').getBoundingClientRect().height
      === Math.max(120, Math.min(window.heights.at(-1), 20000)));
    const height = await host.evaluate(() => window.heights.at(-1));
    assert.ok(height > 300, `height ${height}`);
    const embedded = await host.evaluate(() => {
      const d = document.getElementById('calc').contentDocument;
      return {
        total: d.querySelector('[data-testid=total]').dataset.bytes,
        fits: d.querySelector('[data-testid=verdict]').dataset.fits,
        header: d.querySelector('.header') !== null,
        theme: d.documentElement.dataset.theme,
        bg: d.documentElement.dataset.bg,
        openFull: d.querySelector('[data-testid=open-full]').getAttribute('href'),
      };
    });
    assert.equal(embedded.header, false, 'no page chrome');
    await shot(ctx, host, 'embed.png');
    assert.equal(embedded.theme, 'dark');
    assert.equal(embedded.bg, 'transparent');
    const full = await open({ ...ctx, base: server.url }, `?${query}`, { context });
    const h = await hooks(full);
    assert.equal(Number(embedded.total), h.total);
    assert.equal(embedded.fits === 'true', h.fits);
    // the link opens the full page with the same state, without the embed keys
    const href = embedded.openFull;
    assert.match(href, /batch_size=16/);
    assert.doesNotMatch(href, /embed=1/);
    // the full page's Embed button gives the snippet for the current state
    await full.click('[data-testid=embed-button]');
    const snippet = await full.textContent('[data-testid=embed-snippet]');
    assert.match(snippet, /<iframe data-vramfit src="http:\/\/127\.0\.0\.1:\d+\/\?embed=1&amp;batch_size=16/);
    assert.match(snippet, /embed\.js/);
    await close(full);
    await context.close();
    await server.close();
  },

  async 'static: only its own files are fetched, no CSP violations'(ctx) {
    const context = await ctx.browser.newContext();
    const page = await context.newPage();
    const requests = [];
    const violations = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
    await page.goto(`${ctx.base}/?batch_size=12`);
    await page.waitForSelector('[data-testid="total"]');
    await page.locator('input[type=range][name=batch_size]').focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(500);
    const foreign = requests.filter((u) => !u.startsWith(ctx.base) && !u.startsWith('data:'));
    assert.deepEqual(foreign, []);
    assert.ok(requests.length > 0, 'requests are observed');
    assert.deepEqual(violations, []);
    await context.close();
  },

  async 'a browser that refuses service workers: the page calculates, no console error'(ctx) {
    // Playwright's 'block' is what a policy that disables workers does: register() settles with
    // no registration (pwa.js once read its `waiting` and threw)
    const context = await ctx.browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${ctx.base}/?batch_size=12`);
    await page.waitForSelector('[data-testid="total"]');
    // the registration is attempted once the app has started (TrunkApplicationStarted)
    await page.waitForSelector('[data-testid="verdict"]');
    const before = await page.textContent('[data-testid="total"]');
    await page.locator('input[type=range][name=batch_size]').focus();
    await page.keyboard.press('ArrowRight');
    await waitForTotalChange(page, before);
    await page.waitForTimeout(500);
    assert.deepEqual(errors, []);
    assert.equal(await page.evaluate(() => navigator.serviceWorker.controller), null);
    await context.close();
  },

  async 'static: no cookies, and every URL in the page is relative'(ctx) {
    const context = await ctx.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${ctx.base}/?batch_size=12`);
    await page.waitForSelector('[data-testid="total"]');
    assert.equal(await page.evaluate(() => document.cookie), '');
    assert.deepEqual(await context.cookies(), []);
    // it works under any sub-path
    const absolute = await page.$$eval('link[href], script[src]', (els) =>
      els.map((e) => e.getAttribute('href') || e.getAttribute('src')).filter((u) => u.startsWith('/') || u.includes('://')));
    assert.deepEqual(absolute, []);
    await context.close();
  },
};

/** What each test needs beyond what every engine's driver does (see lib/suite.mjs). */
export const needs = {
  'installable: Chromium reports no installability errors': ['cdp'],
  'static: only its own files are fetched, no CSP violations': ['requests', 'console'],
  'a browser that refuses service workers: the page calculates, no console error': ['block_workers', 'console'],
};
