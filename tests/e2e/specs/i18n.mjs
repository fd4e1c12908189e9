// Five languages: each renders with no English prose left, <html lang> and the title right,
// numbers in the language's format, no clipped or overflowing text at 360 px; the language comes
// from ?lang=, the stored choice or the browser, and survives a reload and going offline.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer } from '../lib/server.mjs';
import { open, close, hooks, shot } from '../lib/page.mjs';

const LANGS = ['en', 'zh-Hans', 'zh-Hant', 'ja', 'de'];

/** A language file as key → value (the format src/i18n/table.rs reads). */
async function strings(ctx, tag) {
  const text = await readFile(path.join(ctx.root, 'i18n', `${tag}.txt`), 'utf8');
  const out = {};
  for (const line of text.split('\n')) {
    if (!line.trim() || line.trimStart().startsWith('#') || !line.includes(' = ')) continue;
    const i = line.indexOf(' = ');
    out[line.slice(0, i).trim()] = line.slice(i + 3).replaceAll('\\n', '\n');
  }
  return out;
}

/** Three or more plain English words: prose, not code (the Rust test uses the same rule). */
const isProse = (s) => s.split(/\s+/).filter((w) => w.length > 1 && /^[a-z]+$/.test(w)).length >= 3;

/** The English sentences (templates cut at their placeholders) that `tag` translates. */
async function englishProse(ctx, tag) {
  const en = await strings(ctx, 'en');
  const tr = await strings(ctx, tag);
  const pieces = [];
  for (const [key, value] of Object.entries(en)) {
    if (value === tr[key] || !isProse(value)) continue;
    for (const piece of value.split(/\{[a-z_]+\}/)) {
      if (isProse(piece)) pieces.push(piece.trim());
    }
  }
  return pieces;
}

/** Elements whose text is cut off or that stick out of the 360 px viewport. */
async function overflowing(page) {
  return page.evaluate(() => {
    const bad = [];
    const width = document.documentElement.clientWidth;
    for (const el of document.querySelectorAll('body *')) {
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden' || el.closest('[hidden],details:not([open]) > :not(summary)')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!hasText) continue;
      // inside a scroll box (a code block) the box is what must fit; it scrolls its content
      let right = r.right;
      let left = r.left;
      for (let a = el.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') {
          const ar = a.getBoundingClientRect();
          right = Math.min(right, ar.right);
          left = Math.max(left, ar.left);
        }
      }
      if (right > width + 1 || left < -1) bad.push(`${el.tagName}.${el.className}: sticks out (${Math.round(r.left)}..${Math.round(r.right)})`);
      const clips = (style.overflowX === 'hidden' || style.overflowX === 'clip') || style.textOverflow === 'ellipsis';
      if (clips && el.scrollWidth > el.clientWidth + 1) bad.push(`${el.tagName}.${el.className}: text clipped "${el.textContent.trim().slice(0, 40)}"`);
    }
    if (document.documentElement.scrollWidth > width + 1) bad.push(`page scrolls sideways: ${document.documentElement.scrollWidth}px`);
    return bad;
  });
}

// The views each language is checked on: train.py with two GPUs (the DDP panel and the link
// field), nanochat's base_train.py out of memory (its best fix and launch line), chat_sft.py,
// LLMs-from-scratch's three scripts out of memory (their dicts and lines)
const VIEWS = [
  { query: 'batch_size=16&compile=False&world_size=2', tagline: 'nanogpt.tagline', shot: '' },
  { query: 'program=nanochat&device_batch_size=1&gpu=rtx3060', tagline: 'nanochat.tagline', shot: '-nanochat' },
  { query: 'program=nanochat-sft&depth=12&device_batch_size=8', tagline: 'nanochat.tagline', shot: '-sft' },
  { query: 'program=build-nanogpt&gpu=rtx4090', tagline: 'build-nanogpt.tagline', shot: '-bng' },
  {
    query: 'program=llms-from-scratch-ch05&context_length=1024&batch_size=4&gpu=rtx4070',
    tagline: 'llms-from-scratch-ch05.tagline',
    shot: '-lfs',
  },
  {
    query: 'program=llms-from-scratch-ch06&CHOOSE_MODEL=gpt2-xl&max_length=1024&batch_size=16&gpu=rtx3060',
    tagline: 'llms-from-scratch-ch06.tagline',
    shot: '-lfs6',
  },
  {
    query: 'program=llms-from-scratch-ch07&CHOOSE_MODEL=gpt2-large&max_length=1024&gpu=rtx4090',
    tagline: 'llms-from-scratch-ch07.tagline',
    shot: '-lfs7',
  },
];

