// The automations pages in real Chromium, driven as a user would: an automation created, its
// workflow edited as JSON with the problems shown at their field paths while typing (and the
// API's refusal at the same paths after saving), the diagram; started, run by hand with a
// payload, the run followed to completion and opened with its steps, the email it sent found in
// the SMTP sink; the per-step funnel; runs filtered by status; pause, resume and stop; the list
// filtered by status. Every page is scanned by axe-core and photographed at 1440 and 390 px, light and dark.
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
  page.on('dialog', (dialog) => void dialog.accept()); // "Stop …?" confirmations
  // A verified sending domain and a template, made over the API (their pages have their own tests).
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

async function go(label: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
  await settled(page);
}

/** `eventually`, failing with what the page shows. */
async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  await eventually(check, ms).catch(async (error) => {
    throw new Error(`${error}: ${await page.locator('main').innerText()}`);
  });
}

const statusFact = async () => (await page.locator('.facts').first().innerText()).match(/Status\s+(\w+)/)?.[1];
const workflow = (mail: Record<string, unknown>) =>
  JSON.stringify(
    {
      description: 'Greets whoever it is run for',
      settings: { on_step_failure: 'stop' },
      steps: [
        { key: 'start', type: 'trigger', trigger: 'system.manual' },
        {
          key: 'mail',
          type: 'action',
          action: 'send_email',
          config: { type: 'template', template_id: 'welcome', to: '{{payload.to}}', ...mail },
        },
        { key: 'done', type: 'action', action: 'end' },
      ],
      connections: [
        { from: 'start', to: 'mail' },
        { from: 'mail', to: 'done' },
      ],
    },
    null,
    2,
  );

