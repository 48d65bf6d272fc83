/**
 * Headless Chromium for browser tests: Debian's `chromium` (scripts/ensure-chromium.sh installs it),
 * driven by playwright-core, which ships no browser of its own. `CHROMIUM_PATH` overrides the binary.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for a closed network and a machine without GPU or user namespaces. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless Chromium (playwright gives it a fresh temporary profile, removed on close). */
export function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: run scripts/ensure-chromium.sh (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/** What went wrong inside a page: uncaught exceptions and console errors, collected as they happen. */
export interface PageProblems {
  errors: string[];
  /** Throws if anything was collected. */
  assertNone(): void;
}

export function collectPageProblems(page: Page): PageProblems {
  const errors: string[] = [];
  page.on('pageerror', (err: Error) => errors.push(`pageerror: ${err.stack ?? err.message}`));
  page.on('console', (msg: ConsoleMessage) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()} (${msg.location().url}:${msg.location().lineNumber})`);
  });
  page.on('requestfailed', (req) => {
    // An event stream cut off by the page's own navigation or close is not a problem.
    if (req.failure()?.errorText === 'net::ERR_ABORTED') return;
    errors.push(`requestfailed: ${req.method()} ${req.url()}: ${req.failure()?.errorText ?? '?'}`);
  });
  return {
    errors,
    assertNone() {
      if (errors.length > 0) throw new Error(`the page reported ${errors.length} problem(s):\n${errors.join('\n')}`);
    },
  };
}

/** Saves a full-page screenshot, creating the directory. */
export async function screenshot(page: Page, path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await page.screenshot({ path, fullPage: true, animations: 'disabled' });
}
