// The dashboard in real Chromium (Debian's chromium through playwright-core), signed in:
// - the initial script: what index.html loads before any page asks for more (the entry and the
//   chunks it imports statically), gzipped as served; editors, charts and the automation canvas
//   come later, only on their pages (dashboard/build.ts);
// - every page's time until usable, measured in the page from the navigation's start: its
//   heading there, nothing loading, its content drawn. Cold (a fresh browser profile: nothing
//   cached) and warm (a reload: fingerprinted assets from the cache), BENCH_DASHBOARD_LOADS loads
//   each (default 10), on a workspace with a little data (contacts, an audience, templates).
//   Aims (docs/dashboard.md): initial script under 120 kB gzipped, p95 under 500 ms.
// Postlane runs in a child process (role all, SQLite unless BENCH_DATABASE_URL).
import type { Page } from 'playwright-core';
import type { Scenario } from '../run.ts';
import { startPostlane } from '../lib.ts';
import { launchBrowser } from '../../test/helpers/browser.ts';
import { buildDashboard, DIST } from '../../dashboard/build.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const LOADS = Number(process.env.BENCH_DASHBOARD_LOADS ?? 10);
const PAGES =
  '/,/emails,/domains,/templates,/suppressions,/webhooks,/contacts,/audiences,/campaigns,/automations,/forms,/verification,/dmarc,/events,/event-tracking,/api-keys,/members';
const PATHS = (process.env.BENCH_DASHBOARD_PATHS ?? PAGES).split(',');

interface Load {
  ms: number;
  requests: number;
  scriptBytes: number;
  styleBytes: number;
}

/** Loads `url` and waits until the page is usable; the time comes from the page's own clock. */
async function measure(page: Page, url: string, reload: boolean): Promise<Load> {
  if (reload) await page.reload({ waitUntil: 'commit' });
  else await page.goto(url, { waitUntil: 'commit' });
  const ms = await page.waitForFunction(
    () => {
      const main = document.querySelector('main h1');
      const busy = document.querySelectorAll('.loading, [aria-busy="true"]').length > 0;
      // A page is usable when its heading is there, nothing is loading, and its content is drawn:
      // something besides the header (a table, a chart, an empty state, a form).
      const page = document.querySelector('main .page');
      const drawn = page && page.querySelectorAll('table, canvas, svg, form, p, dl, section').length > 0;
      return main && !busy && drawn ? performance.now() : false;
    },
    undefined,
    { polling: 5, timeout: 30_000 },
  );
  const resources = await page.evaluate(() =>
    (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => ({ name: r.name, bytes: r.transferSize })),
  );
  return {
    ms: (await ms.jsonValue()) as number,
    requests: resources.length + 1,
    scriptBytes: resources.filter((r) => r.name.endsWith('.js')).reduce((sum, r) => sum + r.bytes, 0),
    styleBytes: resources.filter((r) => r.name.endsWith('.css')).reduce((sum, r) => sum + r.bytes, 0),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(values.length * 0.95) - 1)];

/** The entry script and every chunk it imports statically, gzipped at level 9 as the server does. */
function initialScriptBytes(entry: string): { files: number; gzipped: number } {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(DIST, 'assets', file), 'utf8');
    // esbuild's static imports of shared chunks: import{…}from"./chunk-XXXX.js" (dynamic ones are import("…")).
    for (const m of text.matchAll(/(?:^|[;}\s])import\s*(?:[^"'()]*?from\s*)?["']\.\/([\w.-]+\.js)["']/g)) visit(m[1]);
  };
  visit(entry);
  return {
    files: seen.size,
    gzipped: [...seen].reduce((sum, f) => sum + gzipSync(readFileSync(join(DIST, 'assets', f)), { level: 9 }).length, 0),
  };
}

/** A little data, so list pages draw rows: contacts, an audience and templates. */
async function seed(url: string, key: string): Promise<void> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}/v2${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  };
  for (let i = 0; i < 40; i++) await post('/contacts', { email: `reader${i}@example.test`, first_name: `Reader ${i}` });
  await post('/audiences', { name: 'Newsletter' });
  for (let i = 0; i < 3; i++)
    await post('/templates', { name: `Template ${i}`, alias: `template-${i}`, subject: 'Hello {{first_name}}', html: '<p>Hello</p>' });
}

export const scenario: Scenario = {
  name: 'dashboard',
  description: `the dashboard in Chromium, signed in: the initial script's gzipped size, and each page's time until usable, cold (nothing cached) and warm (reload), ${LOADS} loads each of ${PATHS.length} pages`,
  async run() {
    const built = await buildDashboard({ quiet: true });
    const initial = initialScriptBytes(built.js);
    const postlane = await startPostlane();
    const browser = await launchBrowser();
    try {
      // The first admin accepts the first start's link and is signed in (the session cookie).
      const token = /\/dashboard\/accept#(\S+)/.exec(postlane.output())?.[1];
      if (!token) throw new Error(`no set-up link printed:\n${postlane.output()}`);
      const accepted = await fetch(`${postlane.url}/auth/invitations/${token}/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'bench@postlane.test', password: 'a long bench password' }),
      });
      if (!accepted.ok) throw new Error(`accept: ${accepted.status} ${await accepted.text()}`);
      const cookie = /postlane_session=([^;]+)/.exec(accepted.headers.get('set-cookie') ?? '')?.[1];
      if (!cookie) throw new Error('no session cookie');

      const key = /(secret_[A-Za-z0-9_]+)/.exec(postlane.output())?.[1];
      if (!key) throw new Error('no API key printed at first start');
      await seed(postlane.url, key);

      const lines: string[] = [
        `initial script: ${(initial.gzipped / 1024).toFixed(1)} KiB gzipped in ${initial.files} file(s) (aim: under 120 kB)`,
      ];
      const all: number[] = [];
      for (const path of PATHS) {
        const url = `${postlane.url}/dashboard${path === '/' ? '/' : path}`;
        const cold: Load[] = [];
        const warm: Load[] = [];
        for (let i = 0; i < LOADS; i++) {
          const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
          await context.addCookies([{ name: 'postlane_session', value: cookie, url: postlane.url }]);
          const page = await context.newPage();
          cold.push(await measure(page, url, false));
          warm.push(await measure(page, url, true));
          await context.close();
        }
        all.push(...cold.map((l) => l.ms), ...warm.map((l) => l.ms));
        const describe = (label: string, loads: Load[]) =>
          `${`${path} ${label}`.padEnd(26)} median ${median(loads.map((l) => l.ms))
            .toFixed(0)
            .padStart(5)} ms   p95 ${p95(loads.map((l) => l.ms))
            .toFixed(0)
            .padStart(5)} ms   ` +
          `${loads[0].requests} requests   script ${(loads[0].scriptBytes / 1024).toFixed(1)} KiB, styles ${(loads[0].styleBytes / 1024).toFixed(1)} KiB over the wire`;
        lines.push(describe('cold', cold), describe('warm', warm));
      }
      lines.push(
        `every page, cold and warm: p95 ${p95(all).toFixed(0)} ms, worst ${Math.max(...all).toFixed(0)} ms (aim: p95 under 500 ms on loopback)`,
      );
      return { name: this.name, lines };
    } catch (error) {
      throw new Error(`${(error as Error).message}\npostlane output:\n${postlane.output().slice(-4000)}`);
    } finally {
      await browser.close();
      await postlane.stop();
    }
  },
};
