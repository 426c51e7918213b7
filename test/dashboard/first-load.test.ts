// The dashboard's first load in real Chromium: the session is asked for by the HTML itself (a
// preload the script then uses, so it is fetched once), and the page's own requests do not wait
// for it; the script and styles come compressed and cached for good, so a second load asks only
// for the HTML and the data. (The time itself is measured by `npm run bench dashboard`.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Request } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { newContext, settled, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let cookie = '';

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  const accepted = await fetch(`${app.url}/auth/invitations/${app.setupLink.split('#')[1]}/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'first@acme.test', password: 'correct horse battery' }),
  });
  assert.equal(accepted.status, 200);
  cookie = /postlane_session=([^;]+)/.exec(accepted.headers.get('set-cookie') ?? '')![1];
});

after(async () => {
  await browser?.close();
  await app?.close();
});

test("the overview's data is requested without waiting for the session, which is fetched once, from the HTML", async () => {
  const context = await newContext(browser);
  await context.addCookies([{ name: 'postlane_session', value: cookie, url: app.url }]);
  const page = await context.newPage();
  // The session answers slowly: the page's data must not queue behind it.
  let sessionAnswered = 0;
  await page.route('**/auth/session', async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const response = await route.fetch();
    sessionAnswered = Date.now();
    await route.fulfill({ response });
  });
  const asked: Array<{ path: string; at: number }> = [];
  page.on('request', (request: Request) => asked.push({ path: new URL(request.url()).pathname, at: Date.now() }));
  await page.goto(`${app.url}/dashboard/`);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await settled(page);
  assert.match(await page.locator('.facts').innerText(), /default/);

  assert.equal(asked.filter((r) => r.path === '/auth/session').length, 1, 'the session is fetched once');
  for (const path of ['/v2/stats/emails', '/v2/workspace']) {
    const request = asked.find((r) => r.path === path);
    assert.ok(request, `${path} was requested`);
    assert.ok(request.at < sessionAnswered, `${path} went out before the session answered`);
  }
  const initiator = await page.evaluate(
    () =>
      (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((r) => r.name.endsWith('/auth/session'))
        ?.initiatorType,
  );
  assert.equal(initiator, 'link', 'the HTML preloads the session');
  await context.close();
});

test("without a session the sign-in page shows, and none of the page's refused requests is shown", async () => {
  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(`${app.url}/dashboard/contacts`);
  await page.getByRole('heading', { name: 'Sign in to Postlane' }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  assert.equal(await page.getByRole('heading', { name: 'Contacts' }).count(), 0);
  await context.close();
});

test('assets are compressed and cached for good: a second load fetches only the HTML and the data', async () => {
  const html = await fetch(`${app.url}/dashboard/`, { headers: { 'accept-encoding': 'gzip' } });
  const text = await html.text();
  const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(text)![1];
  const asset = await fetch(`${app.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(asset.headers.get('content-encoding'), 'gzip');
  assert.match(asset.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
  assert.match(text, /<link rel="preload" href="\/auth\/session" as="fetch" crossorigin="anonymous">/);

  const context = await newContext(browser);
  await context.addCookies([{ name: 'postlane_session', value: cookie, url: app.url }]);
  const page = await context.newPage();
  await page.goto(`${app.url}/dashboard/`);
  await settled(page);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await settled(page);
  const entries = await page.evaluate(() =>
    (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => ({
      path: new URL(r.name).pathname,
      transfer: r.transferSize,
    })),
  );
  for (const entry of entries.filter((e) => e.path.startsWith('/dashboard/assets/')))
    assert.equal(entry.transfer, 0, `${entry.path} came from the cache`);
  await context.close();
});
