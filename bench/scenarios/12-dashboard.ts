// The dashboard's first load in real Chromium (Debian's chromium through playwright-core): a
// signed-in user opens /dashboard/ and the overview is usable (its heading, its credits and its
// charts drawn, no loading indicator left). Measured in the page, from the navigation's start, cold
// (a fresh browser profile: nothing cached) and warm (a reload: fingerprinted assets from the
// cache), over BENCH_DASHBOARD_LOADS loads each (default 10); plus the bytes sent for the script
// and styles and the requests the load made. The goal (docs/dashboard.md): under 1 s on loopback.
// Postlane runs in a child process (role all, SQLite unless BENCH_DATABASE_URL).
import type { Page } from 'playwright-core';
import type { Scenario } from '../run.ts';
import { startPostlane } from '../lib.ts';
import { launchBrowser } from '../../test/helpers/browser.ts';
import { buildDashboard } from '../../dashboard/build.ts';

const LOADS = Number(process.env.BENCH_DASHBOARD_LOADS ?? 10);
const PATHS = (process.env.BENCH_DASHBOARD_PATHS ?? '/,/contacts').split(',');

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
      // A page is usable when its heading is there, nothing is loading, and its content is drawn.
      const drawn = document.querySelector('main .charts, main .facts, main table');
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

export const scenario: Scenario = {
  name: 'dashboard',
  description: `the dashboard's first load in Chromium, signed in, until the page is usable: cold (nothing cached) and warm (reload), ${LOADS} loads each of ${PATHS.join(' and ')}`,
  async run() {
    await buildDashboard({ quiet: true });
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

      const lines: string[] = [];
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
        const describe = (label: string, loads: Load[]) =>
          `${`${path} ${label}`.padEnd(22)} median ${median(loads.map((l) => l.ms)).toFixed(0).padStart(5)} ms   max ${Math.max(...loads.map((l) => l.ms)).toFixed(0).padStart(5)} ms   ` +
          `${loads[0].requests} requests   script ${(loads[0].scriptBytes / 1024).toFixed(1)} KiB, styles ${(loads[0].styleBytes / 1024).toFixed(1)} KiB over the wire`;
        lines.push(describe('cold', cold), describe('warm', warm));
      }
      lines.push('goal: under 1000 ms on loopback');
      return { name: this.name, lines };
    } catch (error) {
      throw new Error(`${(error as Error).message}\npostlane output:\n${postlane.output().slice(-4000)}`);
    } finally {
      await browser.close();
      await postlane.stop();
    }
  },
};
