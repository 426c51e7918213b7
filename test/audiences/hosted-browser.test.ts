// The hosted subscribe page in real Chromium: no serious or critical accessibility violation
// (axe-core) on the form, its error state and the result; usable with the keyboard alone and
// with JavaScript turned off; styled and working under its own Content-Security-Policy, which
// Chromium enforces without a single violation. (The axe scan injects a script, so it runs in
// a context that bypasses the policy; the person's context does not.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { launchBrowser } from '../helpers/browser.ts';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let app: TestApp;
let browser: Browser;
before(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app.close();
});

async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axeSource });
  const result = (await page.evaluate(() => (window as any).axe.run(document))) as {
    violations: Array<{ id: string; impact: string; help: string }>;
  };
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

test('subscribe page: accessible, keyboard only, no JavaScript needed', async () => {
  const audience = (
    await app.api.post('/v2/audiences', { name: 'Browser list', visibility: 'public', public_description: 'Tested in Chromium' })
  ).body;
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  const first = await page.goto(`${app.url}/subscribe/${audience.token}`);
  assert.match((await first!.allHeaders())['content-security-policy'], /default-src 'none'/);
  assert.equal(await page.title(), 'Subscribe to Browser list');
  // The inline style sheet is allowed by its hash: the page is styled.
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(245, 245, 245)');
  const scanContext = await browser.newContext({ bypassCSP: true });
  const scan = await scanContext.newPage();
  await scan.goto(`${app.url}/subscribe/${audience.token}`);
  assert.deepEqual(await seriousViolations(scan), []);

  // Keyboard only: Tab to the email field, type, Enter submits the form.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'email');
  await page.keyboard.type('not an address');
  await page.keyboard.press('Tab');
  await page.keyboard.type('Kim');
  // The browser's own type=email check would stop the form first; novalidate lets the
  // server's check, the one every client gets, answer.
  await page.evaluate(() => document.querySelector('form')?.setAttribute('novalidate', ''));
  // waitForLoadState alone can return on the old page before the form's navigation starts:
  // wait for the answer page's own content instead.
  await page.keyboard.press('Enter');
  await page.locator('[role=alert]').waitFor();
  assert.match((await page.textContent('[role=alert]')) ?? '', /valid email address/);
  await scan.setContent(await page.content());
  assert.deepEqual(await seriousViolations(scan), [], 'the error state');

  await page.fill('#email', 'kim@example.com');
  await page.focus('#email');
  await page.keyboard.press('Enter');
  await page.locator('h1', { hasText: 'You are subscribed' }).waitFor();
  assert.match((await page.textContent('h1')) ?? '', /You are subscribed/);
  assert.equal((await app.api.get(`/v2/audiences/${audience.id}/subscribers/kim%40example.com`)).body.contact.first_name, 'Kim');
  await scan.setContent(await page.content());
  assert.deepEqual(await seriousViolations(scan), [], 'the result page');
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).backgroundColor), 'rgb(255, 255, 255)');
  assert.deepEqual(violations, [], 'no Content-Security-Policy violation');
  await context.close();
  await scanContext.close();
});
