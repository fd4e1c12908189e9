// The calculator page: its numbers equal the CLI's, inputs drive the bar and the URL, reloads
// keep the state, bad links fall back with a notice, and nothing fails in the console.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { open, close, hooks, cli, waitForTotalChange, assertSameAsCli, shot } from '../lib/page.mjs';

const require = createRequire(import.meta.url);

/** Configs the page and the CLI must agree on, byte for byte. */
const CASES = [
  { query: '', args: ['--gpu=rtx3060'] },
  {
    query: '?batch_size=8&compile=False&gradient_accumulation_steps=2&gpu=rtx4090',
    args: ['--batch_size=8', '--compile=False', '--gradient_accumulation_steps=2', '--gpu=rtx4090'],
  },
  {
    // shakespeare_char's baby GPT
    query: '?n_layer=6&n_head=6&n_embd=384&block_size=256&batch_size=64&gradient_accumulation_steps=1&dropout=0.2&vocab_size=65&gpu=rtx3060',
    args: ['--n_layer=6', '--n_head=6', '--n_embd=384', '--block_size=256', '--batch_size=64',
      '--gradient_accumulation_steps=1', '--dropout=0.2', '--vocab_size=65', '--gpu=rtx3060'],
  },
  {
    query: '?dtype=float32&batch_size=4&compile=False&gpu=a6000',
    args: ['--dtype=float32', '--batch_size=4', '--compile=False', '--gpu=a6000'],
  },
  {
    query: '?n_embd=576&dtype=float16&batch_size=16&gradient_accumulation_steps=32&compile=False&attention=manual&allocator=expandable_segments&gpu=rtx4070',
    args: ['--n_embd=576', '--dtype=float16', '--batch_size=16', '--gradient_accumulation_steps=32',
      '--compile=False', '--attention=manual', '--allocator=expandable_segments', '--gpu=rtx4070'],
  },
];

