// The plan view: a whole nanochat run script planned for the chosen cards. Its stages' numbers
// equal `vramfit plan`'s, a pasted script is planned for the card picked, the rewritten script
// is copied with one click, and the view is a link like every other.

import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { open, close, shot } from '../lib/page.mjs';

/** `vramfit plan … --json`, the script on standard input (`-`) or `--speedrun`. */
function planCli(ctx, args, input) {
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(ctx.root, process.env.CARGO_TARGET_DIR) : path.join(ctx.root, 'target');
  const bin = path.join(target, 'release', 'vramfit');
  return JSON.parse(execFileSync(bin, ['plan', ...args, '--json'], { encoding: 'utf8', input: input ?? '' }));
}

/** A run script as people paste it: setup lines around the speedrun's four stages, then chat_rl
 * as its docstring launches it and chat_eval on its checkpoint. */
const SCRIPT = `#!/bin/bash
export OMP_NUM_THREADS=1
python -m nanochat.dataset -n 8
torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24 --target-param-data-ratio=8 --device-batch-size=16 --fp8 --run=$WANDB_RUN
torchrun --standalone --nproc_per_node=8 -m scripts.base_eval -- --device-batch-size=16
torchrun --standalone --nproc_per_node=8 -m scripts.chat_sft -- --run=$WANDB_RUN
torchrun --standalone --nproc_per_node=8 -m scripts.chat_eval -- -i sft
torchrun --standalone --nproc_per_node=8 -m scripts.chat_rl -- --run=default
torchrun --standalone --nproc_per_node=8 -m scripts.chat_eval -- -i rl
`;

async function openPlan(ctx, query, viewport) {
  const page = await open(ctx, query, viewport ? { viewport } : undefined);
  await page.click('[data-testid=plan-open]');
  await page.waitForSelector('[data-testid=plan-summary]');
  return page;
}

/** Each stage row's program and planned peak, in order, once the plan worker has answered the
 * latest change (its previous answer stays shown, marked busy, until then). */
async function rows(page) {
  await page.waitForSelector('[data-testid=plan-answer][aria-busy=false]');
  return page.$$eval('[data-testid=plan-stage]', (els) =>
    els.map((e) => ({ program: e.dataset.program, peak: e.dataset.peakBytes })));
}

function assertSameStages(pageRows, json, what) {
  assert.deepEqual(
    pageRows,
    json.stages.map((s) => ({ program: s.program, peak: String(s.peak_bytes) })),
    what,
  );
}

