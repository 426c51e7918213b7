// The automation builder in real Chromium: an automation built step by step without touching
// JSON (a trigger, a wait and a send_email picked from the catalogue, each configured through its
// form), the validate endpoint's problems shown on the step and field they belong to while
// building, then saved and started; a run triggered over the API goes through all three steps
// and its email reaches the SMTP sink. A condition's yes and no branches are built too. Scanned by
// axe-core and photographed at both widths, light and dark.
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

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  const domain = (await app.api.post('/v2/domains', { name: 'acme.test' })).body;
  publishRecords(app.dns, domain.dns_records);
  assert.equal((await app.api.post(`/v2/domains/${domain.id}/verify`)).status, 200);
  const template = await app.api.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Welcome aboard',
    html: '<p>Hello there</p>',
  });
  assert.equal(template.status, 201, template.text);
  await signInFirstAdmin(page, app);
});

after(async () => {
  await browser?.close();
  await app?.close();
});

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  await eventually(check, ms).catch(async (error) => {
    throw new Error(`${error}: ${await page.locator('main').innerText()}`);
  });
}

async function create(name: string): Promise<string> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Automations', exact: true }).click();
  await settled(page);
  await page.getByRole('button', { name: 'New automation' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('Runs for each').selectOption('event');
  await dialog.getByLabel('Start with').selectOption('trigger');
  await dialog.getByRole('button', { name: 'Create automation' }).click();
  await page.getByRole('heading', { name: `Automation: ${name}` }).waitFor();
  await settled(page);
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Picks a type (or an existing step) at a slot of the builder and adds it. */
async function addAt(slot: string, choice: string): Promise<void> {
  const at = page.locator(`[data-slot="${slot}"]`);
  await at.getByRole('combobox').selectOption(choice);
  await at.getByRole('button', { name: /^Add/ }).click();
}

const step = (key: string) => page.locator(`[data-step="${key}"]`).first();

test("a condition's yes and no branches are built and connected", async () => {
  const id = await create('Branches');
  await addAt('start:default', 'condition');
  const condition = step('condition');
  await condition.getByRole('region', { name: 'If yes of condition' }).waitFor();
  await addAt('condition:yes', 'end');
  await addAt('condition:no', 'wait');
  // Connected on the canvas: dragged from wait's handle to the end step.
  const canvas = page.locator('.fb-canvas');
  await until(async () => (await canvas.locator('.react-flow__node').count()) === 4);
  // A person's drag: press on the handle, move there in several steps (React Flow follows the
  // pointer's moves), release. Tried again if a re-layout moved a handle under the pointer.
  const connected = page.locator('[data-slot="wait:default"]').getByText('continues at');
  for (let attempt = 0; attempt < 3 && !(await connected.isVisible()); attempt++) {
    await canvas.scrollIntoViewIfNeeded();
    const from = (await canvas.locator('.react-flow__node[data-id="wait"] .react-flow__handle.source').boundingBox())!;
    const to = (await canvas.locator('.react-flow__node[data-id="end"] .react-flow__handle.target').boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 12 });
    await page.mouse.up();
    await connected.waitFor({ timeout: 5000 }).catch(() => undefined);
  }
  await connected.waitFor();
  await until(async () => (await canvas.locator('.react-flow__edge').count()) === 4);
  await captureAtBothWidths(page, 'automation-builder-branches');
  // What the builder made, as the JSON tab shows it (the condition's filter is the JSON tab's job).
  await page.getByRole('tab', { name: 'JSON' }).click();
  const workflow = JSON.parse(await page.getByLabel('Workflow (JSON)').inputValue());
  assert.deepEqual(workflow.connections.map((c: any) => `${c.from}>${c.to}:${c.branch ?? 'default'}`).sort(), [
    'condition>end:yes',
    'condition>wait:no',
    'start>condition:default',
    'wait>end:default',
  ]);
  assert.equal((await app.api.get(`/v2/automations/${id}`)).body.data.steps.length, 1);
});

test('a trigger, a wait and a send_email built without JSON, problems at their step and field, saved, started, and a run goes through', async () => {
  const id = await create('Onboarding');
  assert.equal(await page.getByRole('tab', { name: 'Builder', selected: true }).count(), 1);
  // Only the trigger (the starter's for the context); it can be swapped for another from the catalogue.
  await step('start').getByRole('button', { name: 'Remove start' }).click();
  await page.getByLabel('Add a trigger').waitFor();
  await captureAtBothWidths(page, 'automation-builder-empty');
  await addAt('trigger', 'system.manual');
  await step('start').waitFor();
  await addAt('start:default', 'wait');
  await step('wait')
    .getByLabel(/^Seconds/)
    .fill('1');
  await addAt('wait:default', 'send_email');
  const mail = step('send_email');
  // The validate endpoint's answer lands on the step and on its field while building.
  await mail.locator('[data-field="template_id"] .field-error').filter({ hasText: 'The template_id is required.' }).waitFor();
  assert.equal(await mail.getByLabel(/^Template id/).getAttribute('aria-invalid'), 'true');
  assert.match(await mail.getByRole('list', { name: 'Problems of step send_email' }).innerText(), /steps\.2\.config\.template_id/);
  await captureAtBothWidths(page, 'automation-builder-problems');

  await mail.getByLabel(/^Template id/).fill('welcome');
  await mail.getByLabel(/^To\b/).fill('{{payload.to}}');
  await page.getByText('Valid: ready to save.').waitFor();
  assert.equal(await page.locator('.flow-builder .problems').count(), 0);
  // The canvas draws the three steps and the two arrows between them.
  const canvas = page.locator('.fb-canvas');
  await until(async () => (await canvas.locator('.react-flow__node').count()) === 3);
  assert.deepEqual(await canvas.locator('.react-flow__node').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-id'))), [
    'start',
    'wait',
    'send_email',
  ]);
  assert.equal(await canvas.locator('.react-flow__edge').count(), 2);
  // Tab reaches the builder's controls in the page's order.
  await mail.getByLabel(/^Template id/).focus();
  await page.keyboard.press('Tab');
  assert.equal(
    await page.evaluate(() => (document.activeElement as HTMLElement).closest('[data-step]')?.getAttribute('data-step')),
    'send_email',
  );
  await captureAtBothWidths(page, 'automation-builder');

  await page.getByRole('button', { name: 'Save workflow' }).click();
  await page.getByText('Saved.').waitFor();
  const saved = (await app.api.get(`/v2/automations/${id}`)).body.data;
  assert.deepEqual(
    saved.steps.map((s: any) => [s.key, s.trigger ?? s.action]),
    [
      ['start', 'system.manual'],
      ['wait', 'wait'],
      ['send_email', 'send_email'],
    ],
  );
  assert.deepEqual(
    saved.connections.map((c: any) => `${c.from}>${c.to}`),
    ['start>wait', 'wait>send_email'],
  );
  assert.deepEqual(saved.steps[2].config, { type: 'template', template_id: 'welcome', to: '{{payload.to}}' });
  assert.equal(saved.steps[1].config.seconds, 1);

  // The JSON tab shows the same workflow.
  await page.getByRole('tab', { name: 'JSON' }).click();
  assert.match(await page.getByLabel('Workflow (JSON)').inputValue(), /"template_id": "welcome"/);
  await page.getByRole('tab', { name: 'Builder' }).click();

  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await until(async () => (await app.api.get(`/v2/automations/${id}`)).body.data.status === 'running');
  const triggered = await app.api.post(`/v2/automations/${id}/trigger`, { payload: { to: 'grace@example.org' } });
  assert.ok(triggered.status < 300, triggered.text);
  let run: any;
  await eventually(async () => {
    [run] = (await app.api.get(`/v2/automations/${id}/runs`)).body.data;
    return run?.status === 'completed';
  }, 20_000);
  assert.ok(
    run.run_steps.some((s: any) => s.step_key === 'wait' && s.status === 'completed'),
    JSON.stringify(run.run_steps),
  );
  assert.ok(
    run.run_steps.some((s: any) => s.step_key === 'send_email' && s.status === 'completed'),
    JSON.stringify(run.run_steps),
  );
  await app.sink.waitForMessages(1, 15_000);
  assert.ok(app.sink.messages.some((m) => m.rcptTo[0] === 'grace@example.org'));
  await page.getByRole('tab', { name: 'Runs' }).click();
  await until(async () => /completed/.test(await page.getByRole('region', { name: 'Runs' }).innerText()), 15_000);
});
