// What a newcomer sees first: at 1280×900 the verdict and the best fix are on the first screen;
// on a phone (390×844) the paste box is one tap from the top, not below every input.

import assert from 'node:assert/strict';
import { open, close, shot } from '../lib/page.mjs';

/** The element's top and bottom in page coordinates. */
async function box(page, selector) {
  return page.$eval(selector, (e) => {
    const r = e.getBoundingClientRect();
    return { top: r.top + scrollY, bottom: r.bottom + scrollY };
  });
}

export const tests = {
  async 'at 1280×900 the verdict and the best fix are above the fold'(ctx) {
    // out of memory on a 3060: the best fix box is shown
    const page = await open(ctx, '?batch_size=8&compile=False&gpu=rtx3060');
    await page.waitForSelector('[data-testid=top-fix]');
    const verdict = await box(page, '[data-testid=verdict]');
    const fix = await box(page, '[data-testid=top-fix] .topfix__title');
    assert.ok(verdict.bottom <= 900, `verdict ends at ${verdict.bottom}`);
    assert.ok(fix.bottom <= 900, `the best fix's title ends at ${fix.bottom}`);
    await shot(ctx, page, 'desktop-1280-first-screen.png');
    await close(page);
  },

  async 'at 390×844 the paste box is one tap from the top'(ctx) {
    const page = await open(ctx, '?batch_size=8&compile=False&gpu=rtx3060', { viewport: { width: 390, height: 844 } });
    const jump = await box(page, '[data-testid=jump-paste]');
    assert.ok(jump.bottom <= 844, `the link to the paste ends at ${jump.bottom}`);
    await page.click('[data-testid=jump-paste]');
    await page.waitForFunction(() => {
      const r = document.querySelector('textarea[name=paste]').getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight;
    });
    await close(page);
  },
};
