// The tracking script in real Chromium on a page of another loopback origin: identify and
// track reach the contact's activity, a webhook on c:* receives the event signed, and an
// automation on that event sends its email to the loopback sink. A page of an origin the key
// does not allow records nothing, and a client over the limit is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/app.ts';
import { verifyLikeSdk } from '../webhooks/sdk-verifier.ts';
import { settledRuns, startedAutomation } from '../automations/helpers.ts';
import { COLLECT_LIMIT } from '../../src/resources/tracking-keys/service.ts';

let app: DeliveryApp;
let hooks: WebhookReceiver;
let browser: Browser;
const sites: Server[] = [];

/** A site on its own loopback origin whose page loads the script and makes `calls`. */
async function site(scriptUrl: string, calls: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(`<!doctype html><html><head>
<script>window.postlane=window.postlane||function(){(postlane.q=postlane.q||[]).push(arguments)};${calls}</script>
<script async src="${scriptUrl}"></script></head><body><h1 id="ready">Shop</h1></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sites.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(async () => {
  app = await startDeliveryApp({ workspace: { credits: 1000 } });
  hooks = await startWebhookReceiver();
  browser = await launchBrowser();
  assert.equal(
    (
      await app.api.post('/v2/templates', {
        name: 'Viewed',
        alias: 'viewed',
        from: 'Acme <hello@acme.test>',
        subject: 'Still thinking about {{payload.object.properties.sku}}?',
        text: 'Come back',
      })
    ).status,
    201,
  );
});
after(async () => {
  await browser?.close();
  for (const server of sites) server.close();
  await hooks?.close();
  await app?.close();
});

test('identify and track from a page of an allowed origin: activity, signed webhook, automation email; no cookies', async () => {
  const contact = (await app.api.post('/v2/contacts', { email: 'jane@example.org' })).body;
  const hook = (await app.api.post('/v2/webhooks', { name: 'customs', url: `${hooks.url}/customs`, events: ['c:*'] })).body;
  const automation = await startedAutomation(app.api, {
    context: 'event',
    name: 'Viewed, not bought',
    steps: [
      {
        key: 'viewed',
        type: 'trigger',
        trigger: 'event.c:product.viewed',
        config: { filter: { rules: [{ field: 'properties.sku', operator: 'equals', value: 'A1' }] } },
      },
      {
        key: 'nudge',
        type: 'action',
        action: 'send_email',
        config: { type: 'template', template_id: 'viewed', to: '{{payload.object.email}}' },
      },
    ],
    connections: [{ from: 'viewed', to: 'nudge' }],
  });

  // The key allows the page's origin only; the page's port is known once it listens.
  const created = await app.api.post('/v2/tracking-keys', { name: 'Shop', allowed_origins: ['https://shop.example.com'] });
  assert.equal(created.status, 201, created.text);
  const key = created.body;
  assert.match(key.key, /^pk_[A-Za-z0-9]{32}$/);
  assert.equal(key.script_url, `${app.config.publicUrl}/js/track/${key.key}.js`);
  const origin = await site(
    `${app.url}/js/track/${key.key}.js`,
    "postlane('identify','Jane@Example.org');postlane('track','c:product.viewed',{sku:'A1',price:12});",
  );
  const updated = await app.api.post(`/v2/tracking-keys/${key.id}`, { allowed_origins: [origin, 'https://shop.example.com'] });
  assert.deepEqual(updated.body.allowed_origins, [origin, 'https://shop.example.com']);

  const script = await fetch(`${app.url}/js/track/${key.key}.js`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(script.status, 200);
  assert.ok(gzipSync(Buffer.from(await script.text())).length < 5 * 1024, 'under 5 kB gzipped');
  assert.equal(script.headers.get('set-cookie'), null);

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(origin);
  await page.waitForSelector('#ready');
  const activity = await eventually(async () => {
    const list = (await app.api.get(`/v2/contacts/${contact.id}/events`)).body.data;
    return list.length >= 2 ? list : null;
  });
  assert.deepEqual(activity.map((e: any) => e.type).sort(), ['c:product.viewed', 'contact.identified']);
  const viewed = activity.find((e: any) => e.type === 'c:product.viewed');
  assert.deepEqual(viewed.data.object.properties, { sku: 'A1', price: 12 });
  assert.equal(viewed.data.object.email, 'jane@example.org');
  assert.equal(viewed.data.object.source, 'tracking');
  assert.equal(viewed.data.object.context.url, `${origin}/`);
  assert.deepEqual(await context.cookies(), [], 'no cookies, first or third party');

  const delivered = await eventually(async () => hooks.on('/customs').find((r) => r.body.includes(viewed.id)));
  verifyLikeSdk(
    delivered.body,
    delivered.headers['x-emailit-signature'] as string,
    delivered.headers['x-emailit-timestamp'] as string,
    hook.secret,
  );

  const [run] = await settledRuns(app.api, automation.id, 1);
  assert.equal(run.status, 'completed', JSON.stringify(run));
  const message = await eventually(async () => app.sink.messages.find((m) => m.rcptTo.includes('jane@example.org')));
  assert.match(message.raw.toString(), /Subject: Still thinking about A1\?/);
  await context.close();
});

test('a page of an origin the key does not allow records nothing and is not blocked; the refusal carries no CORS headers', async () => {
  const key = (await app.api.post('/v2/tracking-keys', { name: 'Elsewhere', allowed_origins: ['*.example.com'] })).body;
  const origin = await site(`${app.url}/js/track/${key.key}.js`, "postlane('track','c:refused.view',{sku:'B2'});");
  const context = await browser.newContext();
  const page = await context.newPage();
  // The preflight is refused, so the browser never sends the event.
  const refused = page.waitForEvent('requestfailed', (r) => r.url().includes('/v2/track/'));
  await page.goto(origin);
  assert.equal(await page.textContent('#ready'), 'Shop', 'the page renders');
  await refused;
  assert.equal(await page.evaluate(() => typeof (window as any).postlane), 'function', 'the script ran without throwing');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await app.api.get('/v2/events?type=c:refused.view')).body.data.length, 0);
  await context.close();

  const direct = await fetch(`${app.url}/v2/track/${key.key}`, {
    method: 'POST',
    headers: { origin: 'https://evil.test', 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'track', type: 'c:x', anonymous_id: 'abcdefgh12' }),
  });
  assert.equal(direct.status, 403);
  assert.equal((await direct.json()).error, 'origin_not_allowed');
  assert.equal(direct.headers.get('access-control-allow-origin'), null);
  const preflight = await fetch(`${app.url}/v2/track/${key.key}`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' },
  });
  assert.equal(preflight.status, 403);
  assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  const allowed = await fetch(`${app.url}/v2/track/${key.key}`, {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' },
  });
  assert.equal(allowed.status, 204);
  assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://shop.example.com');
});

test('a client over the limit of its key is refused with 429; Pay as you go is refused with 403', async () => {
  const key = (await app.api.post('/v2/tracking-keys', { name: 'Limited' })).body;
  const send = () =>
    fetch(`${app.url}/v2/track/${key.key}`, {
      method: 'POST',
      headers: { origin: 'https://any.example', 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'track', type: 'c:limited', anonymous_id: 'abcdefgh12' }),
    });
  for (let i = 0; i < COLLECT_LIMIT; i++) assert.equal((await send()).status, 200);
  const over = await send();
  assert.equal(over.status, 429);
  assert.ok(Number(over.headers.get('retry-after')) >= 1);
  assert.equal(
    (await app.api.get('/v2/events?type=c:limited&limit=100&page=2')).body.data.length,
    COLLECT_LIMIT - 100,
    'only the admitted ones were recorded',
  );

  const payg = await app.newWorkspace({ plan: 'payg' });
  const refused = await payg.api.post('/v2/tracking-keys', { name: 'No' });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'plan_required');
  // A key made before a move to Pay as you go stops working.
  const moved = await app.newWorkspace({ plan: 'pro' });
  const kept = (await moved.api.post('/v2/tracking-keys', { name: 'Kept' })).body;
  await app.running.ctx.db.updateTable('workspaces').set({ plan: 'payg' }).where('id', '=', moved.workspace.id).execute();
  const after = await fetch(`${app.url}/v2/track/${kept.key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'track', type: 'c:x', anonymous_id: 'abcdefgh12' }),
  });
  assert.equal(after.status, 403);
  assert.equal((await after.json()).error, 'plan_required');
});
