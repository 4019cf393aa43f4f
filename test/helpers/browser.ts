/**
 * A real browser for the dashboard's tests: Debian's Chromium (/usr/bin/chromium; `.ci/run`
 * installs it) driven by playwright-core, one launch per test file. It records every request the
 * page makes to another origin, every console error and uncaught exception, checks a page's
 * accessibility with axe-core (evaluated into the page through the debugging protocol, which the
 * page's Content-Security-Policy does not govern), and saves screenshots under .tmp/screenshots/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/screenshots/', import.meta.url));

/** The flags Chromium needs in a container without a display or a network to call home to. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export interface BrowserRig {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Requests the page made anywhere but `origin`. */
  foreignRequests: string[];
  /** Console errors (a CSP refusal is one) and uncaught exceptions. */
  errors: string[];
  /** Axe's violations of WCAG 2.1 A/AA and its best practices on the page as it is now, as "rule: targets". */
  accessibilityViolations(): Promise<string[]>;
  screenshot(name: string, options?: { fullPage?: boolean }): Promise<string>;
  close(): Promise<void>;
}

export async function openBrowser(origin: string, viewport = { width: 1440, height: 900 }): Promise<BrowserRig> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  const context = await browser.newContext({ viewport, locale: 'en-US', timezoneId: 'Europe/Berlin' });
  // The copy buttons write to the clipboard; the test reads it back.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const foreignRequests: string[] = [];
  const errors: string[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) foreignRequests.push(url);
  });
  // A step that waits on what never comes fails in seconds, not Playwright's default 30.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return {
    browser,
    context,
    page,
    foreignRequests,
    errors,
    async accessibilityViolations() {
      // Expressions as text: they run in the page, whose globals (window, axe) this program does not type.
      if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(axe.source);
      const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
      const result = await page.evaluate<axe.AxeResults>(
        `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(tags)} } })`,
      );
      return result.violations.map(
        (v) => `${v.id} (${v.help}): ${v.nodes.map((n) => `${n.target.join(' ')}`).join('; ')}`,
      );
    },
    async screenshot(name, options = {}) {
      const path = join(SCREENSHOTS, `${name}.png`);
      if (!options.fullPage) {
        await page.screenshot({ path });
        return path;
      }
      // The whole page in a window as tall as it: a full-page capture of the usual window would
      // draw the sticky navigation where the capture happened to scroll to.
      const viewport = page.viewportSize() ?? { width: 1440, height: 900 };
      const height = await page.evaluate<number>('document.documentElement.scrollHeight');
      await page.setViewportSize({ width: viewport.width, height: Math.max(height, viewport.height) });
      await page.screenshot({ path });
      await page.setViewportSize(viewport);
      return path;
    },
    close: () => browser.close(),
  };
}
