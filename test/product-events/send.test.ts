// Sending product events from a server: POST /v2/events and /v2/events/batch, w: events
// checked against their definition, c: events any JSON object within bounds, the plan rules,
// the Idempotency-Key, the event log's scope filter and a contact's activity.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
let contactId: string;

before(async () => {
  app = await startTestApp();
  contactId = (await app.api.post('/v2/contacts', { email: 'jane@example.com', first_name: 'Jane' })).body.id;
  const defined = await app.api.post('/v2/workspace/events', {
    name: 'w:order.completed',
    title: 'Order completed',
    properties: [
      { name: 'order_id', type: 'string', required: true },
      { name: 'total', type: 'number', required: true },
      { name: 'gift', type: 'boolean' },
      { name: 'shipped_on', type: 'date' },
    ],
  });
  assert.equal(defined.status, 201, defined.text);
});
after(() => app?.close());

async function storedCounts() {
  const db = app.running.ctx.db;
  const events = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', app.workspace.id)
    .where('type', 'like', '%:%')
    .executeTakeFirstOrThrow();
  const tied = await db
    .selectFrom('contact_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { events: Number(events.n), tied: Number(tied.n) };
}

test("a custom event is recorded, tied to the contact of its address, listed by scope and in the contact's activity", async () => {
  const sent = await app.api.post('/v2/events', {
    type: 'c:cart.updated',
    email: 'Jane@Example.com',
    properties: { items: [{ sku: 'A1', qty: 2 }], total: 59.9 },
    occurred_at: '2026-10-19T11:30:00+02:00',
  });
  assert.equal(sent.status, 200, sent.text);
  assert.match(sent.body.id, /^evt_/);
  assert.equal(sent.body.type, 'c:cart.updated');
  assert.deepEqual(sent.body.data.object, {
    type: 'c:cart.updated',
    scope: 'custom',
    properties: { items: [{ sku: 'A1', qty: 2 }], total: 59.9 },
    email: 'jane@example.com',
    contact_id: contactId,
    occurred_at: '2026-10-19T09:30:00.000Z',
    source: 'api',
  });

  const custom = await app.api.get('/v2/events?scope=custom&include_data=true');
  assert.deepEqual(
    custom.body.data.map((e: any) => e.id),
    [sent.body.id],
  );
  assert.deepEqual(custom.body.data[0].data, sent.body.data);
  const system = await app.api.get('/v2/events?scope=system');
  assert.ok(system.body.data.every((e: any) => !/^[wc]:/.test(e.type)) && system.body.data.some((e: any) => e.type === 'contact.created'));
  assert.equal((await app.api.get('/v2/events?scope=everything')).status, 422);

  const activity = await app.api.get(`/v2/contacts/${contactId}/events`);
  assert.equal(activity.status, 200);
  assert.deepEqual(
    activity.body.data.map((e: any) => e.id),
    [sent.body.id],
  );
  const byAddress = await app.api.get('/v2/contacts/jane@example.com/events');
  assert.deepEqual(
    byAddress.body.data.map((e: any) => e.id),
    [sent.body.id],
  );
  assert.equal((await app.api.get('/v2/contacts/nobody@example.com/events')).status, 404);
});

test('a workspace event is checked against its definition; dates are stored in UTC', async () => {
  const sent = await app.api.post('/v2/events', {
    type: 'w:order.completed',
    contact_id: contactId,
    properties: { order_id: '1001', total: 12.5, gift: null, shipped_on: '2026-10-20' },
  });
  assert.equal(sent.status, 200, sent.text);
  assert.deepEqual(sent.body.data.object.properties, { order_id: '1001', total: 12.5, gift: null, shipped_on: '2026-10-20T00:00:00.000Z' });
  assert.equal(sent.body.data.object.email, 'jane@example.com', "the contact's address");
  const workspace = await app.api.get('/v2/events?scope=workspace');
  assert.deepEqual(
    workspace.body.data.map((e: any) => e.id),
    [sent.body.id],
  );
});

test('a w: event with a wrong property type, an unknown property or a missing one is refused and stored nowhere', async () => {
  const before = await storedCounts();
  const wrongType = await app.api.post('/v2/events', {
    type: 'w:order.completed',
    email: 'jane@example.com',
    properties: { order_id: '1002', total: '12.50' },
  });
  assert.equal(wrongType.status, 400);
  assert.equal(wrongType.body.message, 'Validation failed');
  assert.deepEqual(Object.keys(wrongType.body.errors), ['properties.total']);
  assert.match(wrongType.body.errors['properties.total'][0], /"total" of w:order\.completed must be a number, got string/);

  const unknown = await app.api.post('/v2/events', { type: 'w:order.completed', properties: { order_id: '1', total: 1, coupon: 'X' } });
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.errors['properties.coupon'][0], /"coupon" is not part of w:order\.completed/);

  const missing = await app.api.post('/v2/events', { type: 'w:order.completed', properties: { total: 1 } });
  assert.match(missing.body.errors['properties.order_id'][0], /required/);

  const undefinedType = await app.api.post('/v2/events', { type: 'w:never.defined', properties: {} });
  assert.equal(undefinedType.status, 400);
  assert.match(undefinedType.body.errors.type[0], /not defined/);

  const system = await app.api.post('/v2/events', { type: 'email.delivered' });
  assert.equal(system.status, 400);
  assert.match(system.body.errors.type[0], /System events can't be sent/);

  // One bad event refuses its whole batch.
  const batch = await app.api.post('/v2/events/batch', {
    events: [{ type: 'c:fine' }, { type: 'w:order.completed', properties: { order_id: 7, total: 1 } }],
  });
  assert.equal(batch.status, 400);
  assert.deepEqual(Object.keys(batch.body.errors), ['events.1.properties.order_id']);

  assert.deepEqual(await storedCounts(), before, 'nothing was stored');
  assert.equal((await app.api.get('/v2/events?type=c:fine')).body.data.length, 0);
});

test('custom events: any JSON object up to 32 KB and 8 levels; an unknown contact id is named', async () => {
  const big = await app.api.post('/v2/events', { type: 'c:big', properties: { blob: 'x'.repeat(33 * 1024) } });
  assert.equal(big.status, 400);
  assert.match(big.body.errors.properties[0], /32 KB/);
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 9; i++) deep = { deeper: deep };
  const tooDeep = await app.api.post('/v2/events', { type: 'c:deep', properties: deep });
  assert.equal(tooDeep.status, 400);
  assert.match(tooDeep.body.errors.properties[0], /8 levels/);
  const nobody = await app.api.post('/v2/events', { type: 'c:x', contact_id: 'con_2xGk7Nq1VbD5sR8tLmW3eYhC6aP' });
  assert.equal(nobody.status, 400);
  assert.match(nobody.body.errors.contact_id[0], /No contact con_2xGk7Nq1VbD5sR8tLmW3eYhC6aP/);
  const badDate = await app.api.post('/v2/events', { type: 'c:x', occurred_at: 'yesterday' });
  assert.match(badDate.body.errors.occurred_at[0], /ISO 8601/);
});

