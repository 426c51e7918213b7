// A new user follows the overview's getting-started checklist in real Chromium, and each step
// ticks itself from what is really there: a domain added, its records published on the test's
// DNS server, verified, a test email sent from the domain's page and delivered into the SMTP
// sink, an API key made (its code snippets shown), and a first call made with the key by running
// the curl snippet as shown. Then the warnings about local names: the dashboard's banner, the
// DNS records' notes, and the start-up log's one line.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually, startTestApp } from '../helpers/app.ts';
import { publishRecords } from '../helpers/sending.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, captureAtBothWidths, newContext, settled, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';

const run = promisify(execFile);
const EMAIL = 'owner@example.org'; // example.org's MX is the sink
const STEPS = ['domain_added', 'dns_published', 'domain_verified', 'test_email_sent', 'api_key_created', 'api_call_made'];

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  await app?.close();
});

async function overview(): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview', exact: true }).click();
  await page.getByRole('heading', { name: 'Getting started' }).waitFor();
  await settled(page);
}

/** The steps shown ticked, in order. */
async function ticked(): Promise<string[]> {
  return page.locator('.checklist li.done').evaluateAll((items) => items.map((li) => li.getAttribute('data-step')!));
}

async function expectTicked(count: number): Promise<void> {
  await eventually(async () => (await ticked()).length === count, 15_000, 200).catch(async (error) => {
    throw new Error(`${error}: ticked ${JSON.stringify(await ticked())}`);
  });
  assert.deepEqual(await ticked(), STEPS.slice(0, count));
  if (count < STEPS.length)
    assert.match(await page.locator('.getting-started summary').innerText(), new RegExp(`${count} of 6 steps done`));
}

test('a new user follows the checklist to a delivered test email and a first API call, and each step ticks', async () => {
  await signInFirstAdmin(page, app, EMAIL);
  await settled(page);
  await expectTicked(0);
  // Only the checklist is photographed here: the rest of the overview is scanned by its own tests.
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator('.getting-started').screenshot({ path: join(ARTIFACTS, 'getting-started.png') });

  // 1. Add a domain: the checklist leads to the domains page, whose empty state offers it.
  await page.locator('.checklist li.next').getByRole('link', { name: 'Go to domains' }).click();
  await page.getByText('A domain is what your mail is sent from').waitFor();
  await page.getByRole('button', { name: 'Add your first domain' }).click();
  await page.getByLabel('Domain name').fill('acme.test');
  await page.getByRole('dialog').getByRole('button', { name: 'Add domain' }).click();
  await page.getByRole('heading', { name: 'acme.test' }).waitFor();
  const domainId = new URL(page.url()).pathname.split('/').pop()!;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains', exact: true }).click();
  await page.getByRole('link', { name: 'acme.test' }).waitFor();
  assert.match(await page.getByText(/ on the .* plan$/).innerText(), /^1 (domain \(no limit\)|of \d+ domains?) on the /);
  await overview();
  await expectTicked(1);

  // 2 and 3. The records are published at "the DNS host" (the test's DNS server), then verified.
  const domain = await (await page.request.get(`${app.url}/v2/domains/${domainId}`)).json();
  publishRecords(app.dns, domain.dns_records);
  await page.locator('.checklist li.next').getByRole('link', { name: 'See the records' }).click();
  await page.getByRole('heading', { name: 'acme.test' }).waitFor();
  await page.getByRole('button', { name: 'Verify now' }).click();
  await eventually(async () => /Verification\s+verified/.test(await page.locator('.facts').first().innerText()), 15_000, 200);
  await overview();
  await expectTicked(3);

  // 4. A test email from the domain's page, to the user's own address (the default), delivered.
  await page.locator('.checklist li.next').getByRole('link', { name: 'Send a test' }).click();
  await page.getByRole('heading', { name: 'Send a test email' }).waitFor();
  assert.equal(await page.getByLabel('Send the test to').inputValue(), EMAIL);
  await page.getByRole('button', { name: 'Send test email' }).click();
  const result = page.locator('.test-result');
  await eventually(async () => /delivered/.test(await result.innerText()), 20_000, 200).catch(async (error) => {
    throw new Error(`${error}: ${await page.locator('main').innerText()}`);
  });
  const arrived = app.sink.messages.find((m) => m.rcptTo.includes(EMAIL));
  assert.ok(arrived, 'the test email reached the sink');
  assert.match(arrived.raw.toString(), /Subject: Test email from acme\.test/);
  await captureAtBothWidths(page, 'domain-test-email');
  await result.getByRole('link', { name: 'Test email from acme.test' }).click();
  await page.getByRole('heading', { name: 'Test email from acme.test' }).waitFor();
  await overview();
  await expectTicked(4);

  // 5. An API key: its secret comes with snippets filled with this server, the domain and the key.
  await page.locator('.checklist li.next').getByRole('link', { name: 'Go to API keys' }).click();
  await page.getByRole('button', { name: 'Create API key' }).click();
  await page.getByLabel('Name', { exact: true }).fill('My app');
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  const key = (await page.getByTestId('new-secret').innerText()).trim();
  const snippet = page.getByTestId('snippet');
  await snippet.waitFor();
  const curl = await snippet.innerText();
  assert.ok(curl.startsWith(`curl ${app.url}/v2/emails`), curl);
  assert.ok(curl.includes(`Bearer ${key}`));
  assert.ok(curl.includes('hello@acme.test') && curl.includes(EMAIL));
  await page.getByRole('dialog').getByRole('button', { name: 'Copy the curl example' }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), curl);
  await page.getByRole('tab', { name: 'Node.js' }).click();
  assert.match(await snippet.innerText(), /from '@emailit\/node'[\s\S]*apiBase: '[^']+'/);
  await page.getByRole('tab', { name: 'SMTP' }).click();
  const smtp = await snippet.innerText();
  assert.match(smtp, /Host:\s+mail\.postlane\.test/);
  assert.ok(smtp.includes(`Password:  ${key}`));
  await captureAtBothWidths(page, 'api-key-snippets');
  await page.getByRole('button', { name: 'Done' }).click();
  await overview();
  await expectTicked(5);
  assert.equal(await page.locator('.checklist li.next').getByTestId('snippet').count(), 1, 'the last step shows the snippets');

  // 6. The first API call: the curl snippet, run as shown, sends an email.
  const { stdout } = await run('sh', ['-c', curl]);
  assert.match(JSON.parse(stdout).id, /^em_/);
  await expectTicked(6); // the open overview sees it by itself
  await page.getByText('All done: mail is flowing.').waitFor();
  assert.equal(await page.locator('.getting-started details').getAttribute('open'), null, 'collapsed when all is done');

  // Hidden once dismissed, also after a reload.
  await page.getByRole('button', { name: 'Hide', exact: true }).click();
  await page.reload();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await settled(page);
  assert.equal(await page.getByRole('heading', { name: 'Getting started' }).count(), 0);

  // The only admin is not offered to demote themselves.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members', exact: true }).click();
  await page.getByRole('region', { name: 'Members' }).getByRole('cell', { name: EMAIL }).first().waitFor();
  await settled(page);
  assert.equal(await page.getByRole('button', { name: /Make member/ }).count(), 0);
});

