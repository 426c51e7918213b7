// Shared by the dashboard tests: a Postlane started on an EMPTY database the way `npm start`
// starts (so its first-start set-up link and key are announced), with a loopback DNS server and
// an SMTP sink as every recipient's MX; and browser helpers: screenshots kept as artifacts at
// both widths, the axe-core scan, a signed-in page.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { apiClient, freePort, freshDatabase, testConfig, type ApiClient } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { startPostlane, type RunningPostlane } from '../../src/server.ts';
import { buildDashboard, DIST } from '../../dashboard/build.ts';

export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'dashboard');
export const WIDTHS = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;

export interface DashboardApp {
  url: string;
  running: RunningPostlane;
  dns: TestDnsServer;
  sink: SmtpSink;
  /** The first start's one-time set-up link, as printed. */
  setupLink: string;
  /** The `default` workspace's key, as printed. */
  defaultKey: string;
  api: ApiClient;
  close(): Promise<void>;
}

/** The built dashboard (npm ci builds it; a fresh checkout without it gets it built here). */
export async function ensureDashboardBuilt(): Promise<void> {
  if (!existsSync(join(DIST, 'index.html'))) await buildDashboard({ quiet: true });
}

/** `env` overrides the config (a test of the local-names warnings sets PUBLIC_URL and MAIL_HOSTNAME). */
export async function startDashboardApp(env: Record<string, string> = {}): Promise<DashboardApp> {
  await ensureDashboardBuilt();
  const dns = await startDnsServer();
  const sink = await startSmtpSink({});
  const database = await freshDatabase();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = testConfig(database, {
    HTTP_PORT: String(port),
    PUBLIC_URL: url,
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    MX_PORT: String(sink.port),
    ALLOW_PRIVATE_URLS: 'true',
    MAIL_HOSTNAME: 'mail.postlane.test',
    ...env,
  });
  let setupLink = '';
  let defaultKey = '';
  const running = await startPostlane(config, {
    schema: database.schema,
    logger: pino({ level: config.logLevel }),
    jobPollMs: 50,
    announceDefaultKey: (key) => (defaultKey = key),
    announceSetupLink: (link) => (setupLink = link),
  });
  assert.match(setupLink, /\/dashboard\/accept#/);
  // Every address at example.org is delivered to the sink.
  dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  dns.set('mx.example.org', 'A', ['127.0.0.1']);
  return {
    url,
    running,
    dns,
    sink,
    setupLink,
    defaultKey,
    api: apiClient(url, defaultKey),
    async close() {
      await running.close();
      await database.drop();
      await dns.close();
      await sink.close();
    },
  };
}

export async function newContext(browser: Browser, size: { width: number; height: number } = WIDTHS.desktop): Promise<BrowserContext> {
  return browser.newContext({ viewport: size, permissions: ['clipboard-read', 'clipboard-write'] });
}

/** The first admin sets a password through the first start's link and lands on the overview. */
export async function signInFirstAdmin(page: Page, app: DashboardApp, email = 'marketer@acme.test'): Promise<void> {
  await page.goto(app.setupLink);
  await page.getByLabel('Your email').fill(email);
  await page.getByLabel('Choose a password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe-core on the page; fails on any violation, whatever its impact. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol, so the page's CSP (script-src 'self') allows it.
  const violations = await page.evaluate(async (source) => {
    if (!(window as any).axe) (0, eval)(source);
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map(
      (v: any) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n: any) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
  }, axeSource);
  assert.deepEqual(violations, [], `axe on ${name}`);
}

/** Saves a full-page screenshot of the page at both widths, in light and dark mode, as test
 *  artifacts, and runs axe on each (any violation, whatever its impact, fails). */
export async function captureAtBothWidths(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const original = page.viewportSize() ?? WIDTHS.desktop;
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [label, size] of Object.entries(WIDTHS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(50);
      await assertAccessible(page, `${name} at ${size.width} px, ${scheme}`);
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${label}${scheme === 'dark' ? '-dark' : ''}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(original);
}

/** Waits until no loading indicator is left on the page. */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);
}