export const tests = {
  // one test per language, each over every view: a WebKit stall (docs/TESTING.md) reruns that
  // language's views under the suite's retry, not all languages'
  ...Object.fromEntries(
    LANGS.map((tag) => [
      `every language: ${tag}: translated main view, <html lang>, title, 360 px without overflow`,
      async (ctx) => {
        const tr = await strings(ctx, tag);
        for (const view of VIEWS) {
          const page = await open(ctx, `?lang=${tag}&${view.query}`, { viewport: { width: 360, height: 800 } });
          assert.equal(await page.getAttribute('html', 'lang'), tag);
          assert.equal(await page.title(), tr.page_title, `${tag}: title`);
          assert.equal(await page.textContent('.header__tagline'), tr[view.tagline], `${tag}: tagline`);
          // the fixes are ranked once typing pauses; wait for them so their text is checked too
          await page.waitForSelector('[data-testid="fix"]');
          // textContent, not innerText: panels below the fold are not rendered (content-visibility)
          // but their words count
          const body = await page.evaluate(() => document.body.textContent);
          for (const english of await englishProse(ctx, tag)) {
            assert.ok(!body.includes(english), `${tag} ${view.query}: English left in the page: "${english}"`);
          }
          // lay out what content-visibility skips below the fold, so every panel is measured
          // (through the CSSOM: the page's CSP allows no inline style sheets)
          await page.evaluate(() => {
            for (const el of document.querySelectorAll('*')) el.style.contentVisibility = 'visible';
          });
          // the elements in the message too: a test that fails once and passes on its rerun
          // (WebKit's) prints only the message
          const bad = await overflowing(page);
          assert.deepEqual(bad, [], `${tag} ${view.query}: overflow at 360 px: ${bad.join('; ')}`);
          await shot(ctx, page, `lang-${tag}${view.shot}-360.png`);
          await close(page);
        }
      },
    ]),
  ),

  async 'numbers follow the language: 12,50 GiB and 124.373.760 in German'(ctx) {
    const page = await open(ctx, '?lang=de&batch_size=8');
    const total = await page.textContent('[data-testid="total"]');
    assert.match(total, /^\d+,\d\d GiB$/, total);
    const tokens = await page.textContent('[data-testid="tokens-per-iter"]');
    assert.match(tokens, /^\d{1,3}(\.\d{3})+$/, tokens);
    await close(page);
    const en = await open(ctx, '?lang=en&batch_size=8');
    assert.match(await en.textContent('[data-testid="total"]'), /^\d+\.\d\d GiB$/);
    await close(en);
  },

  async 'the browser language picks the page language; an unknown ?lang= is named'(ctx) {
    const context = await ctx.browser.newContext({ locale: 'ja-JP' });
    const page = await open(ctx, '', { context });
    assert.equal(await page.getAttribute('html', 'lang'), 'ja');
    assert.doesNotMatch(await page.url(), /lang=/, 'a negotiated language is not written into the URL');
    await close(page);
    const bad = await open(ctx, '?lang=xx', { context });
    assert.equal(await bad.getAttribute('html', 'lang'), 'ja', 'falls back to the browser language');
    assert.match(await bad.textContent('[data-testid="notice"]'), /lang=xx/);
    await close(bad);
    await context.close();
  },

  async 'the picker switches, remembers the choice, and links keep the language only on request'(ctx) {
    const context = await ctx.browser.newContext({ locale: 'en-US' });
    const page = await open(ctx, '?batch_size=8', { context });
    const before = await hooks(page);
    const de = await strings(ctx, 'de');
    await page.selectOption('[data-testid="lang"]', 'de');
    await page.waitForFunction(() => document.documentElement.lang === 'de');
    assert.equal(await page.textContent('.header__tagline'), de['nanogpt.tagline']);
    assert.deepEqual(await hooks(page), before, 'same numbers in another language');
    assert.doesNotMatch(await page.url(), /lang=/);
    await page.reload();
    await page.waitForSelector('[data-testid="total"]');
    assert.equal(await page.getAttribute('html', 'lang'), 'de', 'the choice survives a reload');
    if (ctx.can('clipboard', 'the copied link keeps the language only on request')) {
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.click('[data-testid="copy-link"]');
      assert.doesNotMatch(await page.evaluate(() => navigator.clipboard.readText()), /lang=/);
      await page.check('[data-testid="link-lang"]');
      await page.click('[data-testid="copy-link"]');
      assert.match(await page.evaluate(() => navigator.clipboard.readText()), /batch_size=8.*lang=de/);
    }
    await close(page);
    await context.close();
  },

  async 'offline: a language opened once works with the server stopped'(ctx) {
    const server = await startServer(path.join(ctx.root, 'dist'));
    const context = await ctx.browser.newContext({ locale: 'en-US' });
    const page = await open({ ...ctx, base: server.url }, '?lang=zh-Hant', { context });
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      if (!navigator.serviceWorker.controller) {
        await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, { once: true }));
      }
    });
    await server.close();
    // never opened before, but precached with the build
    await page.goto(`${server.url}/?lang=ja`);
    await page.waitForSelector('[data-testid="total"]');
    assert.equal(await page.getAttribute('html', 'lang'), 'ja');
    page.errors.length = 0; // the failed network navigation is logged before the cache answers
    await close(page);
    await context.close();
  },
};

/** What each test needs beyond what every engine's driver does (see lib/suite.mjs). */
export const needs = {
  'the browser language picks the page language; an unknown ?lang= is named': ['locale'],
};
