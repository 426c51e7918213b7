// The dashboard's pages of the marketing resources in real Chromium: contacts (create, edit,
// search and filters, a CSV import with its summary, the export), audiences and subscribers,
// forms (the JSON tab's feedback, publish, the embed snippet, submissions; the builder has
// its own file), email
// verification (one address, a list with its progress and result chart) and DMARC reports
// (an uploaded report, the pass/fail chart by source). Every page is scanned by axe-core and
// photographed at 1440 and 390 px, light and dark. One browser and one page for the whole file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { apiClient, eventually } from '../helpers/app.ts';
import { submitForm } from '../forms/helpers.ts';
import { startMailboxServer } from '../helpers/mailbox-servers.ts';
import { captureAtBothWidths, newContext, settled, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const files = mkdtempSync(join(tmpdir(), 'postlane-dashboard-'));

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept()); // "Delete …?" confirmations
  // The first admin signs in through the first start's link.
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

const rowsText = () => page.getByRole('region', { name: 'Contacts' }).innerText();

test('contacts: created, edited, found by search and filter, imported from a CSV with its summary, exported', async () => {
  await go('Contacts');
  await page.getByText('No contacts.').waitFor();
  await captureAtBothWidths(page, 'contacts-empty');

  // Create: the new contact's page opens.
  await page.getByRole('button', { name: 'New contact' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Email address').fill('Ada@Example.org');
  await dialog.getByLabel('First name').fill('Ada');
  await dialog.getByLabel('Custom fields').fill('{"company": "Analytical"}');
  await dialog.getByRole('button', { name: 'Create contact' }).click();
  await page.getByRole('heading', { name: 'ada@example.org' }).waitFor();
  await settled(page);
  assert.match(await page.locator('.facts').innerText(), /company\s+Analytical/);

  // Edit: shown at once; a custom-fields box that is not JSON is refused before any request.
  await page.getByRole('button', { name: 'Edit' }).click();
  await dialog.getByLabel('Last name').fill('Lovelace');
  await dialog.getByLabel('Custom fields').fill('{company: nope}');
  await dialog.getByRole('button', { name: 'Save contact' }).click();
  await dialog.getByText(/Custom fields: not a JSON object/).waitFor();
  await dialog.getByLabel('Custom fields').fill('{"company": "Engines"}');
  await dialog.getByRole('button', { name: 'Save contact' }).click();
  await eventually(async () => /Ada Lovelace/.test(await page.locator('.facts').innerText()), 5000);
  assert.equal((await app.api.get('/v2/contacts/ada@example.org')).body.custom_fields.company, 'Engines');
  await captureAtBothWidths(page, 'contact-detail');

  // The API's own words for a duplicate.
  await go('Contacts');
  await page.getByRole('button', { name: 'New contact' }).click();
  await dialog.getByLabel('Email address').fill('ada@example.org');
  await dialog.getByRole('button', { name: 'Create contact' }).click();
  const conflict = (await app.api.post('/v2/contacts', { email: 'ada@example.org' })).body;
  await dialog
    .getByRole('alert')
    .filter({ hasText: conflict.message ?? conflict.error })
    .waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Import: 200 rows and one bad one, with the summary; the list shows them without a reload.
  const csv = [
    'email,first_name,last_name',
    ...Array.from({ length: 200 }, (_, i) => `person${i}@example.org,Person,${i}`),
    'not-an-address,Bad,Row',
  ].join('\n');
  const path = join(files, 'people.csv');
  writeFileSync(path, csv);
  await page.getByRole('button', { name: 'Import' }).click();
  await dialog.getByLabel('File').setInputFiles(path);
  await dialog.getByRole('button', { name: 'Import' }).click();
  await dialog.getByRole('heading', { name: 'Import completed' }).waitFor();
  const summary = await dialog.locator('.facts').innerText();
  assert.match(summary, /Rows read\s+201/);
  assert.match(summary, /Created\s+200/);
  assert.match(summary, /Skipped\s+1/);
  assert.match(await dialog.getByRole('region', { name: 'Skipped rows' }).innerText(), /202\s+not-an-address/);
  await captureAtBothWidths(page, 'contacts-import');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.getByText('201 contacts', { exact: true }).waitFor();

  // Search and filter.
  await page.getByLabel('Search email or name').fill('person17@');
  await eventually(
    async () => (await rowsText()).includes('person17@example.org') && !(await rowsText()).includes('ada@example.org'),
    5000,
  );
  await page.getByLabel('Search email or name').fill('');
  await app.api.post('/v2/contacts/person3@example.org', { unsubscribed: true });
  await page.getByLabel('Subscription').selectOption('true');
  await settled(page);
  // (The search before matched one contact too: wait for the filtered list itself.)
  await eventually(async () => (await rowsText()).includes('person3@example.org'), 5000);
  await page.getByText('1 contacts', { exact: true }).waitFor();
  await captureAtBothWidths(page, 'contacts');

  // Export: the filtered list as CSV.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
  const exported = readFileSync((await download.path())!, 'utf8');
  assert.match(exported, /^email,/);
  assert.match(exported, /person3@example\.org/);
  assert.equal(exported.trim().split('\n').length, 2);
});

test("audiences: created, subscribers added one and many, unsubscribed, filtered, removed; settings saved or refused in the API's words", async () => {
  await go('Audiences');
  await page.getByText('No audiences yet.').waitFor();
  await page.getByRole('button', { name: 'New audience' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Newsletter');
  await dialog.getByRole('button', { name: 'Create audience' }).click();
  await page.getByRole('heading', { name: 'Audience: Newsletter' }).waitFor();
  await settled(page);
  const audienceId = new URL(page.url()).pathname.split('/').pop()!;
  const subscribers = page.getByRole('region', { name: 'Subscriber list' });

  // One subscriber (an existing contact), then many at once.
  await page.getByRole('button', { name: 'Add subscribers' }).click();
  await dialog.getByLabel('Email address').fill('ada@example.org');
  await dialog.getByRole('button', { name: 'Add subscribers' }).click();
  await page.getByText('ada@example.org subscribed.').waitFor();
  await page.getByRole('button', { name: 'Add subscribers' }).click();
  await dialog.getByLabel('How many').selectOption('many');
  await dialog.getByLabel('Addresses', { exact: true }).fill('person1@example.org\nperson2@example.org, newcomer@example.org');
  await dialog.getByRole('button', { name: 'Add subscribers' }).click();
  await page.getByText('3 added, 0 resubscribed, 0 already subscribed.').waitFor();
  await settled(page);
  await eventually(async () => /Subscribers\s+4/.test(await page.locator('.facts').innerText()), 5000);
  assert.match(await subscribers.innerText(), /newcomer@example\.org/);
  // Adding an existing contact without names keeps the contact's own.
  assert.match(await subscribers.innerText(), /ada@example\.org\s+Ada Lovelace/);
  assert.equal((await app.api.get(`/v2/audiences/${audienceId}`)).body.subscribers_count, 4);

  // Unsubscribe one, filter, remove another.
  await page.getByRole('button', { name: 'Unsubscribe person1@example.org' }).click();
  await page.getByRole('button', { name: 'Resubscribe person1@example.org' }).waitFor();
  await page.getByLabel('Status').selectOption('false');
  await settled(page);
  await eventually(async () => !(await subscribers.innerText()).includes('ada@example.org'), 5000);
  assert.match(await subscribers.innerText(), /person1@example\.org/);
  await page.getByLabel('Status').selectOption('');
  await settled(page);
  await page.getByRole('button', { name: 'Remove person2@example.org' }).click();
  await eventually(async () => !(await subscribers.innerText()).includes('person2@example.org'), 5000);
  await captureAtBothWidths(page, 'audience-subscribers');

  // Settings: a public page is saved; double opt-in without a verified sender is refused as the API says.
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.getByLabel('Subscribe page').selectOption('public');
  await page.getByLabel('Name shown to visitors').fill('The Acme letter');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  const saved = (await app.api.get(`/v2/audiences/${audienceId}`)).body;
  assert.deepEqual([saved.visibility, saved.public_name], ['public', 'The Acme letter']);
  assert.equal(await page.getByRole('link', { name: new RegExp(`/subscribe/${saved.token}$`) }).count(), 1);
  await page.getByLabel('Confirm new subscribers by email').check();
  await page.getByLabel('Confirmation sender').fill('news@unverified.example');
  await page.getByRole('button', { name: 'Save settings' }).click();
  const refused = await app.api.post(`/v2/audiences/${audienceId}`, {
    double_opt_in: { enabled: true, email: { from: 'news@unverified.example' } },
  });
  assert.ok(refused.status >= 400);
  await page
    .getByRole('alert')
    .filter({ hasText: refused.body.error ?? refused.body.message })
    .waitFor();
  await captureAtBothWidths(page, 'audience-settings');

  // The list, and the contacts page filtered by the audience.
  await go('Audiences');
  await page.getByRole('link', { name: 'Newsletter' }).waitFor();
  await captureAtBothWidths(page, 'audiences');
  await go('Contacts');
  await page.getByLabel('Audience').selectOption({ label: 'Newsletter' });
  await settled(page);
  await page.getByText('3 contacts', { exact: true }).waitFor();
});

test('forms: created, the JSON definition checked while typing, refused and then published, embed snippet copied, submissions read', async () => {
  await go('Forms');
  await page.getByText('No forms.').waitFor();
  await page.getByRole('button', { name: 'New form' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Spring sign-up');
  await dialog.getByLabel('Form type').selectOption('embed');
  await dialog.getByRole('button', { name: 'Create form' }).click();
  await page.getByRole('heading', { name: 'Form: Spring sign-up' }).waitFor();
  await settled(page);
  const formId = new URL(page.url()).pathname.split('/').pop()!;
  await page.getByRole('tab', { name: 'JSON' }).click();
  const editor = page.getByLabel('Definition (JSON)');
  const starter = await editor.inputValue();
  await page.getByText('The definition is ready to publish.').waitFor();
  // The live preview draws the starter's steps.
  await page.locator('[data-form-preview]').getByRole('heading', { name: 'Subscribe to our newsletter' }).waitFor();
  await page.locator('[data-form-preview]').getByLabel('Email address').waitFor();

  // Broken JSON: said where, and nothing can be saved.
  await editor.fill(starter.replace('"version": 1,', '"version": 1'));
  await page.getByText(/Not valid JSON: .*line \d+, column \d+/).waitFor();
  assert.ok(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled());

  // Valid JSON that could not be published: saved as a draft, the problems listed; publishing refused in the API's words.
  await editor.fill(starter.replace('"version": 1,', '"version": 2,'));
  await page.locator('.problems li').filter({ hasText: 'version' }).waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  assert.equal((await app.api.get(`/v2/forms/${formId}`)).body.definition.version, 2);
  await page.getByRole('button', { name: 'Publish' }).click();
  const refusal = await app.api.post(`/v2/forms/${formId}/publish`);
  assert.equal(refusal.status, 422);
  await page.getByRole('alert').filter({ hasText: refusal.body.error }).waitFor();
  await captureAtBothWidths(page, 'form-editor-problems');

  await editor.fill(starter);
  await page.getByText('The definition is ready to publish.').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByRole('button', { name: 'Unpublish' }).waitFor();
  assert.match(await page.locator('.facts').innerText(), /Status\s+live/);
  const form = (await app.api.get(`/v2/forms/${formId}`)).body;
  assert.equal(form.status, 'live');
  await captureAtBothWidths(page, 'form-editor');

  // The embed snippet: the script tag and, for an embedded form, its placeholder with the token.
  await page.getByRole('tab', { name: 'Embed' }).click();
  const embed = (await app.api.get('/v2/forms/embed')).body;
  await page.getByRole('button', { name: 'Copy the embed script tag' }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), embed.html);
  await page.getByRole('button', { name: 'Copy the form placeholder' }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `<div data-postlane-form="${form.token}"></div>`);
  await captureAtBothWidths(page, 'form-embed');

  // A visitor's submission shows in the list.
  const submitted = await submitForm(
    apiClient(app.url, null),
    form.token,
    { email: 'visitor@example.org' },
    { page_url: 'https://acme.test/spring' },
  );
  assert.equal(submitted.status, 201, submitted.text);
  await page.getByRole('tab', { name: 'Submissions' }).click();
  await settled(page);
  await eventually(async () => {
    if ((await page.getByRole('region', { name: 'Submissions' }).innerText()).includes('visitor@example.org')) return true;
    await page.getByRole('button', { name: 'Refresh' }).click();
    await settled(page);
    return false;
  }, 5000);
  assert.match(await page.getByRole('region', { name: 'Submissions' }).innerText(), /https:\/\/acme\.test\/spring/);
  await captureAtBothWidths(page, 'form-submissions');

  // Unpublished: a draft again; the list filters by status.
  await page.getByRole('button', { name: 'Unpublish' }).click();
  // exact: a name matches by substring, and "Unpublish" itself contains "publish".
  await page.getByRole('button', { name: 'Publish', exact: true }).waitFor();
  assert.equal((await app.api.get(`/v2/forms/${formId}`)).body.status, 'draft');
  await go('Forms');
  const status = page.getByRole('combobox', { name: /^Status/ });
  await status.selectOption('live');
  await page.getByText('No forms.').waitFor();
  await status.selectOption('draft');
  await page.getByRole('link', { name: 'Spring sign-up' }).waitFor();
  await captureAtBothWidths(page, 'forms');
});

test('verification: one address checked with its checks; a list verified with its progress, result chart, results and export', async () => {
  await go('Verification');
  await page.getByText('No lists yet.').waitFor();
  await page.getByLabel('Address', { exact: true }).fill('not-an-address');
  await page.getByRole('button', { name: 'Check', exact: true }).click();
  await page.getByRole('heading', { name: /not-an-address: invalid/ }).waitFor();
  assert.match(await page.locator('.facts').innerText(), /Valid syntax\s+No/);
  await page.getByLabel('Address', { exact: true }).fill('jane@example.org');
  await page.getByLabel('Mode').selectOption('full');
  await page.getByRole('button', { name: 'Check', exact: true }).click();
  await page.getByRole('heading', { name: /^jane@example\.org:/ }).waitFor();
  assert.match(await page.locator('.facts').innerText(), /MX records\s+mx\.example\.org \(10\)/);
  assert.match(await page.locator('.facts').innerText(), /Mailbox check\s+accepted/);
  await captureAtBothWidths(page, 'verification');

  await page.getByRole('button', { name: 'New list' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Spring leads');
  await dialog.getByLabel('Addresses').fill('jane@example.org\ninfo@example.org, bounce@example.org\nsam@example.org\nJane@example.org');
  await dialog.getByRole('button', { name: 'Verify the list' }).click();
  await page.getByRole('heading', { name: 'List: Spring leads' }).waitFor();
  const listId = new URL(page.url()).pathname.split('/').pop()!;
  // The page follows the list until it is completed, without a reload.
  await page.getByText('4 of 4 addresses verified').waitFor({ timeout: 30_000 });
  await page.getByRole('link', { name: 'Export CSV' }).waitFor();
  const list = (await app.api.get(`/v2/email-verification-lists/${listId}`)).body;
  assert.equal(list.status, 'completed');
  const legend = await page.locator('.legend').innerText();
  const results = list.stats.results;
  for (const [key, label] of [
    ['safe', 'Safe'],
    ['role', 'Role'],
    ['unknown', 'Unknown'],
    ['invalid', 'Invalid'],
  ])
    assert.match(legend, new RegExp(`${label}:\\s*${results[key]}\\b`));
  assert.equal(results.role, 1);
  // The bar splits every address once; catch-all (which overlaps the others) is said apart.
  const label = (await page.getByRole('img', { name: /Addresses by result/ }).getAttribute('aria-label'))!;
  assert.equal(
    [...label.matchAll(/ (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0),
    4,
  );
  await page.getByText(`Of them on catch-all domains (the server accepts any address): ${results.catch_all}`).waitFor();
  assert.match(await page.getByRole('region', { name: 'Addresses and results' }).innerText(), /bounce@example\.org[\s\S]*User unknown/);
  await captureAtBothWidths(page, 'verification-list');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
  assert.match(readFileSync((await download.path())!, 'utf8'), /bounce@example\.org/);

  await go('Verification');
  await page.getByRole('link', { name: 'Spring leads' }).waitFor();
  assert.match(await page.getByRole('region', { name: 'Verification lists' }).innerText(), /Spring leads\s+completed\s+4/);
});

test('verification: a list whose mail servers answer slowly shows its progress as addresses are done', async () => {
  // Two mail servers on other loopback addresses, on the port Postlane's checks connect to: one
  // takes a second over each RCPT, the other six.
  const mailboxes = { mailboxes: { user1: 'exists', user2: 'exists' } as const };
  const slow = await startMailboxServer({
    host: '127.0.0.5',
    port: app.sink.port,
    rcptDelayMs: 1000,
    domains: { 'slow.example': mailboxes },
  });
  const slower = await startMailboxServer({
    host: '127.0.0.6',
    port: app.sink.port,
    rcptDelayMs: 6000,
    domains: { 'slower.example': mailboxes },
  });
  try {
    for (const [name, ip] of [
      ['slow.example', '127.0.0.5'],
      ['slower.example', '127.0.0.6'],
    ]) {
      app.dns.set(name, 'MX', [{ exchange: `mx.${name}`, priority: 10 }]);
      app.dns.set(`mx.${name}`, 'A', [ip]);
    }
    await go('Verification');
    await page.getByRole('button', { name: 'New list' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Slow list');
    await dialog
      .getByLabel('Addresses')
      .fill(['a@example.org', 'user1@slow.example', 'user2@slow.example', 'user1@slower.example'].join('\n'));
    await dialog.getByRole('button', { name: 'Verify the list' }).click();
    await page.getByRole('heading', { name: 'List: Slow list' }).waitFor();
    // Part of the way: the page says how many are done, the bar between its ends.
    await page.getByText(/^[1-3] of 4 addresses verified$/).waitFor({ timeout: 20_000 });
    const value = Number(await page.getByRole('progressbar', { name: 'Verification progress' }).getAttribute('value'));
    assert.ok(value > 0 && value < 1, `progress ${value}`);
    await captureAtBothWidths(page, 'verification-list-progress');
    await page.getByText('4 of 4 addresses verified').waitFor({ timeout: 60_000 });
    await page.getByRole('img', { name: /Addresses by result/ }).waitFor();
  } finally {
    await slow.close();
    await slower.close();
  }
});

test('DMARC: collection off is said as the API says it; a report uploaded, its rows read, pass and fail charted by source', async () => {
  await go('DMARC');
  await page.getByText('No domains yet').waitFor();
  const created = await app.api.post('/v2/domains', { name: 'acme.test' });
  assert.equal(created.status, 201, created.text);
  await go('DMARC');
  await page.getByText('Collection is off for acme.test').waitFor();
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'dmarc', 'google-aggregate.xml');
  await page.getByRole('button', { name: 'Upload a report' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Report file').setInputFiles(fixture);
  await dialog.getByRole('button', { name: 'Upload' }).click();
  await dialog.getByRole('alert').filter({ hasText: 'DMARC report collection is off for this domain' }).waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Turned on in the domain's settings, from the link on the page.
  await page.getByRole('link', { name: 'its settings' }).click();
  await page.getByLabel('Receive DMARC reports').check();
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  await go('DMARC');
  await page.getByText('Reports arrive at the address').waitFor();
  await page.getByText('No messages reported in this period.').waitFor();

  await page.getByRole('button', { name: 'Upload a report' }).click();
  await dialog.getByLabel('Report file').setInputFiles(fixture);
  await dialog.getByRole('button', { name: 'Upload' }).click();
  await dialog.getByRole('region', { name: 'Report rows' }).waitFor();
  assert.match(await dialog.locator('.facts').first().innerText(), /Reporter\s+google\.com[\s\S]*Messages\s+50/);
  await captureAtBothWidths(page, 'dmarc-report');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await settled(page);

  // The chart: one bar per source, its passes and fails as the API counts them.
  const sources = (await app.api.get(`/v2/domains/${created.body.id}/dmarc/stats/sources`)).body.data;
  assert.ok(sources.length >= 2);
  for (const source of sources) {
    const bar = page.getByRole('img', {
      name: new RegExp(`^${source.source_ip.replace(/\./g, '\\.')} .*: Pass ${source.dmarc.pass}, Fail ${source.dmarc.fail}$`),
    });
    await bar.waitFor();
  }
  assert.ok(sources.some((s: any) => s.dmarc.fail > 0));
  // By country and network: the fixture's sources are documentation addresses, placed nowhere.
  const [country] = (await app.api.get(`/v2/domains/${created.body.id}/dmarc/stats/countries`)).body.data;
  assert.equal(country.country, null);
  await page
    .getByRole('img', { name: `Unknown country (${sources.length} sources): Pass ${country.dmarc.pass}, Fail ${country.dmarc.fail}` })
    .waitFor();
  await page.getByRole('img', { name: `Unknown network: Pass ${country.dmarc.pass}, Fail ${country.dmarc.fail}` }).waitFor();
  const summary = (await app.api.get(`/v2/domains/${created.body.id}/dmarc/stats/results`)).body.summary;
  assert.match(await page.locator('.facts').first().innerText(), new RegExp(`Messages\\s+${summary.message_count}`));
  assert.match(await page.getByRole('region', { name: 'DMARC reports' }).innerText(), /google\.com[\s\S]*aggregate\s+50/);
  await captureAtBothWidths(page, 'dmarc');

  // Filters: no forensic report yet; a period before the report shows nothing.
  await page.getByLabel('Type').selectOption('forensic');
  await page.getByText('No reports in this period.').waitFor();
  await page.getByLabel('Type').selectOption('');
  await page.getByLabel('To').fill('2025-12-31');
  await page.getByText('No messages reported in this period.').waitFor();
  await page.getByText('No reports in this period.').waitFor();
});
