// The dashboard's boundaries in real Chromium: sign-in refuses a wrong password and, after too
// many, has the browser prove some work before the right password gets in; a page on another origin cannot change anything with the user's cookie; a
// member of workspace A never sees workspace B; signing out leaves nothing usable behind.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { createWorkspace } from '../../src/resources/workspaces/service.ts';
import { createUser } from '../../src/resources/users/service.ts';
import { SIGN_IN_PER_ACCOUNT } from '../../src/resources/users/sessions.ts';
import { captureAtBothWidths, newContext, settled, startDashboardApp, type DashboardApp } from './helpers.ts';

let app: DashboardApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let evil: Server;
let evilUrl = '';
const PASSWORD = 'a long enough password';

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  context = await newContext(browser);
  page = await context.newPage();
  // Another origin on the same host (so the same site: the SameSite cookie IS sent, and only
  // the origin check and the CSRF token stand in the way).
  evil = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end(`<!doctype html><html lang="en"><title>evil</title><body>
      <form id="f" method="POST" action="${app.url}/v2/api-keys" enctype="text/plain">
        <input name='{"name":"planted","x":"' value='"}'>
      </form>
      <script>
        fetch('${app.url}/v2/api-keys', { method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"name":"planted-by-fetch"}' })
          .finally(() => document.getElementById('f').submit());
      </script></body></html>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  const address = evil.address();
  evilUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => evil?.close(resolve));
  await app?.close();
});

async function userIn(email: string, workspaceId: string, role: 'admin' | 'member'): Promise<void> {
  const created = await createUser(app.running.ctx.db, { email, workspaceId, role }, app.url);
  if (!created.url) return; // already has a password: the membership is all
  const response = await fetch(`${app.url}/auth/invitations/${created.url!.split('#')[1]}/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: PASSWORD }),
  });
  assert.equal(response.status, 200);
}

async function signInAs(email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test("sign-in refuses a wrong password with the API's words; after too many, the browser proves work and the right password still gets in", async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'Limited', verified: true });
  await userIn('limited@example.org', workspace.id, 'member');
  await page.goto(`${app.url}/dashboard/`);
  await page.getByRole('heading', { name: 'Sign in to Postlane' }).waitFor();
  await captureAtBothWidths(page, 'sign-in');
  await signInAs('limited@example.org', 'wrong password');
  await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
  await captureAtBothWidths(page, 'sign-in-refused');
  for (let i = 1; i < SIGN_IN_PER_ACCOUNT; i++) {
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign in' }).and(page.locator(':not([disabled])')).waitFor();
  }
  // Now this browser, unknown to the account, is asked for proof of work: it solves it, says so, and is
  // then told the password is wrong, as before.
  const challenged = page.waitForResponse((r) => r.url() === `${app.url}/auth/sign-in` && r.status() === 429);
  await page.getByRole('button', { name: 'Sign in' }).click();
  assert.equal((await (await challenged).json()).error, 'challenge_required');
  await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
  // The right password gets through after the browser's work: never a 15-minute lockout.
  await page.getByLabel('Password').fill(PASSWORD);
  const statusShown = page
    .getByRole('status')
    .filter({ hasText: /checking this browser/ })
    .waitFor();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await statusShown;
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const deviceCookie = (await context.cookies(`${app.url}/auth/sign-in`)).find((c) => c.name === 'postlane_device');
  assert.ok(deviceCookie?.httpOnly, 'the browser now holds an HttpOnly device cookie');
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByRole('heading', { name: 'Sign in to Postlane' }).waitFor();
});

