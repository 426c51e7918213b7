// The dashboard in real Chromium, as a new user meets it: the first start's link, a domain
// published and verified against the loopback DNS server, an API key, an email sent by a
// script and seen delivered with its timeline, a bounce and its reason, a failing webhook
// request read and resent. Every page is scanned by axe-core and photographed at 1440 and
// 390 px (test-artifacts/dashboard/). One browser and one page for the whole file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/app.ts';
import { publishRecords } from '../helpers/sending.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { captureAtBothWidths, newContext, settled, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let receiver: WebhookReceiver;
let scriptKey = '';
let domainId = '';

const EMAIL = 'owner@acme.test';
const PASSWORD = 'correct horse battery';

before(async () => {
  app = await startDashboardApp();
  receiver = await startWebhookReceiver();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept()); // "Delete …?" confirmations
});

after(async () => {
  await browser?.close();
  await receiver?.close();
  await app?.close();
});

async function go(label: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
  await settled(page);
}

test('the first start link lets the first admin set a password and sign in', async () => {
  await page.goto(app.setupLink);
  await assert.doesNotReject(page.getByRole('heading', { name: 'Join Postlane' }).waitFor());
  await captureAtBothWidths(page, 'accept');
  await page.getByLabel('Your email').fill(EMAIL);
  await page.getByLabel('Choose a password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/dashboard/');
  await settled(page);
  assert.match(await page.locator('.facts').innerText(), /default/);
  await captureAtBothWidths(page, 'overview');

  // The link worked once.
  const again = await context.newPage();
  await again.goto(app.setupLink);
  await again.getByText('This invitation link is not valid any more').waitFor();
  await again.close();
});

test('a domain is added, its records copied, and verified against the loopback DNS', async () => {
  await go('Domains');
  await captureAtBothWidths(page, 'domains-empty');
  await page.getByRole('button', { name: 'Add domain' }).click();
  await page.getByLabel('Domain name').fill('acme.test');
  await page.getByRole('dialog').getByRole('button', { name: 'Add domain' }).click();
  await page.getByRole('heading', { name: 'acme.test' }).waitFor();
  await settled(page);
  domainId = new URL(page.url()).pathname.split('/').pop()!;
  const domain = (await app.api.get(`/v2/domains/${domainId}`)).body;
  assert.equal(domain.name, 'acme.test');

  // Each record's value is one click away from the clipboard.
  const dkim = domain.dns_records.find((r: any) => r.name.includes('_domainkey'));
  const index = domain.dns_records.indexOf(dkim) + 1;
  await page.getByRole('button', { name: `Copy value of record ${index} (TXT)` }).click();
  await page.getByText('Copied', { exact: true }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), dkim.value);
  await captureAtBothWidths(page, 'domain-pending');

  // The user publishes the records at their DNS host, then verifies.
  publishRecords(app.dns, domain.dns_records);
  await page.getByRole('button', { name: 'Verify now' }).click();
  await eventually(async () => /Verification\s+verified/.test(await page.locator('.facts').first().innerText()), 10_000).catch(
    async (error) => {
      throw new Error(`${error}: ${await page.locator('main').innerText()}`);
    },
  );
  await settled(page);
  assert.equal((await app.api.get(`/v2/domains/${domainId}`)).body.verification_status, 'verified');
  await captureAtBothWidths(page, 'domain-verified');

  // Tracking settings are saved through the API and shown at once.
  await page.getByLabel('Track clicks').check();
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  assert.ok((await app.api.get(`/v2/domains/${domainId}`)).body.track_clicks);
});

