// Bring your own run: a real run's memory snapshot (data/snapshots) chosen or dropped on the page
// is read in the page's worker and explained with the CLI's numbers; a file that is not a
// snapshot is named and the page goes on; the page's own run comes out as a snapshot that reads
// back as the page's prediction.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { open, close, hooks, cli, shot, waitForTotalChange } from '../lib/page.mjs';

const fixture = (ctx, name) => path.join(ctx.root, 'data', 'snapshots', `${name}.pickle.gz`);

/** Scrolls the panel into view (below the fold it is not rendered: content-visibility). */
async function reach(page) {
  await page.evaluate(() => document.querySelector('[data-testid=snapshot]').scrollIntoView());
}

/**
 * Gives the page a file as a user does, made in the page from its bytes (the same in every
 * engine's driver): chosen with the panel's file picker, or (`how` = 'drop') dropped on the panel
 * as a file dragged from the desktop lands.
 */
async function give(page, name, bytes, how = 'choose') {
  await reach(page);
  await page.evaluate(({ name, b64, how }) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([data], name));
    if (how === 'drop') {
      const panel = document.querySelector('[data-testid=snapshot]');
      panel.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    } else {
      const input = document.querySelector('[data-testid=snapshot-file]');
      input.files = dt.files;
      input.dispatchEvent(new Event('change', { bubbles: true }));
    }
  }, { name, b64: Buffer.from(bytes).toString('base64'), how });
}

/** A file of data/snapshots given to the page. */
async function giveFixture(ctx, page, name, how) {
  await give(page, `${name}.pickle.gz`, readFileSync(fixture(ctx, name)), how);
}

/** A screenshot of the panel (Chromium's own element shot; the other drivers take the page). */
async function shotPanel(ctx, page, file) {
  if (ctx.engine === 'chromium') {
    await page.locator('[data-testid=snapshot]').screenshot({ path: path.join(ctx.shots, file) });
  } else {
    await shot(ctx, page, file);
  }
}

/** The explanation's peak (its bytes), once the worker has answered. */
async function explainedPeak(page) {
  await page.waitForSelector('[data-testid=snapshot-peak]', { timeout: 30000 });
  return Number(await page.getAttribute('[data-testid=snapshot-peak]', 'data-bytes'));
}