test('the batch endpoint records up to 100 events in order; 101 are refused', async () => {
  const events = Array.from({ length: 100 }, (_, i) => ({ type: 'c:page.viewed', properties: { n: i } }));
  const ok = await app.api.post('/v2/events/batch', { events });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(
    ok.body.data.map((e: any) => e.data.object.properties.n),
    events.map((_, i) => i),
  );
  const tooMany = await app.api.post('/v2/events/batch', { events: [...events, { type: 'c:page.viewed' }] });
  assert.equal(tooMany.status, 400);
});

test('an Idempotency-Key replays the stored response and records once', async () => {
  const headers = { 'idempotency-key': 'order-1003' };
  const first = await app.api.post('/v2/events', { type: 'c:order.paid', properties: { order: 1003 } }, headers);
  const second = await app.api.post('/v2/events', { type: 'c:order.paid', properties: { order: 1003 } }, headers);
  assert.equal(first.status, 200);
  assert.deepEqual(second.body, first.body);
  assert.equal((await app.api.get('/v2/events?type=c:order.paid')).body.data.length, 1);
  assert.equal((await app.api.post('/v2/events', { type: 'c:x' }, { 'idempotency-key': 'bad key!' })).status, 400);
});

test('Pay as you go: 403 plan_required, nothing stored', async () => {
  const payg = await app.newWorkspace({ plan: 'payg' });
  const refused = await payg.api.post('/v2/events', { type: 'c:x' });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'plan_required');
  assert.equal(refused.body.required_plan, 'pro');
  assert.equal((await payg.api.post('/v2/workspace/events', { name: 'x' })).status, 403);
  assert.equal((await payg.api.get('/v2/events?scope=custom')).body.data.length, 0);
});

test("a plan's event types: definitions and custom types together, 100 on Pro", async () => {
  const pro = await app.newWorkspace({ plan: 'pro' });
  const db = app.running.ctx.db;
  await db
    .insertInto('custom_event_types')
    .values(
      Array.from({ length: 98 }, (_, i) => ({ workspace_id: pro.workspace.id, name: `seen.${i}`, created_at: new Date().toISOString() })),
    )
    .execute();
  assert.equal((await pro.api.post('/v2/workspace/events', { name: 'ninety.nine' })).status, 201);
  assert.equal((await pro.api.post('/v2/events', { type: 'c:the.hundredth' })).status, 200);
  assert.equal((await pro.api.post('/v2/events', { type: 'c:the.hundredth' })).status, 200, 'a type already used is no new type');
  const over = await pro.api.post('/v2/events', { type: 'c:one.too.many' });
  assert.equal(over.status, 403);
  assert.equal(over.body.error, 'event_type_limit_reached');
  assert.equal((await pro.api.post('/v2/workspace/events', { name: 'another' })).status, 403);
});