export const tests = {
  async 'page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES);
  },

  async 'keyboard on a slider updates the bar, the numbers and the URL'(ctx) {
    const page = await open(ctx, '?gpu=rtx3060');
    const before = await hooks(page);
    const historyBefore = await page.evaluate(() => history.length);
    const slider = page.locator('input[type=range][name=batch_size]');
    await slider.focus();
    await page.keyboard.press('ArrowRight');
    await waitForTotalChange(page, before.total);
    const after = await hooks(page);
    assert.ok(after.total > before.total, 'a larger batch needs more memory');
    assert.equal(await page.inputValue('input[type=text][name=batch_size]'), '16');
    assert.equal(after.effectiveBatch, 16 * 40);
    await page.waitForFunction((re) => new RegExp(re).test(location.href), 'batch_size=16'); // the URL follows once input pauses
    assert.match(await page.url(), /batch_size=16/);
    const j = cli(ctx, ['--batch_size=16', '--gpu=rtx3060']);
    assert.equal(after.total, j.peak_bytes.overall);
    // replace, never push: typing does not grow the history
    assert.equal(await page.evaluate(() => history.length), historyBefore);
    await close(page);
  },

  async 'typing a value applies it; an invalid one is named and not applied'(ctx) {
    const page = await open(ctx);
    const field = page.locator('input[type=text][name=n_layer]');
    await field.fill('24');
    await page.waitForFunction(() => location.search.includes('n_layer=24'));
    const ok = await hooks(page);
    assert.equal(ok.total, cli(ctx, ['--n_layer=24', '--gpu=rtx3060']).peak_bytes.overall);
    await field.fill('0');
    await page.waitForSelector('#error-n_layer:not(:empty)');
    assert.match(await page.textContent('#error-n_layer'), /n_layer=0 is out of range/);
    assert.equal((await hooks(page)).total, ok.total, 'the invalid value was not applied');
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    // leaving the field keeps the refused text, its reason and the value still in use
    await field.press('Tab');
    assert.equal(await field.inputValue(), '0');
    assert.match(await page.textContent('#error-n_layer'), /n_layer=0 is out of range/);
    assert.match(await page.textContent('[data-testid=kept-n_layer]'), /still uses 24/);
    await page.locator('input[type=text][name=n_head]').fill('7');
    assert.match(await page.textContent('#error-n_head'), /divisible by n_head=7/);
    await close(page);
  },

  async 'DDP: per-GPU bar and time equal the CLI; the divisibility rule is named'(ctx) {
    const page = await open(ctx, '?gpu=rtx3090&batch_size=16&gradient_accumulation_steps=8&world_size=2&link_gbps=32');
    const h = await hooks(page);
    const j = cli(ctx, ['--gpu=rtx3090', '--batch_size=16', '--gradient_accumulation_steps=8', '--nproc_per_node=2', '--link-gbps=32']);
    assert.equal(h.total, j.peak_bytes.overall, 'the bar is the judged rank\'s');
    assert.equal(h.fits, j.verdict.fits);
    // the rank that needs more is shown (here rank 1: its cache holds no eval blocks), and what each reserves
    assert.equal(j.ddp.worst_rank, 1);
    assert.match(await page.textContent('[data-testid="ddp-worst"]'), /Rank 1 holds the most/);
    const gib = (b) => (b / 2 ** 30).toFixed(2).replace('.', '\\.') + ' GiB';
    const [r0, r1] = j.ddp.per_rank;
    assert.match(await page.textContent('[data-testid="ddp-reserved"]'), new RegExp(
      `Reserved per GPU: rank 0 ${gib(r0.reserved_released_bytes)} \\(up to ${gib(r0.reserved_held_bytes)}\\), ` +
      `other ranks ${gib(r1.reserved_released_bytes)} \\(up to ${gib(r1.reserved_held_bytes)}\\)`));
    assert.match(await page.textContent('[data-testid="ddp-accum"]'), /4 micro-steps per GPU \(8 ÷ 2\)/);
    const speedup = Number(await page.getAttribute('[data-testid="ddp-time"]', 'data-speedup'));
    assert.ok(Math.abs(speedup - j.ddp.speedup) < 1e-3, `${speedup} vs ${j.ddp.speedup}`);
    assert.equal(await page.inputValue('[data-testid="link"]'), 'pcie4');
    // 5 steps cannot be shared by 2 processes: named, not applied
    await page.locator('input[type=text][name=gradient_accumulation_steps]').fill('5');
    await page.waitForSelector('#error-gradient_accumulation_steps:not(:empty)');
    assert.match(await page.textContent('#error-gradient_accumulation_steps'), /gradient_accumulation_steps=5 must be divisible by world_size=2/);
    assert.equal((await hooks(page)).total, h.total);
    // one GPU: no DDP section, no link
    await page.locator('input[type=text][name=world_size]').fill('1');
    await page.waitForSelector('[data-testid="ddp"]', { state: 'detached' });
    assert.equal(await page.locator('[data-testid="link"]').count(), 0);
    await close(page);
  },

  async 'picking a card changes the verdict'(ctx) {
    const page = await open(ctx, '?batch_size=16&compile=False');
    assert.equal((await hooks(page)).risk, 'oom');
    await page.selectOption('select[name=gpu]', 'a6000');
    await page.waitForFunction(() => document.querySelector('[data-testid=verdict]').dataset.fits === 'true');
    await page.waitForFunction((re) => new RegExp(re).test(location.href), 'gpu=a6000'); // the URL follows once input pauses
    assert.match(await page.url(), /gpu=a6000/);
    await page.selectOption('select[name=gpu]', 'custom');
    await page.locator('input[name=vram_gib]').fill('40');
    await page.locator('input[name=vram_gib]').press('Enter');
    await page.locator('input[name=other_gib]').fill('30');
    await page.locator('input[name=other_gib]').press('Tab');
    await page.waitForFunction(() => document.querySelector('[data-testid=verdict]').dataset.fits === 'false');
    await close(page);
  },

  async 'a reload restores the state'(ctx) {
    const page = await open(ctx);
    await page.locator('input[type=text][name=block_size]').fill('512');
    await page.locator('input[name=compile]').uncheck();
    await page.selectOption('select[name=dtype]', 'float16');
    await page.waitForFunction(() => location.search.includes('dtype=float16'));
    const before = await hooks(page);
    await page.reload();
    await page.waitForSelector('[data-testid="total"]');
    assert.deepEqual(await hooks(page), before);
    assert.equal(await page.inputValue('input[type=text][name=block_size]'), '512');
    assert.equal(await page.isChecked('input[name=compile]'), false);
    await page.waitForFunction((re) => new RegExp(re).test(location.href), 'compile=False'); // the URL follows once input pauses
    assert.match(await page.url(), /compile=False/);
    await close(page);
  },

  async 'a bad query falls back to defaults with a notice naming it'(ctx) {
    const page = await open(ctx, '?batch_size=-4&dtype=fp8&n_layer=1e6&foo=bar&gpu=voodoo&dropout=NaN');
    const notice = await page.textContent('[data-testid=notice]');
    for (const key of ['batch_size', 'dtype', 'n_layer', 'foo', 'gpu', 'dropout']) {
      assert.ok(notice.includes(key), `notice names ${key}: ${notice}`);
    }
    const h = await hooks(page);
    assert.equal(h.total, cli(ctx, ['--gpu=rtx3060']).peak_bytes.overall, 'defaults used');
    await close(page);
  },

  async 'hovering or focusing a segment explains it with its formula'(ctx) {
    const page = await open(ctx, '?compile=False&batch_size=8');
    await page.focus('[data-testid=segment-activations]');
    const text = await page.textContent('[data-testid=segment-details]');
    assert.match(text, /saved block activations/);
    assert.match(text, /12·8·1024·\(36·768\+16\)/);
    await page.hover('[data-testid=segment-logits]');
    assert.match(await page.textContent('[data-testid=segment-details]'), /fp32 copy for nll_loss/);
    await close(page);
  },

  async 'no accessibility violations (axe-core, WCAG 2 A/AA), light and dark'(ctx) {
    // the page's CSP forbids injected scripts: bypass it for the checker only
    const context = await ctx.browser.newContext({ bypassCSP: true });
    for (const theme of ['light', 'dark']) {
      const page = await open(ctx, '?batch_size=16&compile=False', { context });
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
      await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
      const result = await page.evaluate(() => axe.run(document, { runOnly: ['wcag2a', 'wcag2aa'] }));
      const v = result.violations.map((x) => `${x.id}: ${x.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
      assert.deepEqual(v, [], `${theme}: ${v.join('; ')}`);
      await close(page);
    }
    await context.close();
  },

  async 'on a phone, the peak and the verdict stay in view while a slider far below moves'(ctx) {
    const page = await open(ctx, '?batch_size=8&compile=False&gpu=rtx3060', { viewport: { width: 390, height: 844 } });
    const inView = () => page.evaluate(() => {
      const r = document.querySelector('[data-testid=sticky-summary]').getBoundingClientRect();
      return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;
    });
    assert.ok(await inView(), 'the first screen shows the answer');
    const before = await hooks(page);
    // the slider is far below the answer on a phone
    await page.evaluate(() => document.querySelector('input[type=range][name=batch_size]').scrollIntoView({ block: 'center' }));
    assert.ok(await page.evaluate(() => document.querySelector('[data-testid=verdict]').getBoundingClientRect().bottom < 0),
      'the verdict panel itself has scrolled away');
    await page.locator('input[type=range][name=batch_size]').focus();
    await page.keyboard.press('ArrowRight');
    await waitForTotalChange(page, before.total);
    assert.ok(await inView(), 'the summary stays at the top');
    const after = await hooks(page);
    // it leads with what the verdict weighs: the allocated peak and the allocator's reserve (the
    // hatched part of the big bar), so "Out of memory" never sits beside a number under the card
    const cache = Number(await page.getAttribute('[data-testid=segment-cache]', 'data-bytes'));
    assert.ok(cache > 0, 'this run has an allocator reserve');
    assert.equal(Number(await page.getAttribute('[data-testid=sticky-total]', 'data-bytes')), after.total + cache);
    assert.match(await page.textContent('[data-testid=sticky-summary]'), /Out of memory/);
    await shot(ctx, page, 'phone-390-slider.png');
    await close(page);
  },

  async 'the memory chart on a phone: a GiB axis, numbered stretches named below, no label over another'(ctx) {
    for (const query of ['?batch_size=16&compile=False&gpu=rtx3060', '?lang=ja&program=nanochat&depth=12&device_batch_size=8&gpu=rtx4090',
      '?lang=de&batch_size=8&gpu=rtx3060']) {
      const page = await open(ctx, query, { viewport: { width: 390, height: 844 } });
      await page.waitForSelector('[data-testid=timeline]', { state: 'attached' });
      const chart = await page.evaluate(() => {
        const fig = document.querySelector('[data-testid=timeline]');
        fig.style.contentVisibility = 'visible';
        fig.scrollIntoView();
        const box = fig.getBoundingClientRect();
        const labels = [...fig.querySelectorAll('.chart__overlay text')].map((t) => {
          const r = t.getBoundingClientRect();
          return { text: t.textContent, tick: t.classList.contains('chart__tick'), left: r.left, right: r.right, top: r.top, bottom: r.bottom };
        });
        return {
          ticks: labels.filter((l) => l.tick && / GiB$/.test(l.text)).map((l) => l.text),
          labels,
          inside: labels.every((l) => l.left >= box.left - 1 && l.right <= box.right + 1),
          phases: fig.querySelector('[data-testid=chart-phases]').textContent,
        };
      });
      assert.ok(chart.ticks.length >= 2, `${query}: y ticks ${JSON.stringify(chart.ticks)}`);
      assert.ok(chart.inside, `${query}: every label inside the chart`);
      for (let i = 0; i < chart.labels.length; i += 1) {
        for (let j = i + 1; j < chart.labels.length; j += 1) {
          const [a, b] = [chart.labels[i], chart.labels[j]];
          const overlap = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
          assert.ok(!overlap, `${query}: "${a.text}" overlaps "${b.text}"`);
        }
      }
      assert.match(chart.phases, /^1/, `${query}: the stretches are named under the chart`);
      await close(page);
    }
  },

  async 'screenshots: default, out of memory, phone width, dark'(ctx) {
    const shots = [
      ['default.png', '', { width: 1280, height: 900 }],
      ['oom.png', '?batch_size=32&compile=False&gpu=rtx3060', { width: 1280, height: 900 }],
      ['phone-360.png', '?batch_size=16', { width: 360, height: 780 }],
    ];
    for (const [file, query, viewport] of shots) {
      const page = await open(ctx, query, { viewport });
      await shot(ctx, page, file);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      assert.equal(overflow, false, `${file}: no horizontal overflow`);
      await close(page);
    }
    const page = await open(ctx, '?batch_size=8&compile=False');
    await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'dark'));
    await shot(ctx, page, 'dark.png');
    await close(page);
  },
};

/**
 * Seen in WebKitGTK 2.50.6 only (clean-clone CI, 2026-11-26; the same suite passed in WebKit here just
 * before): on the 360 px page the "other" component was written "31691265003679076502291559219 2.00 GiB"
 * (docs/webkit-garbled-number.png), and the details panel took "other" for the largest component (it shows
 * the largest until one is picked), so the byte count itself was likely wrong, not only its text (the bar
 * segment looked right); the long number made the page overflow. The same wasm gives the right answer in
 * Chromium and Firefox, and safe Rust has no undefined behaviour, so a JavaScriptCore miscompilation is the
 * likeliest cause (the intermittent panic in robustness.mjs may be the same).
 * Not yet reduced to a case to report; the test runs and says how it went.
 */
export const knownFailures = {
  webkit: {
    'screenshots: default, out of memory, phone width, dark':
      'WebKitGTK intermittently formats a byte count as a garbled 30-digit number (the page then overflows at 360 px)',
  },
};