test("an automation is created and its workflow edited: problems at their field paths while typing, the API's refusal at its paths, then saved", async () => {
  await go('Automations');
  await page.getByText('No automations.').waitFor();
  await captureAtBothWidths(page, 'automations-empty');
  await page.getByRole('button', { name: 'New automation' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Welcome');
  await dialog.getByLabel('Runs for each').selectOption('event');
  await dialog.getByRole('button', { name: 'Create automation' }).click();
  await page.getByRole('heading', { name: 'Automation: Welcome' }).waitFor();
  await settled(page);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  assert.equal((await app.api.get(`/v2/automations/${id}`)).body.data.status, 'draft');
  // The builder opens first; the JSON editor is the second tab.
  await page.getByRole('tab', { name: 'JSON' }).click();
  const editor = page.getByLabel('Workflow (JSON)');
  await page.getByText(/The structure is valid/).waitFor();
  // The starter is drawn: trigger → wait → end.
  assert.match(
    await page.getByRole('list', { name: 'Workflow diagram' }).innerText(),
    /start\s+trigger: system\.manual[\s\S]*→ pause[\s\S]*pause\s+action: wait[\s\S]*done\s+action: end/,
  );

  // Broken JSON: said where; nothing can be saved.
  await editor.fill('{\n  "steps": []\n  "connections": []\n}');
  await page.getByText(/Not valid JSON: .*line \d+, column \d+/).waitFor();
  assert.ok(await page.getByRole('button', { name: 'Save workflow' }).isDisabled());

  // Structure problems while typing, at their paths, in the list and on the diagram's step.
  await editor.fill(
    workflow({})
      .replace('"send_email"', '"teleport"')
      .replace(/("from": "start",\s*"to": )"mail"/, '$1"nowhere"'),
  );
  await page.locator('.warning [data-path="steps.1.action"]').filter({ hasText: 'The action "teleport" does not exist.' }).waitFor();
  assert.match(await page.locator('.warning [data-path="connections.0.to"]').innerText(), /The to must be the key of a step\./);
  assert.match(await page.locator('[data-step="mail"]').innerText(), /steps\.1\.action: The action "teleport" does not exist\./);
  assert.match(await page.locator('[data-step="start"]').innerText(), /must be connected to exactly one first action/);
  await captureAtBothWidths(page, 'automation-problems');

  // Valid structure, but a sender on a domain that is not verified: the API says so at its path.
  await editor.fill(workflow({ from: 'news@elsewhere.test' }));
  await page.getByText(/The structure is valid/).waitFor();
  await page.getByRole('button', { name: 'Save workflow' }).click();
  const refused = await app.api.post(`/v2/automations/${id}`, JSON.parse(workflow({ from: 'news@elsewhere.test' })));
  assert.equal(refused.status, 400);
  const message = refused.body.errors['steps.1.config.from'][0];
  await page.locator('.error [data-path="steps.1.config.from"]').filter({ hasText: message }).waitFor();
  assert.ok((await page.locator('[data-step="mail"]').innerText()).includes(message));

  // Fixed and saved: the API holds it, the diagram draws it.
  await editor.fill(workflow({ from: 'hello@acme.test' }));
  await page.getByRole('button', { name: 'Save workflow' }).click();
  await page.getByText('Saved.').waitFor();
  const saved = (await app.api.get(`/v2/automations/${id}`)).body.data;
  assert.deepEqual(
    saved.steps.map((s: any) => s.key),
    ['start', 'mail', 'done'],
  );
  assert.equal(saved.steps[1].config.from, 'hello@acme.test');
  assert.equal(saved.description, 'Greets whoever it is run for');
  assert.equal(await page.locator('.error [data-path]').count(), 0);
  // The picture: three boxes in three levels, two arrows.
  assert.equal(await page.locator('svg.picture [data-node]').count(), 3);
  assert.deepEqual(await page.locator('svg.picture [data-edge]').evaluateAll((edges) => edges.map((e) => e.getAttribute('data-edge'))), [
    'start>mail',
    'mail>done',
  ]);
  assert.equal(await page.getByRole('img', { name: /3 steps in 3 levels, 2 connections/ }).count(), 1);
  await captureAtBothWidths(page, 'automation-editor');
});

test('started, run by hand, the run followed to completion and opened, its email delivered; the funnel; runs filtered; pause, resume, stop; the list filtered', async () => {
  await go('Automations');
  await page.getByRole('link', { name: 'Welcome' }).click();
  await page.getByRole('heading', { name: 'Automation: Welcome' }).waitFor();
  await settled(page);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await until(async () => (await statusFact()) === 'running');
  assert.equal((await app.api.get(`/v2/automations/${id}`)).body.data.status, 'running');

  // Run now with a payload: the Runs tab shows the run, which completes without a reload.
  await page.getByRole('button', { name: 'Run now' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Payload (JSON)').fill('{"to": "ada@example.org"}');
  await dialog.getByRole('button', { name: 'Start a run' }).click();
  const runs = page.getByRole('region', { name: 'Runs' });
  await until(async () => /completed/.test(await runs.innerText()), 15_000);
  const [run] = (await app.api.get(`/v2/automations/${id}/runs`)).body.data;
  assert.equal(run.status, 'completed', JSON.stringify(run));
  await app.sink.waitForMessages(1, 15_000);
  assert.ok(app.sink.messages.some((m) => m.rcptTo[0] === 'ada@example.org'));
  await captureAtBothWidths(page, 'automation-runs');

  // Runs filtered by status.
  const runStatus = page.getByRole('combobox', { name: /^Run status/ });
  await runStatus.selectOption('failed');
  await until(async () => /No runs\./.test(await runs.innerText()));
  await runStatus.selectOption('completed');
  await until(async () => (await runs.innerText()).includes(run.id));

  // The run: its steps and what each did.
  await page.getByRole('link', { name: run.id }).click();
  await page.getByRole('heading', { name: 'Automation run' }).waitFor();
  await settled(page);
  assert.match(await page.locator('.facts').innerText(), new RegExp(`Run\\s+${run.id}`));
  const steps = page.getByRole('list', { name: 'Steps of the run' });
  await until(async () => /mail\s+completed[\s\S]*ada@example\.org[\s\S]*done\s+completed/.test(await steps.innerText()));
  assert.match(await page.getByLabel('Trigger payload').innerText(), /"to": "ada@example\.org"/);
  await captureAtBothWidths(page, 'automation-run');
  // The email the step sent opens on the emails page.
  await page.getByRole('link', { name: 'The email of step mail' }).click();
  await page.waitForURL(/\/dashboard\/emails\/em_/);
  await settled(page);
  await until(async () => (await page.locator('main').innerText()).includes('ada@example.org'));
  await page.goBack();
  await page.getByRole('heading', { name: 'Automation run' }).waitFor();

  // The statistics: the steps as a funnel, and the email step's own funnel once it is delivered.
  await page.getByRole('link', { name: 'Back to the automation' }).click();
  await page.getByRole('heading', { name: 'Automation: Welcome' }).waitFor();
  await settled(page);
  await page.getByRole('tab', { name: 'Statistics' }).click();
  const visits = page.locator('figure', { hasText: 'Runs reaching each step' });
  await until(async () => /^1 /.test((await visits.locator('[data-bar="mail"] .bars-value').innerText()).trim()));
  const emails = page.locator('figure', { hasText: 'Emails of step mail' });
  await until(async () => {
    if (/^1 /.test((await emails.locator('[data-bar="Delivered"] .bars-value').innerText()).trim())) return true;
    await page.getByRole('button', { name: 'Refresh' }).click();
    await settled(page);
    return false;
  }, 15_000);
  assert.equal((await app.api.get(`/v2/automations/${id}/stats`)).body.data.mail.funnel.delivered, 1);
  await captureAtBothWidths(page, 'automation-stats');
  // The diagram carries each step's figures too. The tabs answer the arrow keys (the ARIA tabs
  // pattern): Right on the last tab goes round to the first and takes the focus along.
  await page.getByRole('tab', { name: 'Statistics' }).focus();
  await page.keyboard.press('ArrowRight');
  await page.getByRole('tab', { name: 'Builder', selected: true }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Builder');
  await until(async () => /1 visit · 1 completed/.test(await page.locator('[data-step="mail"]').innerText()));
  await page.getByRole('tab', { name: 'JSON' }).click();
  await until(async () => /1 visit · 1 completed/.test(await page.locator('[data-step="mail"]').innerText()));
  assert.match((await page.locator('svg.picture [data-node="mail"]').textContent()) ?? '', /1 run$/);
  assert.doesNotMatch((await page.locator('svg.picture [data-node="start"]').textContent()) ?? '', /run/);
  await captureAtBothWidths(page, 'automation-diagram-stats');

  // Pause, resume, stop.
  await page.getByRole('button', { name: 'Pause' }).click();
  await until(async () => (await statusFact()) === 'paused');
  assert.equal((await app.api.get(`/v2/automations/${id}`)).body.data.status, 'paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await until(async () => (await statusFact()) === 'running');
  await page.getByRole('button', { name: 'Stop' }).click();
  await until(async () => (await statusFact()) === 'stopped');
  assert.equal((await app.api.get(`/v2/automations/${id}`)).body.data.status, 'stopped');

  // The list, filtered by status.
  await go('Automations');
  const list = () => page.getByRole('region', { name: 'Automation list' }).innerText();
  const status = page.getByRole('combobox', { name: /^Status/ });
  await status.selectOption('draft');
  await until(async () => /No automations\./.test(await list()));
  await status.selectOption('stopped');
  await until(async () => (await list()).includes('Welcome'));
  await captureAtBothWidths(page, 'automations');
});
