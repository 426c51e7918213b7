// The campaigns pages in real Chromium, driven as a user would: a draft composed with its
// preview, an audience included and another excluded; sending refused in the API's words, then
// sent to a small audience and watched in the report (bars for sent, delivered, unsubscribed …)
// until every copy reached the SMTP sink; a send paused and resumed; a scheduled campaign
// deleted; a draft canceled and archived; the list's status filter and search; a campaign read
// answering late (a busy server) never puts back an older state over what the user did and
// typed. Every page is scanned by axe-core and photographed at 1440 and 390 px, light and dark.
import './campaign-env.ts';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/app.ts';
import { publishRecords } from '../helpers/sending.ts';
import { captureAtBothWidths, newContext, settled, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let newsletter = '';

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept()); // "Delete …?" confirmations
  // A verified sending domain and two audiences, made over the API (their pages have their own tests).
  const domain = (await app.api.post('/v2/domains', { name: 'acme.test' })).body;
  publishRecords(app.dns, domain.dns_records);
  assert.equal((await app.api.post(`/v2/domains/${domain.id}/verify`)).status, 200);
  newsletter = (await app.api.post('/v2/audiences', { name: 'Newsletter' })).body.id;
  const vip = (await app.api.post('/v2/audiences', { name: 'Do not mail' })).body.id;
  // (The sink refuses bounce@ with a 550: that copy bounces.)
  for (const [email, first_name] of [
    ['ann@example.org', 'Ann'],
    ['bob@example.org', 'Bob'],
    ['cat@example.org', 'Cat'],
    ['bounce@example.org', 'Bo'],
  ]) {
    assert.equal((await app.api.post('/v2/contacts', { email, first_name, audiences: [newsletter] })).status, 201);
  }
  assert.equal((await app.api.post('/v2/contacts', { email: 'dan@example.org', audiences: [vip] })).status, 201);
  await signInFirstAdmin(page, app);
});

after(async () => {
  await browser?.close();
  await app?.close();
});

async function go(label: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
  await settled(page);
}

const bar = async (label: string) => (await page.locator(`[data-bar="${label}"] .bars-value`).innerText()).trim();
const statusFact = async () => (await page.locator('.facts').first().innerText()).match(/Status\s+(\w+)/)?.[1];

/** `eventually`, failing with what the page shows. */
async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  await eventually(check, ms).catch(async (error) => {
    throw new Error(`${error}: ${await page.locator('main').innerText()}`);
  });
}

async function compose(name: string, fields: { from?: string; subject?: string; include?: string[]; exclude?: string[] }): Promise<string> {
  await go('Campaigns');
  await page.getByRole('button', { name: 'New campaign' }).click();
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await settled(page);
  await page.getByLabel('Campaign name').fill(name);
  if (fields.from) await page.getByLabel('From address').fill(fields.from);
  await page.getByLabel('From name').fill('Acme News');
  if (fields.subject) await page.getByLabel('Subject').fill(fields.subject);
  for (const a of fields.include ?? []) await page.getByLabel(`Audience ${a}`).selectOption('include');
  for (const a of fields.exclude ?? []) await page.getByLabel(`Audience ${a}`).selectOption('exclude');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.getByRole('heading', { name: `Campaign: ${name}` }).waitFor();
  await settled(page);
  return new URL(page.url()).pathname.split('/').pop()!;
}

