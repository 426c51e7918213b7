// The dashboard's view of product events in Chromium: the events page's scope filter and a
// contact's activity.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { newContext, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

let app: DashboardApp;
let browser: Browser;
let page: Page;

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  page = await (await newContext(browser)).newPage();
  await signInFirstAdmin(page, app);
  const workspaceId = (await app.running.ctx.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow()).id;
  await updateWorkspace(app.running.ctx.db, workspaceId, { plan: 'pro' });
});
after(async () => {
  await browser?.close();
  await app?.close();
});

test("the events page filters by scope; the contact page shows the contact's activity", async () => {
  const contact = (await app.api.post('/v2/contacts', { email: 'jane@example.org' })).body;
  const sent = await app.api.post('/v2/events', {
    type: 'c:order.completed',
    email: 'jane@example.org',
    properties: { order_id: 'A1', total: 42 },
  });
  assert.equal(sent.status, 200, sent.text);

  await page.goto(`${app.url}/dashboard/events`);
  await page.getByRole('heading', { name: 'Events' }).waitFor();
  await page.getByText('contact.created').first().waitFor();
  await page.getByLabel('Scope').selectOption('custom');
  await page.getByText('c:order.completed').first().waitFor();
  await page.waitForFunction(() => !document.body.innerText.includes('contact.created'));
  await page.getByLabel('Scope').selectOption('system');
  await page.getByText('contact.created').first().waitFor();
  await page.waitForFunction(() => !document.body.innerText.includes('c:order.completed'));

  await page.goto(`${app.url}/dashboard/contacts/${contact.id}`);
  await page.getByRole('heading', { name: 'Activity' }).waitFor();
  const row = page.getByRole('row').filter({ hasText: 'c:order.completed' });
  await row.waitFor();
  assert.match(await row.innerText(), /"total":42/);
});

test('the event tracking page defines a workspace event and makes a tracking key limited to a site', async () => {
  await page.goto(`${app.url}/dashboard/event-tracking`);
  await page.getByRole('heading', { name: 'Event tracking' }).waitFor();
  await page.getByRole('button', { name: 'Define workspace event' }).click();
  await page.getByLabel('Name', { exact: true }).fill('plan.changed');
  await page.getByLabel('Properties').fill('plan:string!, seats:number');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('row').filter({ hasText: 'w:plan.changed' }).waitFor();
  const defined = (await app.api.get('/v2/workspace/events/plan.changed')).body;
  assert.deepEqual(
    defined.properties.map((p: any) => [p.name, p.type, p.required]),
    [
      ['plan', 'string', true],
      ['seats', 'number', false],
    ],
  );

  await page.getByRole('button', { name: 'Create tracking key' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Online shop');
  await page.getByLabel('Allowed origins').fill('https://shop.example.com\n*.example.com');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('row').filter({ hasText: 'Online shop' }).waitFor();
  const [key] = (await app.api.get('/v2/tracking-keys')).body.data;
  assert.deepEqual(key.allowed_origins, ['https://shop.example.com', '*.example.com']);
  assert.match(await page.getByRole('row').filter({ hasText: 'Online shop' }).innerText(), /\/js\/track\/pk_/);
});
