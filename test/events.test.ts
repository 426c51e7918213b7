// The events API (v2 list and retrieve, legacy v1) and the event payload shapes of
// https://emailit.com/docs/webhooks/event-types.md, including a check of the payloads today's
// emitters actually write.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { emitEvent, type EmittedEvent } from '../src/platform/events.ts';
import { isoFromMs } from '../src/platform/clock.ts';
import { newId } from '../src/platform/ids.ts';
import { checkEventPayload, PAYLOAD_SHAPES, sampleEventObject, SYSTEM_EVENT_TYPES } from '../src/resources/events/payloads.ts';
import { eventUuid } from '../src/resources/events/service.ts';

let app: TestApp;
const emitted: EmittedEvent[] = [];
const DAY = 24 * 3_600_000;

before(async () => {
  app = await startTestApp();
  await app.running.ctx.db.transaction().execute(async (tx) => {
    for (let i = 0; i < 6; i++) {
      const type = ['email.accepted', 'email.delivered', 'email.bounced'][i % 3];
      emitted.push(await emitEvent(tx, app.workspace.id, type, { id: `em_${i}`, object: 'email', n: i }));
    }
  });
});
after(async () => {
  await app?.close();
});

/** Stores an event as if it had happened `ageMs` ago. */
async function oldEvent(ageMs: number, type = 'email.delivered', workspaceId = app.workspace.id) {
  const row = {
    id: newId('evt'),
    workspace_id: workspaceId,
    type,
    data: JSON.stringify({ id: 'em_old', object: 'email' }),
    created_at: isoFromMs(Date.now() - ageMs),
  };
  await app.running.ctx.db.insertInto('events').values(row).execute();
  return row;
}

test('v2 list: newest first, no data unless include_data, the documented event object', async () => {
  const list = await app.api.get('/v2/events');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body, {
    data: [...emitted].reverse().map((e) => ({ object: 'event', id: e.id, type: e.type, created_at: e.createdAt })),
    next_page_url: null,
    previous_page_url: null,
  });
  const withData = await app.api.get('/v2/events?include_data=true&limit=2');
  assert.deepEqual(
    withData.body.data,
    [...emitted]
      .reverse()
      .slice(0, 2)
      .map((e) => ({ object: 'event', id: e.id, type: e.type, data: { object: e.object }, created_at: e.createdAt })),
  );
  assert.equal(withData.body.next_page_url, '/v2/events?include_data=true&limit=2&page=2');
});

test('v2 list: type narrows to one type or a comma-separated list', async () => {
  const one = await app.api.get('/v2/events?type=email.bounced');
  assert.deepEqual(
    one.body.data.map((e: any) => e.id),
    emitted
      .filter((e) => e.type === 'email.bounced')
      .reverse()
      .map((e) => e.id),
  );
  const two = await app.api.get('/v2/events?type=email.bounced,email.accepted');
  assert.deepEqual(
    two.body.data.map((e: any) => e.id),
    emitted
      .filter((e) => e.type !== 'email.delivered')
      .reverse()
      .map((e) => e.id),
  );
  const repeated = await app.api.get('/v2/events?type=email.bounced&type=email.accepted');
  assert.deepEqual(repeated.body.data, two.body.data);
  const none = await app.api.get('/v2/events?type=contact.created');
  assert.deepEqual(none.body.data, []);
});