async function sendNow(): Promise<void> {
  await page.getByRole('button', { name: /^Send or (re)?schedule$/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Send now' }).click();
}

test("a campaign is composed with its preview, refused without a sender in the API's words, sent, and watched to delivery in the report", async () => {
  await go('Campaigns');
  await page.getByText('No campaigns.').waitFor();
  await captureAtBothWidths(page, 'campaigns-empty');

  // Compose: the preview shows the merge tags filled with an example contact.
  await page.getByRole('button', { name: 'New campaign' }).click();
  await settled(page);
  await page.getByLabel('Subject').fill('Hi {{first_name}}');
  await page.getByRole('tab', { name: 'HTML' }).click(); // raw HTML rather than blocks
  await page.getByLabel('HTML content').fill('<h1>Spring news for {{first_name}}</h1><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>');
  const preview = page.frameLocator('iframe[title="Preview of the campaign"]');
  await preview.getByRole('heading', { name: 'Spring news for Ada' }).waitFor();
  await page.getByText('Hi Ada', { exact: true }).waitFor();
  await page.getByLabel('HTML content').fill('<h1>Spring news for {{first_name}}</h1>');
  await page.getByLabel('Text content').fill('Spring news');
  await page.getByText(/a campaign cannot be sent without one/).waitFor();
  await page.getByLabel('HTML content').fill('<h1>Spring news for {{first_name}}</h1><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>');
  await page.getByLabel('Text content').fill('Spring news for {{first_name}}. Unsubscribe: {{unsubscribe_url}}');
  await page.getByLabel('Campaign name').fill('Spring');
  await page.getByLabel('From name').fill('Acme News');
  await page.getByLabel('Audience Newsletter').selectOption('include');
  await page.getByLabel('Audience Do not mail').selectOption('exclude');
  await captureAtBothWidths(page, 'campaign-compose');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.getByRole('heading', { name: 'Campaign: Spring' }).waitFor();
  await settled(page);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const stored = (await app.api.get(`/v2/campaigns/${id}`)).body;
  assert.equal(stored.status, 'draft');
  assert.equal(stored.subject, 'Hi {{first_name}}');
  assert.deepEqual(stored.recipients.map((r: any) => r.exclude).sort(), [false, true]);
  assert.match(await page.locator('.facts').first().innerText(), /Audiences\s+1 included, 1 excluded/);

  // Sending without a from address: refused, the API's own words in the dialog.
  await sendNow();
  const refusal = (await app.api.post(`/v2/campaigns/${id}/send`)).body;
  await page.getByRole('dialog').getByRole('alert').filter({ hasText: refusal.message }).waitFor();
  await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
  await settled(page);

  // The settings are edited (shown without a reload), then it is sent.
  await page.getByLabel('From address').fill('news@acme.test');
  await settled(page);
  assert.equal(await page.getByLabel('From address').inputValue(), 'news@acme.test');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  assert.equal((await app.api.get(`/v2/campaigns/${id}`)).body.from_email, 'news@acme.test', await page.locator('main').innerText());
  assert.match(await page.locator('.facts').first().innerText(), /From\s+Acme News <news@acme\.test>/);
  await sendNow();

  // The report: the bars follow the send as it goes, without a reload, until all three are delivered.
  await page.getByRole('heading', { name: 'Report' }).waitFor();
  await page.locator('[data-bar="Delivered"]').waitFor();
  await until(async () => (await bar('Delivered')).startsWith('3 '), 20_000);
  await until(async () => (await bar('Bounced')).startsWith('1 '), 20_000);
  await until(async () => (await statusFact()) === 'sent', 10_000);
  assert.match(await bar('Sent'), /^4 \(100%\)/);
  assert.match(await bar('Delivered'), /^3 \(75%\)/);
  assert.match(await page.getByRole('status').filter({ hasText: 'recipients' }).innerText(), /4 of 4 recipients/);
  const delivered = app.sink.messages
    .filter((m) => m.rcptTo[0].endsWith('@example.org'))
    .map((m) => m.rcptTo[0])
    .sort();
  assert.deepEqual(
    delivered,
    ['ann@example.org', 'bob@example.org', 'cat@example.org'],
    'the excluded-only contact dan is not mailed (exclusions are stored; dan is in no included audience)',
  );

  // A recipient unsubscribes through the link in their copy: the report shows it after a refresh.
  const raw = app.sink.messages.find((m) => m.rcptTo[0] === 'ann@example.org')!.raw.toString('utf8');
  const link = /<(http[^>]+\/unsubscribe\/[^>]+)>/.exec(raw.replace(/\r\n[ \t]+/g, ''))![1];
  assert.equal(
    (
      await fetch(link, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      })
    ).status,
    200,
  );
  await page.getByRole('button', { name: 'Refresh' }).click();
  await until(async () => (await bar('Unsubscribed')).startsWith('1 '), 5000);
  const report = (await app.api.get(`/v2/campaigns/${id}/report`)).body;
  assert.deepEqual([report.sent, report.delivered, report.bounced, report.unsubscribed], [4, 3, 1, 1]);
  await captureAtBothWidths(page, 'campaign-report');

  // A sent campaign can only be renamed; it is archived, not deleted.
  assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.getByText('A sent campaign can only be renamed.').waitFor();
  assert.ok(await page.getByLabel('Subject').isDisabled());
});

test('a sending campaign is paused and resumed; a scheduled one deleted; a draft canceled and archived; the list filters and searches', async () => {
  // Six more subscribers: in batches of two, 3 s apart (time enough to pause it on a busy machine).
  for (let i = 0; i < 6; i++) await app.api.post('/v2/contacts', { email: `reader${i}@example.org`, audiences: [newsletter] });
  const id = await compose('Summer', { from: 'news@acme.test', subject: 'Summer', include: ['Newsletter'] });
  // (The content came from the composer's starter, which carries the unsubscribe link.)
  await sendNow();
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Resume' }).waitFor();
  assert.equal((await app.api.get(`/v2/campaigns/${id}`)).body.status, 'paused');
  await until(async () => /waiting/.test(await page.getByRole('status').filter({ hasText: 'recipients' }).innerText()), 5000);
  await captureAtBothWidths(page, 'campaign-paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await until(async () => (await statusFact()) === 'sent', 45_000);
  // Once every copy is answered for, the bars show the API's figures.
  const figures = await eventually(async () => {
    const f = (await app.api.get(`/v2/campaigns/${id}/report`)).body;
    return f.delivered + f.bounced === f.recipients && f;
  }, 20_000);
  assert.ok(figures.recipients >= 8, JSON.stringify(figures));
  await until(
    async () => (await bar('Delivered')).startsWith(`${figures.delivered} `) && (await bar('Bounced')).startsWith(`${figures.bounced} `),
    20_000,
  );

  // Scheduled for later: shown so, then deleted (a scheduled campaign is deleted to stop it).
  const later = await compose('Autumn', { from: 'news@acme.test', subject: 'Autumn', include: ['Newsletter'] });
  await page.getByRole('button', { name: 'Send or schedule' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('When').selectOption('later');
  await dialog.getByLabel('Send at').fill('2099-01-01T09:00:00Z');
  await dialog.getByRole('button', { name: 'Schedule' }).click();
  await until(async () => (await statusFact()) === 'scheduled', 5000);
  assert.equal((await app.api.get(`/v2/campaigns/${later}`)).body.scheduled_at.slice(0, 16), '2099-01-01T09:00');
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
  assert.equal((await app.api.get(`/v2/campaigns/${later}`)).status, 404);

  // A draft canceled, then archived: archived ones leave the default list.
  const first = await compose('Winter', { include: ['Newsletter'] });
  // New content for the draft: a new draft carrying it and the same settings replaces this one.
  await page.getByRole('tab', { name: 'Content' }).click();
  await page.getByRole('tab', { name: 'HTML' }).click();
  await page.getByLabel('HTML content').fill('<p>Snow for {{first_name}}</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>');
  await page.frameLocator('iframe[title="Preview of the campaign"]').getByText('Snow for Ada').waitFor();
  await page.getByRole('button', { name: 'Save new content' }).click();
  await until(async () => !page.url().endsWith(first));
  await page.getByRole('heading', { name: 'Campaign: Winter' }).waitFor();
  await settled(page);
  const draft = new URL(page.url()).pathname.split('/').pop()!;
  assert.equal((await app.api.get(`/v2/campaigns/${first}`)).status, 404);
  const replaced = (await app.api.get(`/v2/campaigns/${draft}`)).body;
  assert.equal(replaced.recipients.length, 1);
  const stored = await app.running.ctx.db.selectFrom('campaigns').select('html').where('id', '=', draft).executeTakeFirstOrThrow();
  assert.match(stored.html ?? '', /Snow for \{\{first_name\}\}/);
  await captureAtBothWidths(page, 'campaign-content');
  await page.getByRole('button', { name: 'Cancel campaign' }).click();
  await until(async () => (await statusFact()) === 'canceled', 5000);
  await page.getByRole('button', { name: 'Archive' }).click();
  await until(async () => (await statusFact()) === 'archived', 5000);
  assert.equal((await app.api.get(`/v2/campaigns/${draft}`)).body.status, 'archived');

  await go('Campaigns');
  const statusFilter = () => page.getByRole('combobox', { name: /^Status/ });
  const rows = () => page.getByRole('region', { name: 'Campaign list' }).innerText();
  await until(async () => (await rows()).includes('Summer') && !(await rows()).includes('Winter'), 5000);
  await statusFilter().selectOption('archived');
  await until(async () => (await rows()).includes('Winter') && !(await rows()).includes('Summer'), 5000);
  await statusFilter().selectOption('all');
  await page.getByLabel('Search name or subject').fill('Spr');
  await until(async () => (await rows()).includes('Spring') && !(await rows()).includes('Summer'), 5000);
  await page.getByLabel('Search name or subject').fill('');
  await statusFilter().selectOption('sent');
  await until(
    async () => (await rows()).includes('Spring') && (await rows()).includes('Summer') && !(await rows()).includes('Winter'),
    5000,
  );
  await captureAtBothWidths(page, 'campaigns');
});

test('a slow refetch never puts back an older state: the campaign stays paused and its settings keep what is typed', async () => {
  const id = await compose('Late answers', { from: 'news@acme.test', subject: 'Late', include: ['Newsletter'] });
  // From now on every read of this campaign (not of its report) answers 4 s late, as from a busy
  // server: the answer the page gets describes the campaign as it was when it asked.
  let late: Promise<void> = Promise.resolve();
  let asked!: () => void;
  const firstRead = new Promise<void>((resolve) => (asked = resolve));
  const campaignReads = (url: URL) => url.pathname === `/v2/campaigns/${id}`;
  await page.route(campaignReads, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const response = await route.fetch();
    asked();
    const delivered = new Promise((resolve) => setTimeout(resolve, 4000)).then(() => route.fulfill({ response }).catch(() => undefined));
    late = late.then(() => delivered);
    await delivered;
  });
  await sendNow();
  // The report sees the campaign sending and the page reads the campaign again (answering late) …
  await firstRead;
  // … while it is paused.
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Resume' }).waitFor();
  await late; // the late answer ("sending") has reached the page
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
  assert.equal(await statusFact(), 'paused', await page.locator('main').innerText());
  assert.ok(await page.getByRole('button', { name: 'Resume' }).isVisible());

  // A paused campaign's settings can be edited; what is typed is saved.
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.getByLabel('Subject').fill('Later, but sure');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  const stored = (await app.api.get(`/v2/campaigns/${id}`)).body;
  assert.deepEqual([stored.status, stored.subject], ['paused', 'Later, but sure']);
  await page.unroute(campaignReads);
  await page.getByRole('button', { name: 'Cancel campaign' }).click();
  await until(async () => (await statusFact()) === 'canceled', 10_000);
});
