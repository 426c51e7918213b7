// Writing a campaign in real Chromium: the block editor (a heading, text with a merge tag and
// its fallback inserted from the picker, a button moved into place, the footer's unsubscribe
// link), the preview at desktop and phone widths and as plain text, for a sample contact and
// for one without a name; a test send seen in the SMTP sink with the fallback applied; the send
// to a small audience; the sent campaign showing the content it went out with; and Duplicate
// opening the copy in the editor. Pages are scanned by axe-core and photographed at two widths.
import './campaign-env.ts';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { simpleParser } from 'mailparser';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/app.ts';
import { publishRecords } from '../helpers/sending.ts';
import { captureAtBothWidths, newContext, settled, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  const domain = (await app.api.post('/v2/domains', { name: 'acme.test' })).body;
  publishRecords(app.dns, domain.dns_records);
  assert.equal((await app.api.post(`/v2/domains/${domain.id}/verify`)).status, 200);
  assert.equal((await app.api.post('/v2/custom-fields', { key: 'plan', label: 'Plan', type: 'text' })).status, 201);
  const list = (await app.api.post('/v2/audiences', { name: 'Readers' })).body.id;
  assert.equal((await app.api.post('/v2/contacts', { email: 'ann@example.org', first_name: 'Ann', audiences: [list] })).status, 201);
  assert.equal((await app.api.post('/v2/contacts', { email: 'nameless@example.org', audiences: [list] })).status, 201);
  await signInFirstAdmin(page, app);
});

after(async () => {
  await browser?.close();
  await app?.close();
});

/** `eventually`, failing with what the page shows. */
async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  await eventually(check, ms).catch(async (error) => {
    throw new Error(`${error}: ${await page.locator('main').innerText()}`);
  });
}

async function mailTo(address: string) {
  const message = await eventually(async () => app.sink.messages.find((m) => m.rcptTo.includes(address)), 20_000);
  return simpleParser(message.raw);
}

const block = (name: string) => page.getByRole('listitem', { name });
const preview = () => page.frameLocator('iframe[title="Preview of the campaign"]');