export const tests = {
  async 'a chosen snapshot is explained with the numbers the CLI reads from it'(ctx) {
    const page = await open(ctx, '?batch_size=12&compile=False&gpu=h200');
    const file = fixture(ctx, 'snap_nanogpt_b12_cap6');
    await giveFixture(ctx, page, 'snap_nanogpt_b12_cap6');
    const peak = await explainedPeak(page);
    const j = cli(ctx, ['--snapshot', file, '--gpu', 'h200']).snapshot;
    assert.equal(peak, j.peak_allocated_bytes);
    assert.equal(Number(await page.getAttribute('[data-testid=snapshot-reserved]', 'data-bytes')), j.peak_reserved_bytes);
    // the failed request, what was live then, the cache per segment, the chart
    assert.match(await page.textContent('[data-testid=snapshot-oom]'), /tried to allocate 2\.30 GiB/);
    assert.match(await page.textContent('[data-testid=snapshot-live-oom]'), /model\.py:186 in forward/);
    const segments = await page.locator('[data-testid=snapshot-cache] tbody tr').count();
    assert.ok(segments >= 8, `${segments} rows of segments`);
    assert.equal(await page.locator('[data-testid=snapshot-chart] polyline').count(), 2);
    // recognised as train.py: beside the page's prediction, the largest difference named
    assert.match(await page.textContent('[data-testid=snapshot-compare]'), /Recorded from train\.py/);
    await page.waitForSelector('[data-testid=snapshot-largest]');
    await shotPanel(ctx, page, 'snapshot-desktop.png');
    // the comparison follows the settings: a smaller batch, a smaller prediction beside the run
    const predicted = async () => page.evaluate(() =>
      document.querySelector('[data-testid=snapshot-compare] tbody tr td:nth-child(3)')?.textContent);
    const before = await predicted();
    await page.evaluate(() => document.querySelector('input[type=range][name=batch_size]').scrollIntoView());
    await page.locator('input[type=range][name=batch_size]').focus();
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction((b) =>
      document.querySelector('[data-testid=snapshot-compare] tbody tr td:nth-child(3)')?.textContent !== b, before);
    // and the language: the page built anew in German keeps the reading, in German
    await page.selectOption('[data-testid="lang"]', 'de');
    await page.waitForFunction(() => /Spitze belegt/.test(document.querySelector('[data-testid=snapshot-explained]')?.textContent ?? ''));
    assert.equal(Number(await page.getAttribute('[data-testid=snapshot-peak]', 'data-bytes')), j.peak_allocated_bytes);
    await close(page);
  },

  async 'a dropped snapshot of another script says which program to compare it with, on a phone too'(ctx) {
    const page = await open(ctx, '', { viewport: { width: 360, height: 740 } });
    await giveFixture(ctx, page, 'snap_bng_l4', 'drop');
    const j = cli(ctx, ['--snapshot', fixture(ctx, 'snap_bng_l4')]).snapshot;
    assert.equal(await explainedPeak(page), j.peak_allocated_bytes);
    assert.match(await page.textContent('[data-testid=snapshot-compare]'), /train_gpt2\.py.*build-nanogpt/);
    // nothing of the explanation is wider than the phone
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
    await shotPanel(ctx, page, 'snapshot-phone.png');
    await close(page);
  },

  async 'a file that is not a snapshot is named, and the page keeps working'(ctx) {
    const page = await open(ctx, '?batch_size=8&compile=False');
    const status = '[data-testid=snapshot-status]';
    const said = async (re) => {
      await page.waitForFunction((r) => new RegExp(r).test(document.querySelector('[data-testid=snapshot-status]').textContent), re.source, { timeout: 30000 });
      return page.textContent(status);
    };
    await give(page, 'notes.txt', Buffer.from('batch_size = 8\n'));
    assert.match(await said(/notes\.txt is not a snapshot/), /not a pickle/);
    // a snapshot cut short in the middle
    const whole = readFileSync(fixture(ctx, 'snap_nanogpt_char'));
    await give(page, 'cut.pickle.gz', whole.subarray(0, whole.length >> 1), 'drop');
    await said(/cut\.pickle\.gz is not a snapshot/);
    // a pickle of something else: {'a': 1}
    await give(page, 'other.pickle', Buffer.from('80049506000000000000007d948c0161944b01732e', 'hex'));
    assert.match(await said(/other\.pickle is not a snapshot/), /not a memory snapshot/);
    // too large for a browser: a 200 MiB file refused before it is read, and a gzip file whose
    // pickle would be 200 MiB before it is inflated; the command line is named for both
    await reach(page);
    await page.evaluate(() => {
      const mib = new Blob([new Uint8Array(1 << 20)]);
      const dt = new DataTransfer();
      dt.items.add(new File(Array(200).fill(mib), 'huge.pickle'));
      const input = document.querySelector('[data-testid=snapshot-file]');
      input.files = dt.files;
      input.dispatchEvent(new Event('change', { bubbles: true }));
    });
    assert.match(await said(/huge\.pickle is 200\.0 MiB/), /vramfit --snapshot huge\.pickle/);
    await give(page, 'bomb.pickle.gz', gzipSync(Buffer.alloc(200 << 20)), 'drop');
    assert.match(await said(/bomb\.pickle\.gz is 200\.0 MiB/), /128\.0 MiB/);
    assert.equal(await page.locator('[data-testid=snapshot-peak]').count(), 0, 'nothing explained');
    // the calculator answers as before, and a good file after the bad ones is read
    const before = (await hooks(page)).total;
    const slider = page.locator('input[type=range][name=batch_size]');
    await slider.focus();
    await page.keyboard.press('ArrowLeft');
    await waitForTotalChange(page, before);
    await giveFixture(ctx, page, 'snap_nanogpt_char');
    assert.equal(await explainedPeak(page), cli(ctx, ['--snapshot', fixture(ctx, 'snap_nanogpt_char')]).snapshot.peak_allocated_bytes);
    await close(page);
  },

  async "the page's run downloaded as a snapshot reads back as the page's prediction"(ctx) {
    const page = await open(ctx, '?batch_size=4&compile=False&gpu=rtx4090');
    const total = (await hooks(page)).total;
    await reach(page);
    // the download as the page hands it to the browser: the link's name and the file's bytes
    // (the blob before it becomes a URL: the page's CSP lets no script fetch a blob: URL)
    await page.evaluate(() => {
      window.__downloads = [];
      const blobs = new Map();
      const create = URL.createObjectURL;
      URL.createObjectURL = (blob) => {
        const url = create.call(URL, blob);
        blobs.set(url, blob);
        return url;
      };
      const click = HTMLAnchorElement.prototype.click;
      HTMLAnchorElement.prototype.click = function () {
        if (!this.download) return click.call(this);
        window.__downloads.push(blobs.get(this.href).arrayBuffer().then((b) => ({
          name: this.download,
          b64: btoa(Array.from(new Uint8Array(b), (c) => String.fromCharCode(c)).join('')),
        })));
      };
    });
    await page.click('[data-testid=snapshot-export]');
    await page.waitForFunction(() => window.__downloads.length === 1);
    const download = await page.evaluate(() => window.__downloads[0]);
    assert.equal(download.name, 'vramfit-nanogpt.pickle');
    const bytes = Buffer.from(download.b64, 'base64');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'vramfit-export-')), download.name);
    writeFileSync(file, bytes);
    assert.equal(cli(ctx, ['--snapshot', file]).snapshot.peak_allocated_bytes, total);
    // and read back on the page itself
    await give(page, download.name, bytes);
    assert.equal(await explainedPeak(page), total);
    await close(page);
  },
};
