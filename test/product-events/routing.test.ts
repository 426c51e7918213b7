// Where product events go: webhooks subscribed to named w:/c: types or to w:*/c:* (all_events
// leaves them out), and event-context automations triggered by a w:/c: type with a trigger
// filter over the event's properties, whose email reaches the loopback SMTP sink.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/app.ts';
import { verifyLikeSdk } from '../webhooks/sdk-verifier.ts';
import { settledRuns, startedAutomation } from '../automations/helpers.ts';

let app: DeliveryApp;
let hooks: WebhookReceiver;

before(async () => {
  app = await startDeliveryApp({ workspace: { credits: 1000 } });
  hooks = await startWebhookReceiver();
  const template = await app.api.post('/v2/templates', {
    name: 'Thanks',
    alias: 'thanks',
    from: 'Acme <hello@acme.test>',
    subject: 'Thanks for order {{payload.object.properties.order_id}}',
    text: 'Thank you',
  });
  assert.equal(template.status, 201, template.text);
  assert.equal(
    (await app.api.post('/v2/workspace/events', { name: 'plan.changed', properties: [{ name: 'plan', type: 'string', required: true }] }))
      .status,
    201,
  );
});
after(async () => {
  await hooks?.close();
  await app?.close();
});

async function hook(name: string, body: Record<string, unknown>) {
  const created = await app.api.post('/v2/webhooks', { name, url: `${hooks.url}/${name}`, ...body });
  assert.equal(created.status, 201, created.text);
  return created.body as { id: string; secret: string };
}

test('webhooks: c:* and w:* wildcards and named types get their events signed; all_events gets none of them', async () => {
  const customs = await hook('customs', { events: ['c:*'] });
  await hook('named', { events: ['w:plan.changed'] });
  await hook('workspaces', { events: ['w:*'] });
  await hook('everything', { all_events: true });

  const custom = await app.api.post('/v2/events', {
    type: 'c:order.completed',
    email: 'jane@example.org',
    properties: { order_id: 'A1', total: 10 },
  });
  const workspace = await app.api.post('/v2/events', { type: 'w:plan.changed', properties: { plan: 'pro' } });
  assert.equal(custom.status, 200);
  assert.equal(workspace.status, 200);

  const [delivered] = await eventually(async () => (hooks.on('/customs').length > 0 ? hooks.on('/customs') : null));
  const body = verifyLikeSdk(
    delivered.body,
    delivered.headers['x-emailit-signature'] as string,
    delivered.headers['x-emailit-timestamp'] as string,
    customs.secret,
  ) as any;
  const items = Array.isArray(body) ? body : (body.data ?? body.events ?? [body]);
  assert.ok(JSON.stringify(items).includes(custom.body.id), 'the custom event is in the signed request');
  assert.ok(JSON.stringify(items).includes('"order_id":"A1"'));
  await eventually(async () => hooks.on('/named').length > 0);
  assert.ok(hooks.on('/named').some((r) => r.body.includes(workspace.body.id)));
  await eventually(async () => hooks.on('/workspaces').some((r) => r.body.includes(workspace.body.id)));
  // Let the fan-out settle, then: the all_events webhook never got a product event, and the named one no custom event.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.ok(
    hooks.on('/everything').every((r) => !/"type":"[wc]:/.test(r.body)),
    'all_events excludes workspace and custom events',
  );
  assert.ok(hooks.on('/named').every((r) => !r.body.includes(custom.body.id)));
  assert.ok(hooks.on('/customs').every((r) => !r.body.includes(workspace.body.id)));
  assert.ok(hooks.on('/workspaces').every((r) => !r.body.includes(custom.body.id)));
});

test('an event-context automation starts on its c: type when the trigger filter over properties passes, and sends its email', async () => {
  const automation = await startedAutomation(app.api, {
    context: 'event',
    name: 'Big orders',
    steps: [
      {
        key: 'ordered',
        type: 'trigger',
        trigger: 'event.c:order.completed',
        config: { filter: { rules: [{ field: 'properties.total', operator: 'greater_than', value: 50 }] } },
      },
      {
        key: 'thanks',
        type: 'action',
        action: 'send_email',
        config: { type: 'template', template_id: 'thanks', to: '{{payload.object.email}}' },
      },
    ],
    connections: [{ from: 'ordered', to: 'thanks' }],
  });
  const small = await app.api.post('/v2/events', {
    type: 'c:order.completed',
    email: 'small@example.org',
    properties: { order_id: 'S1', total: 10 },
  });
  const big = await app.api.post('/v2/events', {
    type: 'c:order.completed',
    email: 'big@example.org',
    properties: { order_id: 'B1', total: 99 },
  });
  assert.equal(small.status, 200);
  assert.equal(big.status, 200);
  const [run] = await settledRuns(app.api, automation.id, 1);
  assert.equal(run.status, 'completed', JSON.stringify(run));
  const message = await eventually(async () => app.sink.messages.find((m) => m.rcptTo.includes('big@example.org')));
  assert.match(message.raw.toString(), /Subject: Thanks for order B1/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await settledRuns(app.api, automation.id, 1)).length, 1, 'the small order started no run');
  assert.ok(!app.sink.messages.some((m) => m.rcptTo.includes('small@example.org')));
});
