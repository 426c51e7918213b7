// The form builder in real Chromium, as a user builds a form: two fields added to the starter,
// one moved up with the keyboard and marked required, the live preview (drawn by the embed
// script's own code) following every change and each form type; published, the embed snippet
// copied and placed on a site of another origin, where a visitor submits it (the required field
// refused first); the submission then listed on the form's page. Scanned by axe-core and
// photographed at 1440 and 390 px, light and dark.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/app.ts';
import { startSite, type SitePage } from '../forms/helpers.ts';
import { captureAtBothWidths, newContext, settled, signInFirstAdmin, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let site: SitePage | undefined;

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  await signInFirstAdmin(page, app);
});

after(async () => {
  await site?.close();
  await browser?.close();
  await app?.close();
});

const preview = () => page.locator('[data-form-preview]');
/** The labels of the preview's fields, in order (read inside its shadow root). */
const previewLabels = () =>
  preview().evaluate((host) =>
    [...host.shadowRoot!.querySelectorAll('form label:not(.ch), form legend')]
      .map((l) => (l.textContent ?? '').trim())
      .filter((t) => t && t !== 'Leave this field empty'),
  );
const block = (id: string) => page.locator(`[data-block="${id}"]`);

test('a form is built with the builder and its live preview, published, embedded on a site from the copied snippet, submitted there and the submission listed', async () => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Forms', exact: true }).click();
  await page.getByText('No forms.').waitFor();
  await page.getByRole('button', { name: 'New form' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Newsletter sign-up');
  await dialog.getByLabel('Form type').selectOption('embed');
  await dialog.getByRole('button', { name: 'Create form' }).click();
  await page.getByRole('heading', { name: 'Form: Newsletter sign-up' }).waitFor();
  await settled(page);
  const formId = new URL(page.url()).pathname.split('/').pop()!;

  // The builder opens on the starter; the preview draws it as the embed would.
  assert.equal(await page.getByRole('tab', { name: 'Builder' }).getAttribute('aria-selected'), 'true');
  await preview().getByRole('heading', { name: 'Subscribe to our newsletter' }).waitFor();
  assert.deepEqual(await previewLabels(), ['Email address *']);

  // Two fields added (before the submit button), each shown in the preview as it is typed.
  await page.getByLabel('New block in Sign up').selectOption('text_input');
  await page.getByRole('button', { name: 'Add block to Sign up' }).click();
  await block('text-input').getByLabel('Label').fill('First name');
  await preview().getByLabel('First name').waitFor();
  assert.equal(await block('text-input').getByLabel('Name', { exact: true }).inputValue(), 'first_name', 'the name follows the label');
  await block('text-input').getByLabel('Placeholder').fill('Ada');
  await preview().getByPlaceholder('Ada').waitFor();
  await page.getByLabel('New block in Sign up').selectOption('dropdown');
  await page.getByRole('button', { name: 'Add block to Sign up' }).click();
  await block('dropdown').getByLabel('Label').fill('Topic');
  await block('dropdown').getByLabel('Options').fill('News\nOffers');
  await preview().getByRole('combobox', { name: 'Topic' }).locator('option', { hasText: 'Offers' }).waitFor({ state: 'attached' });
  assert.deepEqual(await previewLabels(), ['Email address *', 'First name', 'Topic']);

  // A third one added and removed again with the keyboard: the focus goes to the block in its place.
  await page.getByLabel('New block in Sign up').selectOption('phone');
  await page.getByRole('button', { name: 'Add block to Sign up' }).click();
  await preview().getByLabel('Phone number').waitFor();
  await block('phone')
    .getByRole('button', { name: /^Remove/ })
    .focus();
  await page.keyboard.press('Enter');
  await eventually(async () => (await previewLabels()).length === 3, 5000);
  assert.equal(await block('phone').count(), 0);
  assert.ok(await page.evaluate(() => Boolean(document.activeElement?.closest('[data-block]'))), 'the focus stays in the builder');

  // Reordered with the keyboard: the focus stays on the moved field's button.
  await block('text-input')
    .getByRole('button', { name: /^Move up/ })
    .focus();
  await page.keyboard.press('Enter');
  await eventually(async () => (await previewLabels())[0] === 'First name', 5000);
  assert.deepEqual(await previewLabels(), ['First name', 'Email address *', 'Topic']);
  assert.equal(await page.evaluate(() => document.activeElement?.closest('[data-block]')?.getAttribute('data-block')), 'text-input');
  // Marked required: the preview says so.
  await block('text-input').getByLabel('Required').check();
  await eventually(async () => (await previewLabels())[0] === 'First name *', 5000);

  // Each form type has its own frame in the preview and its own settings.
  for (const [type, name, setting] of [
    ['popup', 'Preview: popup form', 'Overlay color'],
    ['flyout', 'Preview: flyout form', 'Position'],
    ['banner', 'Preview: banner form', 'Position'],
    ['full_page', 'Preview: full page form', 'Overlay color'],
    ['embed', 'Preview: embed form', 'Largest width (px)'],
  ]) {
    await page.getByLabel('Form type').selectOption(type);
    await page.locator(`[data-form-preview="${type}"]`).waitFor();
    await preview().locator(`[role="region"][aria-label="${name}"]`).waitFor();
    await (setting === 'Position'
      ? page.getByRole('combobox', { name: /^Position/ })
      : page.getByLabel(setting, { exact: true })
    ).waitFor();
    assert.equal((await page.getByLabel('Delay (seconds)').count()) > 0, type !== 'embed', `targeting for ${type}`);
    if (type !== 'embed') await captureAtBothWidths(page, `form-preview-${type}`);
  }
  await page.getByLabel('Button color').fill('#166534');
  await page.getByText('The definition is ready to publish.').waitFor();
  await captureAtBothWidths(page, 'form-builder');

  // Published: the unsaved changes are saved first.
  await page.getByRole('button', { name: 'Save and publish' }).click();
  await page.getByRole('button', { name: 'Unpublish' }).waitFor();
  const form = (await app.api.get(`/v2/forms/${formId}`)).body;
  assert.equal(form.status, 'live');
  assert.equal(form.type, 'embed');
  assert.equal(form.definition.styles.button_color, '#166534');
  const blocks = form.definition.steps[0].blocks;
  assert.deepEqual(
    blocks.map((b: any) => b.name ?? b.type),
    ['text', 'first_name', 'email', 'topic', 'button'],
  );
  assert.equal(blocks[1].required, true);
  assert.deepEqual(blocks[3].options, ['News', 'Offers']);

  // The embed snippet, copied: the script tag and the element where the form goes.
  await page.getByRole('tab', { name: 'Embed' }).click();
  await page.getByRole('button', { name: 'Copy the embed script tag' }).click();
  const script = await page.evaluate(() => navigator.clipboard.readText());
  await page.getByRole('button', { name: 'Copy the form placeholder' }).click();
  const placeholder = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(placeholder, `<div data-postlane-form="${form.token}"></div>`);
  await captureAtBothWidths(page, 'form-embed-snippet');

  // A site of another origin places the copied snippet; a visitor submits the form there.
  site = await startSite(/src="([^"]+)"/.exec(script)![1], placeholder);
  const visitor = await browser.newContext();
  const sitePage = await visitor.newPage();
  await sitePage.goto(site.url);
  const embedded = sitePage.locator('[data-postlane="embed"]');
  await embedded.getByLabel('Email address').fill('ann@example.org');
  await embedded.getByLabel('Topic').selectOption('Offers');
  await embedded.getByRole('button', { name: 'Subscribe' }).click();
  await embedded.getByText('This field is required', { exact: true }).waitFor(); // First name is required now
  await embedded.getByLabel('First name').fill('Ann');
  await embedded.getByRole('button', { name: 'Subscribe' }).click();
  await embedded.getByRole('heading', { name: 'Thanks for subscribing!' }).waitFor({ timeout: 30_000 });
  await visitor.close();

  // The submission, listed on the form's page.
  await page.getByRole('tab', { name: 'Submissions' }).click();
  await settled(page);
  const rows = page.getByRole('region', { name: 'Submissions' });
  await eventually(async () => {
    if ((await rows.innerText()).includes('ann@example.org')) return true;
    await page.getByRole('button', { name: 'Refresh' }).click();
    await settled(page);
    return false;
  }, 10_000);
  const text = await rows.innerText();
  assert.match(text, /first_name: Ann/);
  assert.match(text, /topic: Offers/);
  assert.ok(text.includes(site.url), text);
  await captureAtBothWidths(page, 'form-builder-submissions');
});