test("a page on another origin cannot change anything with the signed-in user's cookie", async () => {
  const a = await createWorkspace(app.running.ctx.db, { name: 'Target', verified: true });
  await userIn('target@example.org', a.workspace.id, 'admin');
  await page.goto(`${app.url}/dashboard/`);
  await signInAs('target@example.org', PASSWORD);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();

  const attack = await context.newPage();
  const answer = attack.waitForResponse(
    (r) => r.url() === `${app.url}/v2/api-keys` && r.request().method() === 'POST' && r.request().resourceType() === 'document',
  );
  await attack.goto(evilUrl);
  const refused = await answer;
  assert.equal(refused.status(), 403);
  assert.match(await refused.text(), /Cross-origin requests may not change anything/);
  await attack.close();

  const keys = await (await fetch(`${app.url}/v2/api-keys`, { headers: { authorization: `Bearer ${a.apiKey}` } })).json();
  assert.deepEqual(
    (keys as any).data.map((k: any) => k.name),
    ['Default key'],
    'nothing was planted',
  );
  // The user's own page still works.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('button', { name: 'Create API key' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Mine');
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  await page.getByTestId('new-secret').waitFor();
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByRole('heading', { name: 'Sign in to Postlane' }).waitFor();
});

test('a member of workspace A never sees workspace B, and switches only between their own', async () => {
  const a = await createWorkspace(app.running.ctx.db, { name: 'Alpha', verified: true });
  const b = await createWorkspace(app.running.ctx.db, { name: 'Beta', verified: true });
  const bPost = (path: string, body: unknown) =>
    fetch(`${app.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);
  await bPost('/v2/suppressions', { email: 'beta-secret@example.org' });
  const bDomain = await bPost('/v2/domains', { name: 'beta.test' });
  await fetch(`${app.url}/v2/suppressions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'alpha-only@example.org' }),
  });
  await userIn('alpha-member@example.org', a.workspace.id, 'member');
  await userIn('both@example.org', a.workspace.id, 'member');
  await userIn('both@example.org', b.workspace.id, 'admin');

  await page.goto(`${app.url}/dashboard/suppressions`);
  await signInAs('alpha-member@example.org', PASSWORD);
  await page.getByRole('heading', { name: 'Suppressions' }).waitFor();
  await settled(page);
  assert.deepEqual(await page.getByLabel('Workspace').locator('option').allInnerTexts(), ['Alpha']);
  await page.getByRole('cell', { name: 'alpha-only@example.org', exact: true }).waitFor();
  assert.ok(!(await page.content()).includes('beta-secret@example.org'));
  // B's domain, even by its id, is not there.
  await page.goto(`${app.url}/dashboard/domains/${bDomain.id}`);
  await page.getByRole('alert').waitFor();
  assert.ok(!(await page.content()).includes('beta.test'));
  await captureAtBothWidths(page, 'not-found-domain');
  // A member sees the keys but is offered nothing the API refuses them.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('cell', { name: 'Default key', exact: true }).waitFor();
  await page.getByText('Only an admin of this workspace can create, change or delete API keys.').waitFor();
  for (const name of ['Create API key', 'Rename Default key', 'Regenerate Default key', 'Delete Default key']) {
    assert.equal(await page.getByRole('button', { name }).count(), 0, `a member is not offered "${name}"`);
  }
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();

  // Someone in both switches, and each workspace shows only its own.
  await page.getByRole('heading', { name: 'Sign in to Postlane' }).waitFor();
  await signInAs('both@example.org', PASSWORD);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('heading', { name: 'Suppressions' }).waitFor();
  await settled(page);
  await page.getByLabel('Workspace').selectOption({ label: 'Beta' });
  await page.getByRole('cell', { name: 'beta-secret@example.org', exact: true }).waitFor();
  assert.ok(!(await page.content()).includes('alpha-only@example.org'));
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
  await page.getByRole('button', { name: 'Send invitation' }).waitFor(); // an admin in Beta
  await page.getByLabel('Workspace').selectOption({ label: 'Alpha' });
  await page.getByRole('button', { name: 'Send invitation' }).waitFor({ state: 'detached' }); // a member in Alpha
  await settled(page);
  assert.equal(await page.getByRole('cell', { name: 'both@example.org', exact: true }).count(), 1);
  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await page.getByRole('heading', { name: 'Sign in to Postlane' }).waitFor();
  const after = await page.evaluate(async () => (await fetch('/v2/suppressions')).status);
  assert.equal(after, 401);
});
