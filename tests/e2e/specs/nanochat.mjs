// nanochat's base_train.py on the page: its numbers equal the CLI's, the program choice and its
// own flags drive the bar and the URL, a pasted launch line switches program, and its fixes come
// with a command line to paste.

import assert from 'node:assert/strict';
import path from 'node:path';
import { open, close, hooks, cli, waitForTotalChange, assertSameAsCli, shot } from '../lib/page.mjs';

/** nanochat configs the page and the CLI must agree on, byte for byte. */
const CASES = [
  { query: '?program=nanochat', args: ['--program=nanochat', '--gpu=rtx3060'] },
  {
    query: '?program=nanochat&depth=12&device_batch_size=8&gpu=rtx4090',
    args: ['--program=nanochat', '--depth=12', '--device-batch-size=8', '--gpu=rtx4090'],
  },
  {
    // the shared runs' setting: default allocator, explicit total, short context
    query: '?program=nanochat&depth=8&device_batch_size=8&max_seq_len=1024&window_pattern=SSSL&total_batch_size=16384&allocator=default&gpu=a6000',
    args: ['--program=nanochat', '--depth=8', '--device-batch-size=8', '--max-seq-len=1024',
      '--window-pattern=SSSL', '--total-batch-size=16384', '--allocator=default', '--gpu=a6000'],
  },
  {
    query: '?program=nanochat&depth=26&device_batch_size=16&gpu=h100',
    args: ['--program=nanochat', '--depth=26', '--device-batch-size=16', '--gpu=h100'],
  },
  {
    // --fp8 (nanochat/fp8.py's Float8Linear) on a card with FP8 matmuls
    query: '?program=nanochat&depth=12&device_batch_size=8&fp8=True&gpu=rtx4090',
    args: ['--program=nanochat', '--depth=12', '--device-batch-size=8', '--fp8', '--gpu=rtx4090'],
  },
  {
    // chat_sft.py on a d12 checkpoint, the base run's optimizer state loaded
    query: '?program=nanochat-sft&depth=12&device_batch_size=8&max_seq_len=1024&gpu=rtx3090',
    args: ['--program=nanochat-sft', '--depth=12', '--device-batch-size=8', '--max-seq-len=1024', '--gpu=rtx3090'],
  },
];