export const tests = {
  async 'the speedrun planned on the page equals vramfit plan, stage by stage'(ctx) {
    for (const [gpu, gpus] of [['rtx4090', 1], ['a100_40', 8], ['rtx3060', 1]]) {
      const page = await openPlan(ctx, `?gpu=${gpu}`);
      if (gpus !== 1) {
        await page.selectOption('[data-testid=plan-gpus]', String(gpus));
        await page.waitForFunction((n) => location.search.includes(`plan_gpus=${n}`), gpus);
      }
      const json = planCli(ctx, ['--speedrun', '--gpu', gpu, '--gpus', String(gpus)]);
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid=plan-stage]').length === n,
        json.stages.length,
      );
      assertSameStages(await rows(page), json, `${gpus} × ${gpu}`);
      assert.equal(await page.textContent('[data-testid=plan-rewritten]'), json.script);
      assert.match(await page.textContent('[data-testid=plan-summary]'), /Every stage fits as planned/);
      await close(page);
    }
  },

  async 'a pasted speedrun.sh is planned for the card picked, and its rewrite copied'(ctx) {
    const page = await openPlan(ctx, '?gpu=rtx4090');
    await page.fill('[data-testid=plan-script]', SCRIPT);
    await page.selectOption('#field-gpu', 'rtx3060');
    // the RTX 3060 is the page's default card: the link no longer names one
    await page.waitForFunction(() => !location.search.includes('gpu=') && location.search.includes('plan_script='));
    const json = planCli(ctx, ['-', '--gpu', 'rtx3060'], SCRIPT);
    await page.waitForFunction(
      (want) => document.querySelector('[data-testid=plan-rewritten]')?.textContent === want,
      json.script,
    );
    assertSameStages(await rows(page), json, 'pasted script on an RTX 3060');
    // every stage has its picture of memory over the run, named for assistive technology
    const pictures = await page.$$eval('[data-testid=plan-stage] svg.plan__spark[role=img]', (els) =>
      els.map((e) => e.getAttribute('aria-label')));
    assert.equal(pictures.length, json.stages.length);
    assert.ok(pictures.every((l) => /GiB/.test(l)), pictures.join(' | '));
    const rewritten = await page.textContent('[data-testid=plan-rewritten]');
    // the setup lines are kept; the model that fits a 12 GB card is said to be another one
    assert.ok(rewritten.startsWith('#!/bin/bash\nexport OMP_NUM_THREADS=1\npython -m nanochat.dataset -n 8\n'));
    assert.match(rewritten, /a different, smaller model/);
    if (ctx.can('clipboard', 'the copy button fills the clipboard')) {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.click('[data-testid=plan-copy]');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), json.script);
    }
    // the link opens the same plan
    const url = page.url();
    const other = await ctx.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const again = await other.newPage();
    await again.goto(url);
    await again.waitForSelector('[data-testid=plan-summary]');
    assert.equal(await again.textContent('[data-testid=plan-rewritten]'), json.script);
    await other.close();
    await shot(ctx, page, 'plan-desktop.png');
    await close(page);
  },

  async 'a script with no stage, or a bad flag, is said plainly and the page keeps working'(ctx) {
    const page = await openPlan(ctx, '?gpu=rtx4090');
    await page.fill('[data-testid=plan-script]', 'echo hello\n');
    await page.waitForFunction(() => /No nanochat stage/.test(document.querySelector('[data-testid=plan-summary]').textContent));
    await page.fill('[data-testid=plan-script]', 'python -m scripts.base_eval --bogus=1\n');
    await page.waitForFunction(() => /unrecognized arguments: --bogus=1/.test(document.querySelector('[data-testid=plan-stage]')?.textContent ?? ''));
    // the verdict names what is wrong, not memory
    assert.match(await page.textContent('[data-testid=plan-summary]'), /Not every stage could be planned/);
    assert.match(await page.getAttribute('[data-testid=plan-summary]', 'class'), /plan__verdict--error/);
    await page.click('[data-testid=plan-speedrun]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=plan-stage]').length === 4);
    await page.click('[data-testid=plan-back]');
    await page.waitForSelector('[data-testid=total]');
    await close(page);
  },

  async 'the plan view on a phone: the answer first, nothing wider than the screen'(ctx) {
    const page = await openPlan(ctx, '?gpu=rtx3060&lang=ja', { width: 390, height: 800 });
    const [summaryTop, inputTop] = await page.evaluate(() => [
      document.querySelector('[data-testid=plan-summary]').getBoundingClientRect().top,
      document.querySelector('[data-testid=plan-script]').getBoundingClientRect().top,
    ]);
    assert.ok(summaryTop < inputTop, 'the verdict comes before the inputs');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    assert.match(await page.textContent('[data-testid=plan-summary]'), /計画どおり/);
    await shot(ctx, page, 'plan-phone-ja.png');
    await close(page);
  },

  async 'the plan is a module of its own: fetched when the plan view first opens, not with the page'(ctx) {
    const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const requests = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    await page.goto(`${ctx.base}/?gpu=rtx4090`);
    await page.waitForSelector('[data-testid="details"]', { state: 'attached' });
    await page.waitForTimeout(300);
    assert.deepEqual(requests.filter((p) => p.includes('/plan/')), [], 'the page alone fetches no plan');
    await page.click('[data-testid=plan-open]');
    await page.waitForSelector('[data-testid=plan-summary]');
    const fetched = requests.filter((p) => p.includes('/plan/'));
    assert.ok(fetched.some((p) => p.endsWith('/plan/worker.js')), fetched.join(' '));
    // the module itself is fetched by the worker: where the engine reports a worker's requests
    // too, it is the module beside the worker's script
    assert.ok(fetched.every((p) => /\/plan\/(worker\.js|vramfit_plan_web(_bg\.wasm|\.js))$/.test(p)), fetched.join(' '));
    assert.equal(await page.evaluate(() => document.documentElement.dataset.panicked ?? null), null);
    await context.close();
  },

  async 'a plan asked for while the last is planned: the answer is the latest, and busy until then'(ctx) {
    const page = await openPlan(ctx, '?gpu=rtx4090');
    // three cards in a row, faster than the worker plans them
    for (const gpu of ['rtx3060', 'h100', 'a100_40']) await page.selectOption('#field-gpu', gpu);
    const json = planCli(ctx, ['--speedrun', '--gpu', 'a100_40']);
    assertSameStages(await rows(page), json, 'the last card asked for');
    assert.equal(await page.textContent('[data-testid=plan-rewritten]'), json.script);
    assert.ok(await page.evaluate(() => document.querySelector('[data-testid=plan-busy]').hidden), 'no longer busy');
    await close(page);
  },

  async 'a plan worker that cannot be fetched is said plainly, and the page keeps working'(ctx) {
    // no service worker, so the refused request is the page's own (as on a first visit that loses
    // the network between the page and the plan view)
    const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
    const page = await context.newPage();
    await context.route(/\/plan\/worker\.js$/, (route) => route.abort());
    await page.goto(`${ctx.base}/?gpu=rtx4090`);
    await page.waitForSelector('[data-testid="details"]', { state: 'attached' });
    await page.click('[data-testid=plan-open]');
    await page.waitForFunction(() => !document.querySelector('[data-testid=plan-failed]')?.hidden);
    assert.match(await page.textContent('[data-testid=plan-failed]'), /vramfit plan/);
    assert.ok(await page.evaluate(() => document.querySelector('[data-testid=plan-busy]').hidden), 'not said to be planning');
    // the view's inputs still work, and so does the page behind it
    await page.selectOption('[data-testid=plan-gpus]', '8');
    await page.waitForFunction(() => location.search.includes('plan_gpus=8'));
    await page.click('[data-testid=plan-back]');
    await page.waitForSelector('[data-testid=total]');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.panicked ?? null), null);
    await context.close();
  },
};

/** What each test needs beyond what every engine's driver does (see lib/suite.mjs). */
export const needs = {
  'the plan is a module of its own: fetched when the plan view first opens, not with the page': ['requests'],
  'a plan worker that cannot be fetched is said plainly, and the page keeps working': ['route', 'block_workers'],
};