test('v2 list: the last two days by default; a created_at filter replaces the window', async () => {
  const old = await oldEvent(3 * DAY);
  const recentOld = await oldEvent(DAY);
  const byDefault = (await app.api.get('/v2/events?limit=100')).body.data.map((e: any) => e.id);
  assert.ok(!byDefault.includes(old.id), 'older than two days: outside the default window');
  assert.ok(byDefault.includes(recentOld.id));

  const since = new Date(Date.now() - 4 * DAY).toISOString().slice(0, 10);
  const after = (await app.api.get(`/v2/events?created_at.after=${since}`)).body.data.map((e: any) => e.id);
  assert.ok(after.includes(old.id) && after.includes(emitted[0].id));

  const before = (await app.api.get(`/v2/events?created_at.before=${encodeURIComponent(isoFromMs(Date.now() - 2 * DAY))}`)).body.data.map(
    (e: any) => e.id,
  );
  assert.deepEqual(before, [old.id], 'a created_at filter alone removes the window');

  const unparsable = (await app.api.get('/v2/events?created_at.after=not-a-date&limit=100')).body.data.map((e: any) => e.id);
  assert.deepEqual(unparsable, byDefault, 'an ignored filter leaves the window in place');
  await app.running.ctx.db.deleteFrom('events').where('id', 'in', [old.id, recentOld.id]).execute();
});

test('v2 list: a page starting past offset 2,500 is refused with events_offset_too_large', async () => {
  assert.equal((await app.api.get('/v2/events?page=26&limit=100')).status, 200, 'offset 2,500 itself is fine');
  assert.equal((await app.api.get('/v2/events?page=251&limit=10')).status, 200);
  for (const query of ['page=27&limit=100', 'page=252&limit=10', 'page=2502&limit=1']) {
    const response = await app.api.get(`/v2/events?${query}`);
    assert.equal(response.status, 422, query);
    assert.equal(response.body.error, 'events_offset_too_large');
    assert.match(response.body.message, /offset 2500/);
  }
  assert.equal((await app.api.get('/v2/events?limit=101')).status, 400);
  assert.equal((await app.api.get('/v2/events?page=0')).status, 400);
});

test("v2 retrieve: one event with its data; 404 for unknown or another workspace's event", async () => {
  const event = emitted[1];
  const response = await app.api.get(`/v2/events/${event.id}`);
  assert.deepEqual(
    [response.status, response.body],
    [200, { object: 'event', id: event.id, type: event.type, data: { object: event.object }, created_at: event.createdAt }],
  );
  const missing = await app.api.get('/v2/events/evt_000000000000000000000000000');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Event not found' }]);
  assert.equal((await app.api.get('/v2/events/garbage')).status, 404);
  const other = await app.newWorkspace();
  assert.equal((await other.api.get(`/v2/events/${event.id}`)).status, 404);
  assert.deepEqual((await other.api.get('/v2/events')).body.data, []);
});

test('events need a full key', async () => {
  const key = await app.api.post('/v2/api-keys', { name: 'events sender', scope: 'sending' });
  assert.equal((await app.as(key.body.key).get('/v2/events')).status, 403);
  assert.equal((await app.as(key.body.key).get('/v1/events')).status, 403);
  assert.equal((await app.as(null).get('/v2/events')).status, 401);
});

