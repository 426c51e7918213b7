// Understanding your mail, in real Chromium over real mail (test/overview/seed.ts: API sends, one
// refused with a 550 by the SMTP sink, one suppressed, a campaign with a followed tracked link):
// the overview's charts (uPlot: axes with dates, values under the pointer, a table of the numbers)
// and rates matching the seeded counts, by provider and sending domain; the campaign report's
// clicks per link; the bounced email's reason, category and SMTP reply; webhook requests with
// their event types linking to the email; every id of the event stream a link. Pages are scanned
// by axe-core and photographed at 1280 and 390 px.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/app.ts';
import { publishRecords } from '../helpers/sending.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { captureAtBothWidths, newContext, settled, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';
import { OFFER_URL, seedMail, type Seeded } from '../overview/seed.ts';

let app: DashboardApp;
let browser: Browser;
let page: Page;
let receiver: WebhookReceiver;
let seeded: Seeded;
let hookId = '';

before(async () => {
  app = await startDashboardApp();
  receiver = await startWebhookReceiver();
  browser = await launchBrowser();
  page = await (await newContext(browser)).newPage();
  const domain = (await app.api.post('/v2/domains', { name: 'acme.test' })).body;
  publishRecords(app.dns, domain.dns_records);
  assert.equal((await app.api.post(`/v2/domains/${domain.id}/verify`)).status, 200);
  const hook = await app.api.post('/v2/webhooks', {
    name: 'Problems and clicks',
    url: `${receiver.url}/hook`,
    events: ['email.bounced', 'email.clicked'],
  });
  assert.equal(hook.status, 201, hook.text);
  hookId = hook.body.id;
  seeded = await seedMail(app);
  await signInFirstAdmin(page, app);
});

after(async () => {
  await browser?.close();
  await app?.close();
  await receiver?.close();
});

const dashboard = (path: string) => `${app.url}/dashboard${path}`;
const text = async (selector: string) => (await page.locator(selector).first().innerText()).replace(/\s+/g, ' ').trim();

test('the overview charts the period with dated axes and hover values, and its rates match the mail sent', async () => {
  await page.goto(dashboard('/'));
  await page.locator('[data-chart="volume"] canvas').first().waitFor();
  await settled(page);
  const today = new Date();
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const todayText = `${today.getUTCDate()} ${months[today.getUTCMonth()]} ${today.getUTCFullYear()}`;
  assert.match(await text('[data-chart="volume"] .chart-range'), new RegExp(`^Daily, .+ to ${todayText}$`));
  // uPlot drew its axes (two) and, under the pointer, names the day and its values in the legend.
  assert.equal(await page.locator('[data-chart="volume"] .u-axis').count(), 2);
  const plot = page.locator('[data-chart="volume"] .u-over');
  await plot.scrollIntoViewIfNeeded(); // below the getting-started checklist
  const box = (await plot.boundingBox())!;
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  await eventually(async () => (await text('[data-chart="volume"] .u-legend')).includes(todayText) || null, 5000);
  assert.match(await text('[data-chart="volume"] .u-legend'), /Sent\s*5/);
  // The same numbers as text: the caption's summary and the table.
  assert.match(await text('[data-chart="volume"] figcaption'), /Sent 5, Delivered 4, Bounced 1, Complaints 0, Opened 2, Clicked 1/);
  await page.locator('[data-chart="volume"] summary').click();
  assert.match(await text('[data-chart="volume"] .chart-table tbody tr:last-child'), new RegExp(`^${todayText} 5 4 1 0 2 1$`));

  const tile = (label: string) => text(`[data-rate="${label}"] .rate-value`);
  assert.equal(await tile('Delivery rate'), '80.0 %');
  assert.equal(await tile('Bounce rate'), '20.0 %');
  assert.equal(await tile('Hard-bounce rate'), '20.0 %');
  assert.equal(await tile('Complaint rate'), '0.0 %');
  assert.equal(await tile('Open rate'), '50.0 %');
  assert.equal(await tile('Click rate'), '25.0 %');
  assert.match(await text('[data-rate="Hard-bounce rate"]'), /past the limit|20\.00 %/);
  assert.match(await text('[data-breakdown="providers"] [data-row="gmail"]'), /^Gmail 1 1 0 0 0 0 100\.0 %/);
  assert.match(await text('[data-breakdown="providers"] [data-row="others"]'), /^Others 4 3 1 0 2 1 75\.0 % 25\.0 %/);
  assert.match(await text('[data-breakdown="sending-domains"] tbody tr'), /^acme\.test 5 4 1 0 2 1/);
  // "Sent today" counts as the chart does: the campaign's two emails too.
  assert.match(await text('.facts'), /Sent today 5 /);
  await captureAtBothWidths(page, 'insight-overview');

  // The last 24 hours, by the hour.
  await page.locator('.page-header select').selectOption('24h');
  await eventually(async () => (await text('[data-chart="volume"] .chart-range')).startsWith('Hourly') || null, 10_000);
  assert.match(await text('[data-chart="volume"] figcaption'), /Last 24 hours: Sent 5,/);
});