test('an API key is created and its secret shown once', async () => {
  await go('API keys');
  await page.getByRole('button', { name: 'Create API key' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Script');
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  const secret = page.getByTestId('new-secret');
  await secret.waitFor();
  scriptKey = (await secret.innerText()).trim();
  assert.match(scriptKey, /^secret_/);
  await page.getByRole('button', { name: 'Copy the API key' }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), scriptKey);
  await captureAtBothWidths(page, 'api-key-secret');
  await page.getByRole('button', { name: 'Done' }).click();
  // The list shows it without a reload; the secret is nowhere on the page any more.
  await page.getByRole('cell', { name: 'Script', exact: true }).waitFor();
  assert.ok(!(await page.content()).includes(scriptKey));
  await captureAtBothWidths(page, 'api-keys');

  // Rename, regenerate (the new secret shown once) and delete another key.
  await page.getByRole('button', { name: 'Create API key' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Temporary');
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  const first = (await page.getByTestId('new-secret').innerText()).trim();
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('button', { name: 'Rename Temporary' }).click();
  await page.getByLabel('New name').fill('Short-lived');
  await page.getByRole('dialog').getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('cell', { name: 'Short-lived', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Regenerate Short-lived' }).click();
  const second = (await page.getByTestId('new-secret').innerText()).trim();
  assert.notEqual(second, first);
  await page.getByRole('button', { name: 'Done' }).click();
  assert.equal((await fetch(`${app.url}/v2/api-keys`, { headers: { authorization: `Bearer ${first}` } })).status, 401);
  await page.getByRole('button', { name: 'Delete Short-lived' }).click();
  await page.getByRole('cell', { name: 'Short-lived', exact: true }).waitFor({ state: 'detached' });
  assert.equal((await fetch(`${app.url}/v2/api-keys`, { headers: { authorization: `Bearer ${second}` } })).status, 401);
});

// Like a well-behaved script, it waits out the plan's per-second limit (429 with retry_after)
// instead of failing: the tests send several emails in quick succession.
async function sendFromScript(to: string, subject: string, extra: Record<string, unknown> = {}): Promise<string> {
  let response: Response;
  let body: any;
  for (let attempt = 0; ; attempt++) {
    response = await fetch(`${app.url}/v2/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${scriptKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'Acme <hello@acme.test>',
        to,
        subject,
        html: '<h1>Hello</h1><p>From a script.</p>',
        text: 'Hello from a script.',
        ...extra,
      }),
    });
    body = await response.json();
    if (response.status !== 429 || attempt >= 5) break;
    await new Promise((resolve) => setTimeout(resolve, (body.retry_after ?? 1) * 1000));
  }
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.id ?? body.ids?.[0] ?? body.data?.[0]?.id;
}

test('an email sent by a script is seen delivered, with its timeline, HTML, headers and raw message', async () => {
  await sendFromScript('jane@example.org', 'Welcome aboard');
  await eventually(() => Promise.resolve(app.sink.messages.length > 0), 15_000);
  await eventually(
    async () => {
      await go('Emails');
      return (await page.locator('tbody').innerText()).includes('delivered');
    },
    15_000,
    500,
  );
  await captureAtBothWidths(page, 'emails');
  await page.getByRole('link', { name: 'Welcome aboard' }).click();
  await page.getByRole('heading', { name: 'Welcome aboard' }).waitFor();
  await settled(page);
  const timeline = await page.getByRole('list', { name: 'Timeline' }).innerText();
  assert.match(timeline, /Accepted/);
  assert.match(timeline, /Delivery attempt: delivered/);
  await captureAtBothWidths(page, 'email-timeline');

  await page.getByRole('tab', { name: 'HTML' }).click();
  const frame = page.frameLocator('iframe[title="HTML of the email"]');
  await frame.getByRole('heading', { name: 'Hello' }).waitFor();
  assert.equal(await page.locator('iframe[title="HTML of the email"]').getAttribute('sandbox'), '');
  await page.getByRole('tab', { name: 'HTML' }).press('ArrowRight'); // keyboard moves between tabs
  await page.getByText('Hello from a script.').waitFor();
  await page.getByRole('tab', { name: 'Headers' }).click();
  await page.getByRole('rowheader', { name: 'Subject' }).first().waitFor();
  await page.getByRole('tab', { name: 'Raw' }).click();
  await page.getByRole('region', { name: 'Raw message' }).or(page.locator('pre[aria-label="Raw message"]')).waitFor();
  assert.match(await page.locator('pre[aria-label="Raw message"]').innerText(), /Subject: Welcome aboard/);
  await captureAtBothWidths(page, 'email-raw');

  // Forward it: the copy reaches the new recipient.
  await page.getByRole('button', { name: 'Forward' }).click();
  await page.getByLabel('Forward to').fill('fwd@example.org');
  await page.getByRole('dialog').getByRole('button', { name: 'Forward' }).click();
  await page.getByText('Forwarded to fwd@example.org.').waitFor();
  await eventually(() => Promise.resolve(app.sink.messages.some((m) => m.rcptTo.includes('fwd@example.org'))), 15_000);
});

test('a scheduled email is rescheduled and canceled from its page', async () => {
  const id = await sendFromScript('later-on@example.org', 'Scheduled note', { scheduled_at: 'tomorrow at 9am' });
  await page.goto(`${app.url}/dashboard/emails/${id}`);
  await page.getByRole('heading', { name: 'Scheduled note' }).waitFor();
  await settled(page);
  await page.getByRole('button', { name: 'Reschedule' }).click();
  await page.getByLabel('Send at').fill('in 3 days');
  await page.getByRole('dialog').getByRole('button', { name: 'Reschedule' }).click();
  await page.getByText('Rescheduled.').waitFor();
  const rescheduled = (await app.api.get(`/v2/emails/${id}`)).body;
  assert.ok(Date.parse(rescheduled.scheduled_at) > Date.now() + 2 * 24 * 3600 * 1000);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByText('Canceled.').waitFor();
  await settled(page);
  assert.match(await page.locator('.facts').innerText(), /canceled/);
  assert.equal((await app.api.get(`/v2/emails/${id}`)).body.status, 'canceled');
});

test('a bounced email shows the reason the receiving server gave', async () => {
  await sendFromScript('bounce@example.org', 'Will bounce');
  await eventually(
    async () => {
      await go('Emails');
      await page.getByLabel('Status').selectOption('bounced');
      await settled(page);
      return (await page.locator('tbody').innerText()).includes('Will bounce');
    },
    15_000,
    500,
  );
  await page.getByRole('link', { name: 'Will bounce' }).click();
  await page.getByRole('heading', { name: 'Will bounce' }).waitFor();
  await settled(page);
  const timeline = await page.getByRole('list', { name: 'Timeline' }).innerText();
  assert.match(timeline, /bounced/);
  assert.match(timeline, /User unknown/);
  await captureAtBothWidths(page, 'email-bounced');

  // Retry sends it again as a new email, whose page opens.
  await page.getByRole('button', { name: 'Retry' }).click();
  await page.getByText('Retry of').waitFor();
  assert.match(await page.locator('.facts').innerText(), /Retry of\s+em_/);
});

test('a failed webhook request is read with its body and answer, and resent', async () => {
  receiver.setDefault({ status: 500, body: 'endpoint is down' });
  await go('Webhooks');
  await captureAtBothWidths(page, 'webhooks-empty');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Receiver');
  await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/hook`);
  await page.getByRole('dialog').getByRole('button', { name: 'Create webhook' }).click();
  await page.getByRole('heading', { name: 'Receiver' }).waitFor();
  await settled(page);
  await page.getByRole('button', { name: 'Reveal' }).click();
  assert.match(await page.locator('.facts').innerText(), /whsec_|[A-Za-z0-9]{20,}/);

  await sendFromScript('sam@example.org', 'Triggers a webhook');
  await eventually(() => Promise.resolve(receiver.requests.length > 0), 15_000);
  await eventually(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await settled(page);
      return (await page.getByRole('region', { name: 'Webhook requests' }).innerText()).includes('retrying');
    },
    15_000,
    300,
  );
  await captureAtBothWidths(page, 'webhook-detail');
  const first = page.getByRole('region', { name: 'Webhook requests' }).getByRole('button').first();
  const requestId = (await first.innerText()).trim();
  await first.click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('endpoint is down').waitFor();
  assert.match(await dialog.locator('pre[aria-label="Request body"]').innerText(), /"type"/);
  await captureAtBothWidths(page, 'webhook-request');

  receiver.setDefault({ status: 200, body: 'thanks' });
  await dialog.getByRole('button', { name: 'Resend' }).click();
  await eventually(
    async () => {
      await settled(page);
      const text = await dialog.innerText();
      if (!text.includes('thanks')) {
        await dialog.getByRole('button', { name: 'Close' }).click();
        await page.getByRole('button', { name: 'Refresh' }).click();
        await settled(page);
        await page.getByRole('region', { name: 'Webhook requests' }).getByRole('button', { name: requestId }).click();
        return false;
      }
      return true;
    },
    15_000,
    500,
  ).catch(async (error) => {
    const hooks = (await app.api.get('/v2/webhooks')).body.data;
    const requests = (await app.api.get(`/v2/webhooks/${hooks[0].id}/requests`)).body.data;
    throw new Error(
      `${error}\n${await dialog.innerText()}\n${JSON.stringify(requests, null, 1)}\n${receiver.requests.map((r) => r.path).join(',')}`,
    );
  });
  assert.match(await dialog.innerText(), /delivered/);
  await dialog.getByRole('button', { name: 'Close' }).click();

  // A test request, and a rotated secret shown at once.
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText(/Answer: 200/).waitFor();
  const hookId = new URL(page.url()).pathname.split('/').pop()!;
  const before = (await app.api.get(`/v2/webhooks/${hookId}`)).body.secret;
  await page.getByRole('button', { name: 'Rotate' }).click();
  await eventually(async () => (await app.api.get(`/v2/webhooks/${hookId}`)).body.secret !== before, 5000);
  const after = (await app.api.get(`/v2/webhooks/${hookId}`)).body.secret;
  await page.getByText(after).waitFor();
});

test('the other pages: suppressions, templates, events, members; each scanned at both widths', async () => {
  // The bounce's suppression is written by the delivery worker: the page is opened again until it shows.
  await eventually(
    async () => {
      await go('Suppressions');
      await settled(page);
      return page.getByRole('cell', { name: 'bounce@example.org', exact: true }).isVisible();
    },
    30_000,
    500,
  );
  await page.getByRole('button', { name: 'Add suppression' }).click();
  await page.getByLabel('Email address').fill('nobody@example.org');
  await page.getByRole('dialog').getByRole('button', { name: 'Add suppression' }).click();
  await page.getByRole('cell', { name: 'nobody@example.org', exact: true }).waitFor();
  await captureAtBothWidths(page, 'suppressions');

  await go('Templates');
  await page.getByRole('button', { name: 'New template' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Welcome');
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Template: Welcome' }).waitFor();
  await settled(page);
  await page.getByLabel('HTML').fill('<h2>Hi {{name}}</h2>');
  await page.frameLocator('iframe[title="Preview of the template"]').getByRole('heading', { name: 'Hi {{name}}' }).waitFor();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('button', { name: 'Publish' }).click();
  await page
    .getByText(/published/i)
    .first()
    .waitFor();
  await captureAtBothWidths(page, 'template-editor');
  await go('Templates');
  await page.getByRole('link', { name: 'Welcome' }).waitFor();
  await captureAtBothWidths(page, 'templates');

  // With the MJML feature on, an MJML template shows the compiler's diagnostics as you type.
  const workspaceId = (await app.api.get('/v2/workspace')).body.id;
  await updateWorkspace(app.running.ctx.db, workspaceId, { features: ['mjml'] });
  await go('Templates');
  await page.getByRole('button', { name: 'New template' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Newsletter');
  await page.getByRole('dialog').getByLabel('Editor').selectOption('mjml');
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Template: Newsletter' }).waitFor();
  await page.getByText(/No <mj-title>/).waitFor(); // the compiler's advice on the starting document
  // The first MJML compile of a process starts the compiler threads (up to the pool's 60 s job
  // timeout when CI runs two browser suites at once).
  await page.frameLocator('iframe[title="Preview of the template"]').getByText('Hello {{name}}').waitFor({ timeout: 60_000 });
  await page
    .getByLabel('MJML source')
    .fill('<mjml><mj-body><mj-section><mj-column><mj-text colour="red">Hi</mj-text></mj-column></mj-section></mj-body></mjml>');
  await page.locator('section[aria-labelledby="diagnostics-title"] li').filter({ hasText: 'colour' }).waitFor();
  await captureAtBothWidths(page, 'template-mjml');

  await go('Events');
  await page.getByText('email.delivered').first().waitFor();
  await captureAtBothWidths(page, 'events');

  await go('Members');
  await page.getByRole('cell', { name: EMAIL, exact: true }).waitFor();
  await captureAtBothWidths(page, 'members');

  await go('Overview');
  await eventually(async () => (await page.locator('.charts').innerText()).match(/Delivered\s*\n?\s*[1-9]/) !== null, 5000);
  await captureAtBothWidths(page, 'overview-with-activity');
});
