// Debian's Firefox ESR, driven over WebDriver BiDi by puppeteer-core (no driver binary to
// download), behind the Playwright-shaped facade the specs use.

import { execFileSync } from 'node:child_process';
import puppeteer from 'puppeteer-core';
import { FacadePage } from './facade.mjs';

const EXECUTABLE = process.env.FIREFOX ?? '/usr/bin/firefox-esr';

/** What Firefox cannot do over BiDi here, by capability (see suite.mjs). */
export const missing = {
  cdp: 'the Chrome DevTools Protocol is Chromium\'s',
  clipboard: 'BiDi cannot grant clipboard permissions to a page in Firefox ESR',
  route: 'holding back a response (BiDi network interception) is not in this facade',
  block_workers: 'service workers are a browser-wide pref in Firefox, not a per-context option over BiDi',
};

/**
 * A test that failed because Firefox left a WebDriver BiDi call unanswered (puppeteer gives up
 * after its 180 s `protocolTimeout`) runs once more, and the first failure is printed
 * (`# firefox: flaky:`): seen once in CI (2026-11-28, a `script.evaluate` in the random-queries
 * test), never in a local run. Any other failure — an assertion, a console error, a panic — fails
 * at once.
 */
export const retry = (e) =>
  /protocolTimeout/.test(String(e?.message ?? e)) ? 'Firefox left a WebDriver BiDi call unanswered for 180 s (once in CI)' : null;

function launch(prefs = {}) {
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: EXECUTABLE,
    headless: true,
    protocol: 'webDriverBiDi',
    // Firefox refuses more than 200 history.pushState calls in 10 s with a SecurityError; the
    // robustness spec makes ~900 to feed the page's URL decoder (the page itself debounces its own)
    extraPrefsFirefox: { 'dom.navigation.navigationRateLimit.count': 100000, ...prefs },
  });
}

function backend(page) {
  return {
    goto: (url) => page.goto(url, { waitUntil: 'load' }),
    reload: () => page.reload({ waitUntil: 'load' }),
    back: () => page.goBack({ waitUntil: 'load' }),
    forward: () => page.goForward({ waitUntil: 'load' }),
    url: () => page.url(),
    title: () => page.title(),
    evaluate: (source) => page.evaluate(source),
    click: (sel) => page.click(sel),
    hover: (sel) => page.hover(sel),
    press: (key) => page.keyboard.press(key),
    type: (text) => page.keyboard.type(text),
    screenshot: (path, fullPage) => page.screenshot({ path, fullPage }),
    close: () => page.close(),
    // console messages, uncaught errors and requests, shaped as Playwright's
    on: (kind, handler) => page.on(kind, handler),
  };
}

/** A browser context: fresh storage, its own viewport (and, for a locale, its own Firefox). */
async function newContext(browser, { viewport = { width: 1280, height: 720 }, locale } = {}) {
  // the accept-languages preference is per browser: a locale gets a browser of its own
  const own = locale ? await launch({ 'intl.accept_languages': locale }) : null;
  const ctx = await (own ?? browser).createBrowserContext();
  const facade = {
    async newPage() {
      const page = await ctx.newPage();
      await page.setViewport(viewport);
      return new FacadePage(backend(page), facade);
    },
    cookies: () => ctx.cookies(),
    async close() {
      await ctx.close();
      if (own) await own.close();
    },
  };
  return facade;
}

export async function start() {
  const browser = await launch();
  const version = execFileSync(EXECUTABLE, ['--version'], { encoding: 'utf8' }).trim();
  return {
    name: 'firefox',
    version,
    browser: { newContext: (options) => newContext(browser, options) },
    close: () => browser.close(),
  };
}