export const tests = {
  async 'nanochat page numbers equal the CLI for the same config'(ctx) {
    await assertSameAsCli(ctx, CASES);
  },

  async 'choosing nanochat shows its flags; its slider drives the bar and the URL'(ctx) {
    const page = await open(ctx, '?gpu=rtx4090');
    const before = await hooks(page);
    await page.click('[data-testid="program-nanochat"]');
    await waitForTotalChange(page, before.total);
    await page.waitForFunction(() => location.search.includes('program=nanochat'));
    assert.equal(await page.locator('input[name=batch_size]').count(), 0, "train.py's keys are gone");
    // textContent: the label's words, whatever is laid out
    const label = await page.locator('label[for="field-device_batch_size"]').textContent();
    assert.equal(label.trim(), '--device-batch-size');
    const d20 = await hooks(page);
    assert.equal(d20.total, cli(ctx, ['--program=nanochat', '--gpu=rtx4090']).peak_bytes.overall);
    const slider = page.locator('input[type=range][name=device_batch_size]');
    await slider.focus();
    await page.keyboard.press('ArrowLeft');
    await waitForTotalChange(page, d20.total);
    assert.equal(await page.inputValue('input[type=text][name=device_batch_size]'), '16');
    await page.waitForFunction(() => location.search.includes('device_batch_size=16'));
    const after = await hooks(page);
    const j = cli(ctx, ['--program=nanochat', '--device-batch-size=16', '--gpu=rtx4090']);
    assert.equal(after.total, j.peak_bytes.overall);
    // the script's own assert, named next to the field, and the page keeps its last answer
    await page.locator('input[type=text][name=total_batch_size]').fill('1000');
    await page.waitForSelector('#error-total_batch_size:not(:empty)');
    assert.match(await page.innerText('#error-total_batch_size'), /must be a multiple of/);
    assert.equal((await hooks(page)).total, after.total);
    // back to train.py: its settings are where they were
    await page.click('[data-testid="program-nanogpt"]');
    await page.waitForSelector('input[name=batch_size]');
    assert.equal((await hooks(page)).total, before.total);
    await close(page);
  },

  async 'a pasted base_train launch line switches program and reads its flags'(ctx) {
    const page = await open(ctx, '?gpu=rtx3090');
    const before = await hooks(page);
    await page.fill('textarea[name=paste]',
      'torchrun --standalone --nproc_per_node=1 -m scripts.base_train -- --depth=12 --device-batch-size=16');
    await page.click('[data-testid="paste-read"]');
    await waitForTotalChange(page, before.total);
    await page.waitForFunction(() => location.search.includes('program=nanochat'));
    const h = await hooks(page);
    const j = cli(ctx, ['--program=nanochat', '--depth=12', '--device-batch-size=16', '--gpu=rtx3090']);
    assert.equal(h.total, j.peak_bytes.overall);
    await close(page);
  },

  async 'the speedrun torchrun line (8 GPUs, --fp8) answers per rank, equal to the CLI'(ctx) {
    const page = await open(ctx, '?gpu=h100');
    const before = await hooks(page);
    // runs/speedrun.sh's line, as it stands at nanochat 92d63d4
    await page.fill('textarea[name=paste]',
      'torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24 --target-param-data-ratio=8 --device-batch-size=16 --fp8 --run=$WANDB_RUN');
    await page.click('[data-testid="paste-read"]');
    await waitForTotalChange(page, before.total);
    await page.waitForSelector('[data-testid="nc-ranks"][data-world="8"]');
    assert.equal(await page.inputValue('input[type=text][name=nproc_per_node]'), '8');
    assert.equal(await page.inputValue('select[name=fp8]'), 'True');
    const j = cli(ctx, ['--program=nanochat', '--nproc_per_node=8', '--depth=24', '--target-param-data-ratio=8',
      '--device-batch-size=16', '--fp8', '--gpu=h100']);
    assert.equal((await hooks(page)).total, j.peak_bytes.overall);
    assert.equal(await page.getAttribute('[data-testid="nc-ranks"]', 'data-held'), String(j.ranks.held_steps));
    // the usable marker is the verdict's: NCCL's memory is out of it
    assert.match(await page.innerText('[data-testid="usable-marker"]'), /77\.60 GiB/);
    await close(page);
  },

  async 'iteration 0 as a first run, and as a second run of the same shapes, equal to the CLI'(ctx) {
    const q = '?program=nanochat&depth=2&device_batch_size=1&max_seq_len=256&window_pattern=L&total_batch_size=512&gpu=h200';
    const page = await open(ctx, q);
    const line = page.locator('[data-testid="nc-first-run"]');
    await line.waitFor({ state: 'attached' });
    const j = cli(ctx, ['--program=nanochat', '--depth=2', '--device-batch-size=1', '--max-seq-len=256',
      '--window-pattern=L', '--total-batch-size=512', '--gpu=h200']);
    assert.equal(await line.getAttribute('data-cold'), String(j.peak_bytes.train_first_iter));
    assert.equal(await line.getAttribute('data-warm'), String(j.peak_bytes.train_first_iter_warm));
    assert.ok(j.peak_bytes.train_first_iter_warm < j.peak_bytes.train_first_iter, 'a first run autotunes');
    assert.match(await line.textContent(), /second run/);
    await shot(ctx, page, 'nanochat-first-run.png');
    // chat_sft.py runs the base run's graphs on its cache: no second number
    await page.click('[data-testid="program-nanochat-sft"]');
    await page.waitForFunction(() => location.search.includes('program=nanochat-sft'));
    await page.waitForSelector('[data-testid="nc-first-run"]', { state: 'detached' });
    assert.equal(cli(ctx, ['--program=nanochat-sft', '--gpu=h200']).peak_bytes.train_first_iter_warm, undefined);
    await close(page);
  },

  async '--fp8 on a card without FP8 matmuls: said plainly, and the right card answers'(ctx) {
    const page = await open(ctx, '?program=nanochat&depth=12&device_batch_size=8&fp8=True&gpu=rtx3090');
    await page.waitForSelector('[data-testid="verdict"][data-risk="cannot-run"]');
    assert.match(await page.innerText('[data-testid="verdict"]'), /RTX 3090 24 GB \(SM 8\.6\) has no FP8 matmuls.*Drop --fp8/s);
    await page.selectOption('select[name=gpu]', 'rtx4090');
    await page.waitForSelector('[data-testid="verdict"][data-risk="fits"], [data-testid="verdict"][data-risk="tight"], [data-testid="verdict"][data-risk="oom"]');
    const j = cli(ctx, ['--program=nanochat', '--depth=12', '--device-batch-size=8', '--fp8', '--gpu=rtx4090']);
    assert.equal((await hooks(page)).total, j.peak_bytes.overall);
    await close(page);
  },
  async 'a pasted chat_sft launch line picks chat_sft.py'(ctx) {
    const page = await open(ctx, '?gpu=rtx3090');
    const before = await hooks(page);
    await page.fill('textarea[name=paste]', 'python -m scripts.chat_sft --device-batch-size=4 --load-optimizer=0');
    await page.click('[data-testid="paste-read"]');
    await waitForTotalChange(page, before.total);
    await page.waitForFunction(() => location.search.includes('program=nanochat-sft'));
    assert.equal(await page.inputValue('select[name=load_optimizer]'), '0');
    const h = await hooks(page);
    const j = cli(ctx, ['--program=nanochat-sft', '--device-batch-size=4', '--load-optimizer=0', '--gpu=rtx3090']);
    assert.equal(h.total, j.peak_bytes.overall);
    await close(page);
  },

  async 'depth 20 on a 12 GB card: out of memory, a smaller depth to paste'(ctx) {
    const page = await open(ctx, '?program=nanochat&device_batch_size=1&gpu=rtx3060');
    const h = await hooks(page);
    assert.equal(h.fits, false);
    await page.waitForSelector('[data-testid="top-fix"]');
    const fix = await page.getAttribute('[data-testid="top-fix"]', 'data-fix');
    assert.equal(fix, 'shallower_model');
    const command = await page.textContent('[data-testid="top-fix"] [data-testid="snippet-cli"]');
    const j = cli(ctx, ['--program=nanochat', '--device-batch-size=1', '--gpu=rtx3060']);
    assert.equal(command.trim(), j.fixes[0].command);
    await shot(ctx, page, 'nanochat-oom.png');
    await close(page);
  },

  async 'nanochat on a phone: the answer and its inputs fit 390 px'(ctx) {
    const page = await open(ctx, '?program=nanochat&depth=12&device_batch_size=8&gpu=rtx4070', {
      viewport: { width: 390, height: 844 },
    });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page wider than the screen by ${overflow}px`);
    await shot(ctx, page, 'nanochat-phone.png');
    await close(page);
  },
};