test('a campaign written in blocks: merge tag with fallback, previews, a test send, the send, its content, and Duplicate', async () => {
  await page.goto(`${app.url}/dashboard/campaigns/new`);
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await settled(page);
  await page.getByLabel('Campaign name').fill('Spring sale');
  await page.getByLabel('From name').fill('Acme');
  await page.getByLabel('From address').fill('news@acme.test');
  await page.getByLabel('Subject').fill('News for {{first_name|"friend"}}');
  await page.getByLabel('Audience Readers').selectOption('include');

  // The starter: heading, text, footer. The heading and text are rewritten; the text gets a merge
  // tag with a fallback from the picker, which lists the custom fields too.
  await block('Block 1: Heading').getByLabel('Heading text').fill('Spring news');
  const text = block('Block 2: Text').getByLabel('Text', { exact: true });
  await text.fill('Hi ');
  await text.press('End');
  const picker = page.getByRole('group', { name: 'Merge tags' });
  assert.ok((await picker.getByLabel('Field').locator('option').allInnerTexts()).includes('Plan (custom)'));
  await picker.getByLabel('Field').selectOption('first_name');
  await picker.getByLabel('Fallback').fill('there');
  await picker.getByRole('button', { name: 'Insert merge tag' }).click();
  assert.equal(await text.inputValue(), 'Hi {{first_name|"there"}}');
  await text.fill(`${await text.inputValue()}, the **sale** starts now.`);

  // A button, added at the end and moved above the footer.
  await page.getByRole('group', { name: 'Add a block' }).getByRole('button', { name: '+ Button' }).click();
  await block('Block 4: Button').getByLabel('Button label').fill('Shop now');
  await block('Block 4: Button').getByLabel('Button link').fill('https://acme.test/shop');
  await page.getByRole('button', { name: 'Move block 4 up' }).click();
  await block('Block 3: Button').waitFor();
  await block('Block 4: Footer').waitFor();

  // Preview: desktop, as the sample contact and as one without a name; phone width; plain text.
  await preview().getByRole('heading', { name: 'Spring news' }).waitFor();
  await preview().getByText('Hi Ada, the sale starts now.').waitFor();
  await preview().getByRole('link', { name: 'Shop now' }).waitFor();
  await page.getByText('News for Ada', { exact: true }).waitFor();
  assert.equal(Math.round((await page.locator('iframe[title="Preview of the campaign"]').boundingBox())!.width), 600);
  await page.getByLabel('Contact').selectOption('blank');
  await preview().getByText('Hi there, the sale starts now.').waitFor();
  await page.getByText('News for friend', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Mobile' }).click();
  await until(async () => Math.round((await page.locator('iframe[title="Preview of the campaign"]').boundingBox())?.width ?? 0) === 375);
  await preview().getByText('Hi there, the sale starts now.').waitFor();
  await captureAtBothWidths(page, 'campaign-editor-mobile');
  await page.getByRole('button', { name: 'Plain text' }).click();
  const plain = await page.getByLabel('Plain-text preview').innerText();
  assert.match(
    plain,
    /Spring news\n\nHi there, the sale starts now\.\n\nShop now: https:\/\/acme\.test\/shop\n\nYou receive this because you subscribed\.\nUnsubscribe: #unsubscribe/,
  );
  await page.getByRole('button', { name: 'Desktop' }).click();
  await captureAtBothWidths(page, 'campaign-editor');

  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.getByRole('heading', { name: 'Campaign: Spring sale' }).waitFor();
  await settled(page);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const stored = (await app.api.get(`/v2/campaigns/${id}/content`)).body;
  assert.equal(stored.content_type, 'mjml');
  assert.equal(stored.content.format, 'postlane-blocks');
  assert.deepEqual(
    stored.content.blocks.map((b: { type: string }) => b.type),
    ['heading', 'text', 'button', 'footer'],
  );
  assert.match(stored.content.mjml, /<mjml>/);
  assert.match(stored.html, /Hi \{\{first_name\|"there"\}\}, the <strong>sale<\/strong>/);
  assert.match(stored.html, /href="\{\{unsubscribe_url\}\}"/);
  assert.match(stored.text, /Hi \{\{first_name\|"there"\}\}, the sale starts now\./);

  // A test to an address that is no contact: "[Test]" subject, fallbacks applied.
  await page.getByRole('button', { name: 'Send a test' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Test addresses').fill('tester@example.org');
  await dialog.getByRole('button', { name: 'Send test' }).click();
  await dialog.getByText('Test sent to tester@example.org.').waitFor();
  const test = await mailTo('tester@example.org');
  assert.equal(test.subject, '[Test] News for friend');
  assert.match(String(test.html), /Hi there, the <strong>sale<\/strong> starts now\./);
  assert.match(String(test.text), /Hi there, the sale starts now\./);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await settled(page);

  // The send: each reader's copy with their own values, the nameless one with the fallback.
  await page.getByRole('button', { name: 'Send or schedule' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Send now' }).click();
  await eventually(async () => (await app.api.get(`/v2/campaigns/${id}`)).body.status === 'sent', 30_000);
  const ann = await mailTo('ann@example.org');
  assert.equal(ann.subject, 'News for Ann');
  assert.match(String(ann.html), /Hi Ann, the <strong>sale<\/strong>/);
  const nameless = await mailTo('nameless@example.org');
  assert.equal(nameless.subject, 'News for friend');
  assert.match(String(nameless.html), /Hi there, the <strong>sale<\/strong>/);

  // The sent campaign shows what it was sent with.
  await page.getByRole('tab', { name: 'Content' }).click();
  const sent = page.frameLocator('iframe[title="Content of the campaign"]');
  await sent.getByRole('heading', { name: 'Spring news' }).waitFor();
  await sent.getByText('Hi Ada, the sale starts now.').waitFor();
  await page.getByRole('button', { name: 'Plain text' }).click();
  assert.match(await page.getByLabel('Plain-text preview').innerText(), /Shop now: https:\/\/acme\.test\/shop/);
  await captureAtBothWidths(page, 'campaign-sent-content');

  // Duplicate: a new draft with the same settings, opened in the editor on the same blocks.
  await page.getByRole('button', { name: 'Duplicate' }).click();
  await page.getByRole('heading', { name: 'Campaign: Spring sale (copy)' }).waitFor();
  await until(async () => !page.url().endsWith(id));
  await settled(page);
  const copyId = new URL(page.url()).pathname.split('/').pop()!;
  const copy = (await app.api.get(`/v2/campaigns/${copyId}`)).body;
  assert.equal(copy.status, 'draft');
  assert.equal(copy.subject, 'News for {{first_name|"friend"}}');
  assert.equal(copy.recipients.length, 1);
  await block('Block 1: Heading').getByLabel('Heading text').waitFor();
  assert.equal(await block('Block 1: Heading').getByLabel('Heading text').inputValue(), 'Spring news');
  assert.equal(await block('Block 3: Button').getByLabel('Button label').inputValue(), 'Shop now');
  await preview().getByText('Hi Ada, the sale starts now.').waitFor();

  // Changing the copy's content: saved as a new draft that replaces it, the blocks kept.
  await block('Block 1: Heading').getByLabel('Heading text').fill('Spring news, part two');
  await page.getByRole('button', { name: 'Save new content' }).click();
  await until(async () => !page.url().endsWith(copyId));
  await page.getByRole('heading', { name: 'Campaign: Spring sale (copy)' }).waitFor();
  const replaced = new URL(page.url()).pathname.split('/').pop()!;
  assert.equal((await app.api.get(`/v2/campaigns/${copyId}`)).status, 404);
  assert.match((await app.api.get(`/v2/campaigns/${replaced}/content`)).body.html, /Spring news, part two/);
});

test('an HTML template written with blocks: colour pickers, a variable with a default, saved as its HTML, text and source', async () => {
  const created = await app.api.post('/v2/templates', { name: 'Receipt', alias: 'receipt', editor: 'html', html: '<p>Old</p>' });
  assert.equal(created.status, 201, created.text);
  const id = created.body.data.id;
  await page.goto(`${app.url}/dashboard/templates/${id}`);
  await page.getByRole('heading', { name: 'Template: Receipt' }).waitFor();
  await settled(page);
  await page.getByRole('tab', { name: 'Blocks' }).click();
  await block('Block 1: Heading').getByLabel('Heading text').fill('Thanks ');
  await block('Block 1: Heading').getByLabel('Heading text').press('End');
  const picker = page.getByRole('group', { name: 'Variables' });
  await picker.getByLabel('Variable').fill('customer.name');
  await picker.getByLabel('Fallback').fill('friend');
  await picker.getByRole('button', { name: 'Insert variable' }).click();
  assert.equal(await block('Block 1: Heading').getByLabel('Heading text').inputValue(), 'Thanks {{customer.name|"friend"}}');
  await page.getByLabel('Background colour').fill('#fde68a');
  await page
    .frameLocator('iframe[title="Preview of the template"]')
    .getByRole('heading', { name: 'Thanks {{customer.name|"friend"}}' })
    .waitFor();
  await captureAtBothWidths(page, 'template-blocks');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('status').filter({ hasText: /./ }).first().waitFor();
  const saved = await eventually(async () => {
    const t = (await app.api.get(`/v2/templates/${id}`)).body.data;
    return t.source?.format === 'postlane-blocks' && t;
  }, 10_000);
  assert.equal(saved.source.settings.background, '#fde68a');
  assert.match(saved.html, /Thanks \{\{customer\.name\|"friend"\}\}/);
  assert.match(saved.html, /#fde68a/i);
  assert.match(saved.text, /^Thanks \{\{customer\.name\|"friend"\}\}/);
});
