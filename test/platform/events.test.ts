// emitEvents: several events of one transaction in one call (on PostgreSQL one statement for
// them and all their reactions) behave as the same emitEvent calls one by one: stored in
// order, queued for exactly the webhooks they match, in order; automation triggers and step
// outcomes as if each event came alone; and nothing at all when the transaction fails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/app.ts';
import { emitEvents, type EmittedEvent, type EventToEmit } from '../../src/platform/events.ts';
import { allRuns, manualGraph, settledRuns, startedAutomation } from '../automations/helpers.ts';

let app: DeliveryApp;
const receivers: WebhookReceiver[] = [];

before(async () => {
  app = await startDeliveryApp({
    env: { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_MS: '50' },
    workspace: { plan: 'business', credits: 1_000_000 },
  });
  // Mail to "later@…" is deferred, so its email keeps the outcome the test's events give it.
  app.sink.addRule({ match: 'later', reply: { code: 451, message: '4.7.1 try again later' } });
});
after(async () => {
  for (const r of receivers) await r.close();
  await app?.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

function emit(items: Array<Omit<EventToEmit, 'workspaceId'>>): Promise<EmittedEvent[]> {
  return app.running.ctx.db.transaction().execute((tx) =>
    emitEvents(
      tx,
      items.map((item) => ({ workspaceId: app.workspace.id, ...item })),
    ),
  );
}

const emailObject = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  object: 'email',
  from: 'hello@acme.test',
  to: 'later@example.org',
  subject: 'Hi',
  meta: null,
  ...extra,
});
const fakeEmailId = (n: number) => `em_${String(n).padStart(27, '0')}`;
const item = (event: EmittedEvent) => ({ event_id: event.id, type: event.type, object: event.object, data: { object: event.object } });

test('events emitted together are stored in order and reach each matching webhook once, in order', async () => {
  const all = await receiver();
  const delivered = await receiver();
  for (const [name, r, body] of [
    ['all', all, { all_events: true }],
    ['delivered', delivered, { events: ['email.delivered'] }],
  ] as const) {
    const response = await app.api.post('/v2/webhooks', { name, url: `http://127.0.0.1:${r.port}/hook`, ...body });
    assert.equal(response.status, 201, response.text);
  }
  const events = await emit([
    { type: 'email.accepted', object: emailObject(fakeEmailId(1)) },
    { type: 'email.delivered', object: emailObject(fakeEmailId(1), { status: 'delivered' }) },
    { type: 'email.delivered', object: emailObject(fakeEmailId(2), { status: 'delivered' }) },
  ]);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.accepted', 'email.delivered', 'email.delivered'],
  );
  await eventually(async () => all.items().length >= 3 && delivered.items().length >= 2);
  assert.deepEqual(all.items(), events.map(item));
  assert.deepEqual(delivered.items(), events.slice(1).map(item));

  const listed = await app.api.get('/v2/events?limit=3');
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(
    listed.body.data.map((e: { id: string }) => e.id),
    events.map((e) => e.id).reverse(),
    'newest first',
  );

  // A transaction that fails after emitting leaves no event and sends nothing.
  await assert.rejects(
    app.running.ctx.db.transaction().execute(async (tx) => {
      await emitEvents(tx, [{ workspaceId: app.workspace.id, type: 'email.delivered', object: emailObject(fakeEmailId(3)) }]);
      throw new Error('rolled back');
    }),
    /rolled back/,
  );
  const [later] = await emit([{ type: 'email.delivered', object: emailObject(fakeEmailId(4)) }]);
  await eventually(async () => delivered.items().length >= 3);
  assert.deepEqual(delivered.items(), [...events.slice(1), later].map(item));
  assert.equal(all.items().length, 4);
  assert.equal((await app.api.get(`/v2/events?type=email.delivered&limit=100`)).body.data.length, 3);
});

test('events emitted together start the automations they trigger and move step outcomes as one by one', async () => {
  const template = await app.api.post('/v2/templates', {
    name: 'Hi',
    alias: 'hi',
    from: 'Acme <hello@acme.test>',
    subject: 'Hi',
    text: 'x',
  });
  assert.equal(template.status, 201, template.text);
  const sendMail = await startedAutomation(
    app.api,
    manualGraph(
      [{ key: 'm', type: 'action', action: 'send_email', config: { type: 'template', template_id: 'hi', to: '{{payload.to}}' } }],
      [],
    ),
  );
  for (const to of ['later1@example.org', 'later2@example.org']) {
    const triggered = await app.api.post(`/v2/automations/${sendMail.id}/trigger`, { payload: { to } });
    assert.equal(triggered.status, 201, triggered.text);
  }
  const runs = await settledRuns(app.api, sendMail.id, 2);
  const emailOf = (to: string) => runs.find((run) => run.run_steps[0]?.data.to === to)!.run_steps[0].data.email_oid as string;
  const [first, second] = [emailOf('later1@example.org'), emailOf('later2@example.org')];
  assert.match(first, /^em_/);

  const onBounce = await startedAutomation(app.api, {
    context: 'email',
    name: 'Bounces',
    steps: [
      { key: 'bounced', type: 'trigger', trigger: 'email.bounced' },
      { key: 'done', type: 'action', action: 'end' },
    ],
    connections: [{ from: 'bounced', to: 'done' }],
  });
  // The first email is delivered then opened; the second is clicked, then an open arrives late
  // (an open never takes a click back); both bounce notices start a run each.
  const events = await emit([
    { type: 'email.delivered', object: emailObject(first, { status: 'delivered' }) },
    { type: 'email.loaded', object: { email: { id: first, rcpt_to: 'later1@example.org' } } },
    { type: 'email.clicked', object: { email: { id: second, rcpt_to: 'later2@example.org' } } },
    { type: 'email.loaded', object: { email: { id: second, rcpt_to: 'later2@example.org' } } },
    { type: 'email.bounced', object: emailObject(first, { status: 'bounced' }) },
    { type: 'email.bounced', object: emailObject(second, { status: 'bounced' }) },
  ]);
  const stats = await eventually(async () => {
    const data = (await app.api.get(`/v2/automations/${sendMail.id}/steps/m/stats`)).body.data;
    return data.by_outcome.loaded + data.by_outcome.clicked === 2 && data;
  });
  assert.equal(stats.by_outcome.loaded, 1);
  assert.equal(stats.by_outcome.clicked, 1);
  assert.equal(stats.by_outcome.delivered, 0);

  const bounceRuns = await settledRuns(app.api, onBounce.id, 2);
  assert.deepEqual(bounceRuns.map((run) => run.event_id).sort(), [events[4].id, events[5].id].sort());
  assert.deepEqual(bounceRuns.map((run) => run.email_id).sort(), [first, second].sort());
  assert.equal((await allRuns(app.api, onBounce.id)).length, 2);
});