test('legacy v1: per_page (default 25), page, filter[type]; the v1 event model', async () => {
  const list = await app.api.get('/v1/events');
  assert.equal(list.status, 200);
  const v1 = (e: EmittedEvent) => ({
    id: e.id,
    uuid: eventUuid(e.id),
    type: e.type,
    data: e.object,
    created_at: e.createdAt,
    updated_at: e.createdAt,
  });
  assert.deepEqual(list.body, {
    data: [...emitted].reverse().map(v1),
    total_records: 6,
    per_page: 25,
    current_page: 1,
    total_pages: 1,
    next_page_url: null,
    previous_page_url: null,
  });
  assert.match(list.body.data[0].uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

  const paged = await app.api.get('/v1/events?per_page=4&page=2');
  assert.deepEqual([paged.body.data.length, paged.body.total_pages, paged.body.current_page], [2, 2, 2]);
  assert.deepEqual([paged.body.previous_page_url, paged.body.next_page_url], ['/v1/events?per_page=4&page=1', null]);
  const filtered = await app.api.get(`/v1/events?${encodeURIComponent('filter[type]')}=email.accepted`);
  assert.deepEqual(
    filtered.body.data.map((e: any) => e.id),
    emitted
      .filter((e) => e.type === 'email.accepted')
      .reverse()
      .map((e) => e.id),
  );
  assert.equal(filtered.body.total_records, 2);

  const one = await app.api.get(`/v1/events/${emitted[0].id}`);
  assert.deepEqual(one.body, v1(emitted[0]));
  assert.deepEqual((await app.api.get('/v1/events/evt_000000000000000000000000000')).body, { error: 'Event not found' });
});

test('payload shapes: every system type has a shape its sample passes; problems are named', () => {
  for (const type of SYSTEM_EVENT_TYPES) {
    const sample = sampleEventObject(type);
    assert.deepEqual(checkEventPayload(type, sample), [], type);
    assert.equal(sample.object, PAYLOAD_SHAPES[type].object);
  }
  for (const type of [
    'email.accepted',
    'email.scheduled',
    'email.delivered',
    'email.bounced',
    'email.complained',
    'email.loaded',
    'email.clicked',
    'email.failed',
    'email.suppressed',
    'email.canceled',
    'email.received',
    'suppression.created',
    'suppression.updated',
    'suppression.deleted',
    'template.created',
    'template.updated',
    'campaign.created',
    'campaign.updated',
    'contact.created',
    'contact.updated',
    'subscriber.created',
    'subscriber.deleted',
    'domain.created',
  ]) {
    assert.ok(PAYLOAD_SHAPES[type], `every type the spec names has a shape: ${type}`);
  }
  assert.deepEqual(checkEventPayload('c:order.completed', { anything: true }), []);
  assert.deepEqual(
    checkEventPayload('email.delivered', {
      id: 'sup_1',
      object: 'email',
      from: 'a@b.c',
      to: 'x@y.z',
      subject: 's',
      status: 'bounced',
      meta: null,
      created_at: '',
    }),
    ['id must start with em_, got "sup_1"', 'missing field updated_at', 'status must be "delivered", got "bounced"'],
  );
  assert.deepEqual(
    checkEventPayload('email.clicked', {
      id: 'click_1',
      object: 'click',
      email: { id: 'em_1' },
      link: null,
      ip_address: null,
      user_agent: null,
      created_at: '',
    }),
    [
      'link must not be null',
      'missing field email.rcpt_to',
      'missing field email.mail_from',
      'missing field email.subject',
      'missing field email.created_at',
      'missing field email.meta',
    ],
  );
});

test("the payloads today's emitters write match their shapes (suppressions, domains, templates)", async () => {
  const other = await app.newWorkspace({ plan: 'pro' });
  const created = await other.api.post('/v2/suppressions', { email: 'Someone@Example.com', reason: 'asked' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal((await other.api.post(`/v2/suppressions/${created.body.id}`, { reason: 'changed' })).status, 200);
  assert.equal((await other.api.delete(`/v2/suppressions/${created.body.id}`)).status, 200);
  const domain = await other.api.post('/v2/domains', { name: 'events-shape-test.com' });
  assert.equal(domain.status, 201, JSON.stringify(domain.body));
  assert.equal((await other.api.delete(`/v2/domains/${domain.body.id}`)).status, 200);
  const template = await other.api.post('/v2/templates', { name: 'Welcome', alias: 'welcome', subject: 'Hi', html: '<p>Hi</p>' });
  assert.equal(template.status, 201, JSON.stringify(template.body));
  assert.equal((await other.api.post(`/v2/templates/${template.body.data.id}`, { subject: 'Hello' })).status, 200);
  assert.equal((await other.api.delete(`/v2/templates/${template.body.data.id}`)).status, 200);

  const events = (await other.api.get('/v2/events?include_data=true')).body.data as any[];
  const types = events.map((e) => e.type).sort();
  assert.deepEqual(types, [
    'domain.created',
    'domain.deleted',
    'suppression.created',
    'suppression.deleted',
    'suppression.updated',
    'template.created',
    'template.deleted',
    'template.updated',
  ]);
  for (const event of events) assert.deepEqual(checkEventPayload(event.type, event.data.object), [], event.type);
});
