// Debian's Chromium, driven by playwright-core as it is (the specs are written in its API).

import { chromium } from 'playwright-core';

export const ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Chromium can do everything the specs ask. */
export const missing = {};

export async function start() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ARGS,
  });
  return {
    name: 'chromium',
    version: `Chromium ${browser.version()}`,
    browser,
    close: () => browser.close(),
  };
}