test('the campaign report lists the clicked link with its clicks and draws opens and clicks over time', async () => {
  await page.goto(dashboard(`/campaigns/${seeded.campaign}`));
  const row = page.locator(`[data-link="${OFFER_URL}"]`);
  await row.waitFor();
  assert.equal((await row.innerText()).replace(/\s+/g, ' ').trim(), `${OFFER_URL} 1 1`);
  await page.locator('[data-chart="campaign-engagement"] canvas').first().waitFor();
  assert.match(await text('[data-figure="Clicked (unique)"]'), /^Clicked \(unique\) 1 50\.0 % of delivered$/);
  assert.match(await text('[data-figure="Delivered"]'), /^Delivered 2 100\.0 % of sent$/);
  await settled(page);
  await captureAtBothWidths(page, 'insight-campaign-report');
});

test('a bounced email shows its reason, category and the SMTP reply, with times to the second', async () => {
  await page.goto(dashboard(`/emails/${seeded.bounced}`));
  await page.getByRole('heading', { name: 'Why it bounced' }).waitFor();
  assert.match(await text('[data-fact="bounce-reason"]'), /^user_unknown — The mailbox does not exist/);
  assert.match(await text('[data-fact="bounce-category"]'), /^Hard bounce/);
  assert.match(await text('[data-fact="smtp-reply"]'), /^550 5\.1\.1 .*User unknown/);
  assert.match(await text('.problem'), /\d{1,2}:\d{2}:\d{2}/, 'the attempt time has seconds');
  await settled(page);
  await captureAtBothWidths(page, 'insight-email-bounced');
});

test('webhook requests show their event type and link to the email they are about', async () => {
  // The bounce and the click may go in one batch or in two requests: wait for both events, however sent.
  const eventsSent = async () =>
    (await app.api.get(`/v2/webhooks/${hookId}/requests`)).body.data.reduce(
      (n: number, r: { event_count: number }) => n + r.event_count,
      0,
    );
  await eventually(async () => ((await eventsSent()) >= 2 ? true : null), 60_000);
  await page.goto(dashboard(`/webhooks/${hookId}`));
  const bounced = page.locator('[data-event-type="email.bounced"]').first();
  await bounced.waitFor();
  assert.match((await bounced.innerText()).replace(/\s+/g, ' '), /email\.bounced/);
  await page.locator('[data-event-type="email.clicked"]').first().waitFor();
  await settled(page);
  await captureAtBothWidths(page, 'insight-webhook-requests');
  await bounced.locator(`a[href$="/emails/${seeded.bounced}"]`).click();
  await page.getByRole('heading', { name: 'Why it bounced' }).waitFor();
});

test('every id of the event stream links to its page', async () => {
  await page.goto(dashboard('/events'));
  await page.getByRole('button', { name: 'Live: on' }).click(); // still while it is read
  const rows = page.locator('table tbody tr');
  await rows.first().waitFor();
  const cells = await page.locator('table tbody tr td:nth-child(2)').evaluateAll((tds) =>
    tds.map((td) => ({
      links: [...td.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      plain: [...td.querySelectorAll('code')].map((c) => c.textContent),
    })),
  );
  assert.ok(cells.length > 5);
  const knownPrefix = /^(em|con|cmp|aud|dom|wh|tem|aut|frm|evl)_/;
  for (const cell of cells)
    assert.deepEqual(
      cell.plain.filter((id) => knownPrefix.test(id ?? '')),
      [],
      'ids with a page are links',
    );
  const hrefs = cells.flatMap((c) => c.links);
  assert.ok(hrefs.includes(`/dashboard/emails/${seeded.bounced}`), hrefs.join(' '));
  assert.ok(hrefs.includes(`/dashboard/campaigns/${seeded.campaign}`), hrefs.join(' '));
  assert.ok(
    hrefs.some((h) => h?.startsWith('/dashboard/contacts/con_')),
    'contact events link to the contact',
  );
  await settled(page);
  await captureAtBothWidths(page, 'insight-events');
  await page.locator(`table tbody a[href="/dashboard/emails/${seeded.gmail}"]`).first().click();
  await page.getByRole('heading', { name: 'For reader@gmail.com' }).waitFor();
});