test('local names: a banner on every page saying what to set, and a note on the records that embed them', async () => {
  const local = await startDashboardApp({ MAIL_HOSTNAME: 'localhost' });
  const localContext = await newContext(browser);
  try {
    const localPage = await localContext.newPage();
    await signInFirstAdmin(localPage, local, 'admin@example.org');
    const banner = localPage.getByRole('region', { name: 'This server is set up with local names' });
    await banner.waitFor();
    const text = await banner.innerText();
    assert.match(text, /PUBLIC_URL is http:\/\/127\.0\.0\.1:\d+/);
    assert.match(text, /MAIL_HOSTNAME is localhost/);
    assert.match(text, /Set MAIL_HOSTNAME to this server's public DNS name/);

    const created = await local.api.post('/v2/domains', { name: 'acme.test' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const domain = created.body;
    await localPage.goto(`${local.url}/dashboard/domains/${domain.id}`);
    await localPage.getByRole('heading', { name: 'acme.test' }).waitFor();
    await settled(localPage);
    await banner.waitFor();
    // return path (bounces.localhost), SPF (include:_spf.localhost), tracking and inbound; not DKIM or DMARC.
    const notes = localPage.locator('.record-warning');
    assert.equal(await notes.count(), 4);
    assert.match(await notes.first().innerText(), /bounces\.localhost is a local name/);
    assert.match(await localPage.getByRole('row').filter({ hasText: '_domainkey' }).innerText(), /^(?![\s\S]*local name)/);
    await captureAtBothWidths(localPage, 'local-names-banner');
  } finally {
    await localContext.close();
    await local.close();
  }

  // With public names there is nothing to warn about.
  const ok = await startDashboardApp({ PUBLIC_URL: 'https://mail.example.com', MAIL_HOSTNAME: 'mail.example.com' });
  try {
    const accepted = await fetch(`${ok.url}/auth/invitations/${ok.setupLink.split('#')[1]}/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@example.org', password: 'correct horse battery' }),
    });
    const session = await accepted.json();
    assert.equal(accepted.status, 200);
    assert.deepEqual(session.server, {
      public_url: 'https://mail.example.com',
      mail_hostname: 'mail.example.com',
      local_settings: [],
      local_record_hosts: [],
    });
  } finally {
    await ok.close();
  }
});

async function startupWarnings(env: Record<string, string>): Promise<Array<{ level: number; msg: string }>> {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const started = await startTestApp({ env, logger, roles: ['api'] });
  await started.close();
  return lines.filter((line) => /PUBLIC_URL|MAIL_HOSTNAME/.test(line.msg));
}

test('the start-up log warns in one line when PUBLIC_URL or MAIL_HOSTNAME is a local name, saying what to set', async () => {
  const local = await startupWarnings({ PUBLIC_URL: 'http://postlane.local:3000', MAIL_HOSTNAME: 'mailhost' });
  assert.equal(local.length, 1);
  assert.equal(local[0].level, 40);
  assert.match(local[0].msg, /PUBLIC_URL=http:\/\/postlane\.local:3000 and MAIL_HOSTNAME=mailhost are local names/);
  assert.match(local[0].msg, /Set PUBLIC_URL and MAIL_HOSTNAME to this server's public name/);

  const one = await startupWarnings({ PUBLIC_URL: 'https://mail.example.com', MAIL_HOSTNAME: '127.0.0.1' });
  assert.equal(one.length, 1);
  assert.match(one[0].msg, /^MAIL_HOSTNAME=127\.0\.0\.1 is a local name/);

  assert.deepEqual(await startupWarnings({ PUBLIC_URL: 'https://mail.example.com', MAIL_HOSTNAME: 'mail.example.com' }), []);
});
