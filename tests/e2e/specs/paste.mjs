// Pasting: an out-of-memory message sets the card and says what failed; a config file and a
// command line set the calculator; junk changes nothing and says so; the settings come back
// out as config lines and a command line.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { open, close, hooks, cli } from '../lib/page.mjs';

async function paste(page, text) {
  await page.fill('textarea[name=paste]', text);
  await page.click('[data-testid=paste-read]');
  await page.waitForSelector('[data-testid=paste-report] p');
  return page.textContent('[data-testid=paste-report]');
}

export const tests = {
  async 'an OOM message from another card is offered, not applied, and names the tensor that failed'(ctx) {
    const page = await open(ctx, '?batch_size=8&compile=False&gradient_accumulation_steps=2');
    const msg = readFileSync(path.join(ctx.root, 'data', 'oom-messages', 'cap12_s_b8.txt'), 'utf8');
    const before = await hooks(page);
    const report = await paste(page, `Traceback (most recent call last):\n  File "train.py", line 301\n${msg}`);
    assert.match(report, /H200/);
    assert.match(report, /not the RTX 3060 12 GB chosen above/);
    assert.match(report, /1\.54 GiB requested/);
    assert.match(report, /loss gradients in steady training, backward, micro-step 2/);
    assert.match(report, /fails at the same request/);
    // the card is the user's until they switch
    assert.equal(await page.inputValue('select[name=gpu]'), 'rtx3060');
    assert.deepEqual(await hooks(page), before);
    await page.click('[data-testid=paste-use-card]');
    await page.waitForFunction(() => document.querySelector('select[name=gpu]').value === 'h200');
    await page.waitForFunction((re) => new RegExp(re).test(location.href), 'cap_gib=11\\.25'); // the URL follows once input pauses
    assert.match(await page.url(), /cap_gib=11\.25/);
    assert.equal((await hooks(page)).fits, false, 'under the message\'s 11.25 GiB cap it does not fit');
    await close(page);
  },

  async 'on any program\'s page an OOM message names the tensor that failed (gpt_class_finetune.py)'(ctx) {
    const page = await open(ctx, '?program=llms-from-scratch-ch06&CHOOSE_MODEL=gpt2-xl&max_length=1024&batch_size=16&gpu=rtx3060');
    const report = await paste(page,
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.56 GiB. GPU 0 has a total capacity of 11.69 GiB ' +
      'of which 1.12 GiB is free. Including non-PyTorch memory, this process has 10.55 GiB memory in use. Of the ' +
      'allocated memory 9.84 GiB is allocated by PyTorch, and 155.70 MiB is reserved by PyTorch but unallocated.');
    assert.match(report, /working tensors of a block in first iteration, forward/);
    await close(page);
  },

  async 'an OOM message on the default page keeps the card, gives its facts and asks for the settings, with no verdict'(ctx) {
    const page = await open(ctx);
    assert.equal((await hooks(page)).fits, true, 'the defaults fit an RTX 3060');
    const report = await paste(
      page,
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.54 GiB. GPU 0 has a total capacity of 11.76 GiB ' +
        'of which 1.05 GiB is free. Including non-PyTorch memory, this process has 10.64 GiB memory in use. Of the ' +
        'allocated memory 7.81 GiB is allocated by PyTorch, and 2.40 GiB is reserved by PyTorch but unallocated.',
    );
    assert.match(report, /1\.54 GiB requested/);
    assert.match(report, /defaults, not your run's/);
    assert.equal(await page.inputValue('select[name=gpu]'), 'rtx3060', 'the card is kept');
    const verdict = await page.textContent('[data-testid=verdict]');
    assert.doesNotMatch(verdict, /Fits/);
    assert.match(verdict, /Your run: out of memory/);
    assert.match(verdict, /11\.76 GiB total, 1\.54 GiB requested with 7\.81 GiB allocated, 2\.40 GiB reserved but unallocated and 1\.05 GiB free/);
    assert.equal((await hooks(page)).risk, 'awaiting-settings');
    // the run's settings entered: the verdict is the page's again
    await page.fill('input[type=text][name=batch_size]', '8');
    await page.press('input[type=text][name=batch_size]', 'Tab');
    await page.waitForFunction(() => document.querySelector('[data-testid=verdict]').dataset.risk !== 'awaiting-settings');
    assert.notEqual((await hooks(page)).fits, null);
    await close(page);
  },

  async "nanoGPT's config file pasted without train.py keeps nanoGPT and its batch"(ctx) {
    const page = await open(ctx, '?program=build-nanogpt&B=16');
    const report = await paste(page, 'config/train_gpt2.py --batch_size=8');
    assert.match(report, /Command line applied/);
    await page.waitForFunction(() => document.querySelector('[data-testid=program-nanogpt]').checked);
    assert.equal(await page.inputValue('input[type=text][name=batch_size]'), '8');
    assert.equal(await page.inputValue('input[type=text][name=gradient_accumulation_steps]'), '40');
    await close(page);
  },

  async 'a config line edits the settings on the page; one that changes no memory changes nothing'(ctx) {
    const page = await open(ctx, '?batch_size=4&n_layer=6');
    const before = await hooks(page);
    let report = await paste(page, 'learning_rate = 3e-4');
    assert.match(report, /change nothing of the run's memory/);
    assert.deepEqual(await hooks(page), before);
    report = await paste(page, 'block_size = 512');
    assert.match(report, /Config file applied/);
    assert.equal(await page.inputValue('input[type=text][name=batch_size]'), '4', 'the other settings are kept');
    assert.equal(await page.inputValue('input[type=text][name=n_layer]'), '6');
    await close(page);
    const nc = await open(ctx, '?program=nanochat&depth=8');
    await paste(nc, 'learning_rate = 3e-4');
    assert.equal(await nc.isChecked('[data-testid=program-nanochat]'), true, 'no switch to nanoGPT for nothing');
    await close(nc);
  },

  async 'a pasted binary file names a dozen lines at most and answers at once'(ctx) {
    const page = await open(ctx);
    // a megabyte of lines no config has (set directly: typing it would take the driver minutes)
    const garbage = Array.from({ length: 8000 }, (_, i) => `\u0001\u00ff${'\u2603'.repeat(40)} ${i} = 1`).join('\n');
    await page.evaluate((text) => {
      const area = document.querySelector('textarea[name=paste]');
      area.value = text;
      area.dispatchEvent(new Event('input', { bubbles: true }));
    }, `batch_size = 4\n${garbage}`);
    // timed in the page, from the click to the frame after it: what the user waits for, without
    // the driver's own round trips (WebKit's WebDriver added 2-4 s to its ~1.3 s here)
    const ms = await page.evaluate(() => new Promise((ok) => {
      const t = performance.now();
      document.querySelector('[data-testid=paste-read]').click();
      requestAnimationFrame(() => ok(performance.now() - t));
    }));
    await page.waitForSelector('[data-testid=paste-report] p');
    const report = await page.textContent('[data-testid=paste-report]');
    assert.ok(ms < 5000, `${Math.round(ms)} ms`);
    const lines = await page.$$eval('[data-testid=paste-report] p', (ps) => ps.length);
    assert.ok(lines <= 16, `${lines} lines`);
    assert.ok(report.length < 4000, `${report.length} characters`);
    assert.match(report, /more lines not applied/);
    await close(page);
  },

  async 'a config file and a command line set the calculator'(ctx) {
    const page = await open(ctx);
    const report = await paste(page, "# shakespeare\ndataset = 'shakespeare_char'\nbatch_size = 64\nblock_size = 256\nn_layer = 6\nn_head = 6\nn_embd = 384\ndropout = 0.2\ngradient_accumulation_steps = 1\nimport os\n");
    assert.match(report, /Config file applied/);
    assert.match(report, /line 10 not applied/);
    const h = await hooks(page);
    const j = cli(ctx, ['--n_layer=6', '--n_head=6', '--n_embd=384', '--block_size=256', '--batch_size=64',
      '--gradient_accumulation_steps=1', '--dropout=0.2', '--vocab_size=65', '--gpu=rtx3060']);
    assert.equal(h.total, j.peak_bytes.overall);
    assert.equal(await page.inputValue('input[type=text][name=vocab_size]'), '65');
    await paste(page, 'python train.py config/train_gpt2.py --batch_size=8 --compile=False');
    assert.equal(await page.inputValue('input[type=text][name=batch_size]'), '8');
    assert.equal(await page.inputValue('input[type=text][name=gradient_accumulation_steps]'), '40');
    assert.equal(await page.isChecked('input[name=compile]'), false);
    await close(page);
  },

  async 'a torchrun line sets the world size; Back undoes a paste'(ctx) {
    const page = await open(ctx, '?batch_size=16');
    const before = await hooks(page);
    await paste(page, 'torchrun --standalone --nproc_per_node=4 train.py config/train_gpt2.py --batch_size=8');
    assert.equal(await page.inputValue('input[type=text][name=world_size]'), '4');
    assert.match(await page.textContent('[data-testid="ddp-accum"]'), /10 micro-steps per GPU \(40 ÷ 4\)/);
    await page.goBack();
    await page.waitForFunction(() => !document.querySelector('[data-testid="ddp"]'));
    assert.equal(await page.inputValue('input[type=text][name=batch_size]'), '16');
    assert.deepEqual(await hooks(page), before);
    await page.goForward();
    await page.waitForSelector('[data-testid="ddp"]');
    assert.equal(await page.inputValue('input[type=text][name=batch_size]'), '8');
    // one process under torchrun: DDP on one GPU, the box under the GPU count ticked, the CLI's peak
    await paste(page, 'torchrun --standalone --nproc_per_node=1 train.py --batch_size=8');
    await page.waitForSelector('input[name=torchrun]:checked');
    assert.equal(await page.inputValue('input[type=text][name=world_size]'), '1');
    const torchrun = await hooks(page);
    assert.equal(torchrun.total, cli(ctx, ['--batch_size=8', '--torchrun=True', '--gpu=rtx3060']).peak_bytes.overall);
    // untick it: python train.py, no DDP buckets
    await page.uncheck('input[name=torchrun]');
    await page.waitForFunction(
      (t) => Number(document.querySelector('[data-testid="total"]').dataset.bytes) < t, torchrun.total);
    assert.equal((await hooks(page)).total, cli(ctx, ['--batch_size=8', '--gpu=rtx3060']).peak_bytes.overall);
    await close(page);
  },

  async 'a JSON config (or a saved CLI answer) sets its program; bad JSON changes nothing and says why'(ctx) {
    const page = await open(ctx, '?gpu=rtx4090');
    let report = await paste(page, '{"program": "nanochat", "depth": 8, "device_batch_size": 4}');
    assert.match(report, /JSON config applied/);
    await page.waitForFunction(() => location.search.includes('program=nanochat'));
    const nc = cli(ctx, ['--program=nanochat', '--depth=8', '--device-batch-size=4', '--gpu=rtx4090']);
    assert.equal((await hooks(page)).total, nc.peak_bytes.overall);
    // the CLI's own --json answer, pasted back
    const answer = cli(ctx, ['--program=build-nanogpt', '--B=8', '--T=512', '--gpu=rtx4090']);
    report = await paste(page, JSON.stringify(answer, null, 2));
    assert.match(report, /JSON config applied/);
    assert.equal((await hooks(page)).total, answer.peak_bytes.overall);
    const before = await hooks(page);
    for (const [bad, says] of [
      ['{"B": 8,', /could not be read/],
      ['{"B": [8]}', /B=\[…\]/],
      ['{"program": "llama"}', /llama/],
      [`{"a": ${'{"a": '.repeat(3000)}1${'}'.repeat(3001)}`, /a=\{…\}/],
    ]) {
      report = await paste(page, bad);
      assert.match(report, says, bad.slice(0, 40));
      assert.deepEqual(await hooks(page), before, 'a refused JSON paste changes nothing');
    }
    await close(page);
  },

  async 'junk changes nothing and says so'(ctx) {
    const page = await open(ctx);
    const before = await hooks(page);
    for (const junk of ['\u0000\u0001 binary \uffff', 'ValueError: shapes do not match', 'x'.repeat(200000)]) {
      const report = await paste(page, junk);
      assert.match(report, /nothing was changed/);
    }
    assert.deepEqual(await hooks(page), before);
    await close(page);
  },

  async 'the settings come back out as config lines and a command line'(ctx) {
    const page = await open(ctx, '?batch_size=8&gradient_accumulation_steps=64&allocator=expandable_segments');
    assert.equal(await page.textContent('[data-testid=export-config]'), 'batch_size = 8\ngradient_accumulation_steps = 64\n');
    assert.equal(
      await page.textContent('[data-testid=export-cli]'),
      'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py --batch_size=8 --gradient_accumulation_steps=64',
    );
    assert.equal(await page.textContent('[data-testid=export-env]'), 'export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True');
    await close(page);
  },
};
