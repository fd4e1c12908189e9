// The part of Playwright's Page API the specs use, over any driver that can run a script in the
// page, click, hover, type keys and take a screenshot: how the same specs drive Firefox (over
// WebDriver BiDi, puppeteer-core) and WebKit (over classic WebDriver, selenium-webdriver), which
// Playwright cannot drive as Debian ships them. Chromium keeps real Playwright.
//
// Semantics follow Playwright's where the specs rely on them: waits poll until a deadline
// (30 s), `fill` replaces the field's text by typing it, `selectOption` sets the value and fires
// `input` and `change`.

import { readFile } from 'node:fs/promises';

const TIMEOUT = 30_000;
const POLL_MS = 50;

/**
 * Runs `fn(arg)` in the page: the source every backend evaluates. A DOM node comes back as
 * `true` (Playwright returns a handle; the drivers cannot all serialize one).
 */
function callSource(fn, arg) {
  const call = `(${fn.toString()})(${arg === undefined ? '' : JSON.stringify(arg)})`;
  // nodeType, not instanceof Node: a frame's nodes belong to another realm
  return `Promise.resolve(${call}).then((v) => (v && typeof v.nodeType === 'number' ? true : v))`;
}

/**
 * A page: `backend` is the driver's page with goto, url, title, reload, back, forward,
 * evaluate(source) (awaits a promise), click(selector), hover(selector), press(key), type(text),
 * screenshot(path, fullPage), close(), and on(kind, handler) for the events it can observe.
 */
export class FacadePage {
  constructor(backend, context) {
    this.backend = backend;
    this._context = context;
    this.keyboard = { press: (key) => backend.press(key) };
  }

  on(kind, handler) {
    this.backend.on(kind, handler);
  }

  context() {
    return this._context;
  }

  goto(url) { return this.backend.goto(url); }
  reload() { return this.backend.reload(); }
  goBack() { return this.backend.back(); }
  goForward() { return this.backend.forward(); }
  url() { return this.backend.url(); }
  title() { return this.backend.title(); }
  close() { return this.backend.close(); }
  screenshot({ path, fullPage = false } = {}) { return this.backend.screenshot(path, fullPage); }
  waitForTimeout(ms) { return new Promise((ok) => setTimeout(ok, ms)); }

  evaluate(fn, arg) {
    return this.backend.evaluate(typeof fn === 'string' ? fn : callSource(fn, arg));
  }

  /** Polls `fn(arg)` until it is truthy. */
  async waitForFunction(fn, arg, { timeout = TIMEOUT } = {}) {
    const deadline = Date.now() + timeout;
    let last;
    for (;;) {
      try {
        last = await this.evaluate(fn, arg);
        if (last) return last;
      } catch (e) {
        // a navigation in progress: the page's realm is being replaced
        if (!/navigat|context|realm|destroyed|discarded|stale|no such/i.test(String(e))) throw e;
      }
      if (Date.now() > deadline) throw new Error(`waitForFunction timed out after ${timeout} ms${await this.#why()}: ${fn}`);
      await new Promise((ok) => setTimeout(ok, POLL_MS));
    }
  }

  /**
   * What a timed-out wait reports of the page: its URL and the panic the wasm module recorded
   * (`<html data-panicked>`), if any; a page that no longer answers reports nothing.
   */
  async #why() {
    try {
      const [url, panicked] = await this.evaluate(() => [location.href, document.documentElement.dataset.panicked ?? null]);
      return ` on ${url}${panicked ? `; the wasm module panicked: ${panicked}` : ''}`;
    } catch {
      return '';
    }
  }

  /** Waits for `selector` to reach `state`: attached, visible (default), detached or hidden. */
  waitForSelector(selector, { state = 'visible', timeout = TIMEOUT } = {}) {
    return this.waitForFunction(([sel, st]) => {
      const el = document.querySelector(sel);
      const visible = !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
      return { attached: !!el, detached: !el, visible, hidden: !visible }[st];
    }, [selector, state], { timeout });
  }

  textContent(selector) {
    return this.#property(selector, 'textContent');
  }

  innerText(selector) {
    return this.#property(selector, 'innerText');
  }

  inputValue(selector) {
    return this.#property(selector, 'value');
  }

  isChecked(selector) {
    return this.#property(selector, 'checked');
  }

  async #property(selector, name) {
    await this.waitForSelector(selector, { state: 'attached' });
    return this.evaluate(([sel, n]) => document.querySelector(sel)[n], [selector, name]);
  }

  async getAttribute(selector, name) {
    await this.waitForSelector(selector, { state: 'attached' });
    return this.evaluate(([sel, n]) => document.querySelector(sel).getAttribute(n), [selector, name]);
  }

  async click(selector) {
    await this.waitForSelector(selector);
    await this.backend.click(selector);
  }

  async hover(selector) {
    await this.waitForSelector(selector);
    await this.backend.hover(selector);
  }

  async focus(selector) {
    await this.waitForSelector(selector, { state: 'attached' });
    await this.evaluate((sel) => document.querySelector(sel).focus(), selector);
  }

  /**
   * Replaces the field's text with `value` as Playwright's fill does: focus, select all, and
   * insert the text as one edit (the browser's own editing command: an `input` event, and a
   * `change` when the edit is committed, as after typing).
   */
  async fill(selector, value) {
    await this.waitForSelector(selector);
    await this.evaluate(([sel, v]) => {
      const el = document.querySelector(sel);
      el.focus();
      el.select();
      if (v === '') document.execCommand('delete');
      else document.execCommand('insertText', false, v);
    }, [selector, String(value)]);
  }

  async press(selector, key) {
    await this.focus(selector);
    await this.backend.press(key);
  }

  async selectOption(selector, value) {
    await this.waitForSelector(selector);
    await this.evaluate(([sel, v]) => {
      const el = document.querySelector(sel);
      el.value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }, [selector, value]);
  }

  check(selector) {
    return this.setChecked(selector, true);
  }

  uncheck(selector) {
    return this.setChecked(selector, false);
  }

  /** `fn(the first element matching selector)`, in the page. */
  async $eval(selector, fn) {
    await this.waitForSelector(selector, { state: 'attached' });
    return this.backend.evaluate(`(${fn.toString()})(document.querySelector(${JSON.stringify(selector)}))`);
  }

  /** `fn(every element matching selector)`, in the page. */
  $$eval(selector, fn) {
    return this.backend.evaluate(`(${fn.toString()})(Array.from(document.querySelectorAll(${JSON.stringify(selector)})))`);
  }

  async setChecked(selector, checked) {
    if ((await this.isChecked(selector)) !== checked) await this.click(selector);
  }

  /** Runs a script file in the page (the driver's own evaluation: the page's CSP does not apply). */
  async addScriptTag({ path }) {
    await this.backend.evaluate(await readFile(path, 'utf8'), { script: true });
  }

  locator(selector) {
    const page = this;
    return {
      focus: () => page.focus(selector),
      fill: (v) => page.fill(selector, v),
      press: (key) => page.press(selector, key),
      click: () => page.click(selector),
      hover: () => page.hover(selector),
      check: () => page.setChecked(selector, true),
      uncheck: () => page.setChecked(selector, false),
      textContent: () => page.textContent(selector),
      innerText: () => page.innerText(selector),
      inputValue: () => page.inputValue(selector),
      isChecked: () => page.isChecked(selector),
      getAttribute: (name) => page.getAttribute(selector, name),
      count: () => page.evaluate((sel) => document.querySelectorAll(sel).length, selector),
      waitFor: ({ state = 'visible' } = {}) => page.waitForSelector(selector, { state }),
    };
  }
}
