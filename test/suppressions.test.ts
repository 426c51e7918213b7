// Suppressions over HTTP (https://emailit.com/docs/suppressions.md),
// plus the service functions the sending, campaign and delivery code call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp, type ApiClient } from './helpers/app.ts';
import { activeSuppressions, addAutomaticSuppression } from '../src/resources/suppressions/service.ts';
import { resetClock, shiftClock } from '../src/platform/clock.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const KEEP_UNTIL_ERROR = { error: 'Invalid keep_until: use an ISO 8601 date, Unix seconds, a phrase such as "in 30 days", or null' };

/** A fresh workspace per test keeps lists and addresses independent. */
async function workspace(): Promise<{ id: string; api: ApiClient }> {
  const { workspace, api } = await app.newWorkspace();
  return { id: workspace.id, api };
}

async function create(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/v2/suppressions', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function events(workspaceId: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('type', 'like', 'suppression.%')
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ type: row.type, object: JSON.parse(row.data) }));
}

test('create: 201 with the suppression object; address trimmed and lowercased; recipient by default; permanent', async () => {
  const { id, api } = await workspace();
  const res = await api.post('/v2/suppressions', { email: '  John.Doe+News@Example.COM ' });
  assert.equal(res.status, 201);
  const sup = res.body;
  assert.match(sup.id, /^sup_[A-Za-z0-9]{27}$/);
  assert.match(sup.created_at, ISO_MICROS);
  assert.deepEqual(sup, {
    object: 'suppression',
    id: sup.id,
    type: 'recipient',
    email: 'john.doe+news@example.com',
    reason: null,
    created_at: sup.created_at,
    keep_until: null,
  });
  const full = await create(api, { email: 'b@example.com', type: 'unsubscribe', reason: 'asked by phone', keep_until: null });
  assert.equal(full.type, 'unsubscribe');
  assert.equal(full.reason, 'asked by phone');
  assert.equal(full.keep_until, null);

  assert.deepEqual(await events(id), [
    { type: 'suppression.created', object: sup },
    { type: 'suppression.created', object: full },
  ]);
});

test('keep_until: ISO 8601, Unix seconds (number or numeric string), English, null', async () => {
  const { api } = await workspace();
  let n = 0;
  const keep = async (value: unknown) => (await create(api, { email: `k${n++}@example.com`, keep_until: value })).keep_until;

  assert.equal(await keep('2027-03-04T05:06:07Z'), '2027-03-04T05:06:07.000000Z');
  assert.equal(await keep('2027-03-04T05:06:07.123456Z'), '2027-03-04T05:06:07.123456Z');
  assert.equal(await keep('2027-03-04T07:06:07+02:00'), '2027-03-04T05:06:07.000000Z');
  assert.equal(await keep('2027-03-04 05:06:07-0130'), '2027-03-04T06:36:07.000000Z');
  assert.equal(await keep('2027-03-04'), '2027-03-04T00:00:00.000000Z');
  assert.equal(await keep('2027-03-04T05:06'), '2027-03-04T05:06:00.000000Z', 'no zone means UTC');
  assert.equal(await keep(1803000000), '2027-02-19T01:20:00.000000Z');
  assert.equal(await keep('1803000000'), '2027-02-19T01:20:00.000000Z');
  assert.equal(await keep(null), null);

  const before = new Date();
  const tomorrow = await keep('tomorrow at 9am');
  const after = new Date();
  const nineAm = (d: Date) =>
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1, 9)).toISOString().replace('Z', '000Z');
  assert.ok([nineAm(before), nineAm(after)].includes(tomorrow), `tomorrow at 9am UTC, got ${tomorrow}`);

  const start = Date.now();
  const inThirty = Date.parse(await keep('in 30 days'));
  assert.ok(inThirty >= start + 30 * 86_400_000 - 1000 && inThirty <= Date.now() + 30 * 86_400_000 + 1000);
  assert.ok(Date.parse(await keep('next friday')) > start, 'English dates are read toward the future');
});

test('keep_until that cannot be read is 400 {error}; nothing is stored', async () => {
  const { api } = await workspace();
  for (const value of [
    'not a date',
    'hello tomorrow world',
    '',
    '2027-02-30',
    '2027-13-01',
    '2027-01-01T25:00:00Z',
    '99999999999999',
    'forever',
  ]) {
    const res = await api.post('/v2/suppressions', { email: 'x@example.com', keep_until: value });
    assert.equal(res.status, 400, `keep_until ${JSON.stringify(value)}`);
    assert.deepEqual(res.body, KEEP_UNTIL_ERROR);
  }
  const wrongType = await api.post('/v2/suppressions', { email: 'x@example.com', keep_until: true });
  assert.equal(wrongType.status, 400);
  assert.equal(wrongType.body.error, 'Bad Request');
  assert.equal((await api.get('/v2/suppressions')).body.data.length, 0);
});

test('invalid email is 400 {error}; a missing email or a bad type is the standard validation error', async () => {
  const { api } = await workspace();
  for (const email of [
    '',
    'no-at-sign',
    'two@@example.com',
    'a b@example.com',
    'user@',
    '@example.com',
    'user@nodot',
    `${'x'.repeat(250)}@example.com`,
  ]) {
    const res = await api.post('/v2/suppressions', { email });
    assert.equal(res.status, 400, email);
    assert.deepEqual(res.body, { error: 'Invalid email address' });
  }

  const missing = await api.post('/v2/suppressions', { reason: 'x' });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, {
    statusCode: 400,
    error: 'Bad Request',
    message: "body must have required property 'email'",
    details: [
      {
        instancePath: '',
        schemaPath: '#/required',
        keyword: 'required',
        params: { missingProperty: 'email' },
        message: "must have required property 'email'",
      },
    ],
  });

  const badType = await api.post('/v2/suppressions', { email: 'a@example.com', type: 'spam' });
  assert.equal(badType.status, 400);
  assert.equal(badType.body.statusCode, 400);
  assert.ok(Array.isArray(badType.body.details) && badType.body.details.length > 0);

  const badJson = await api.post('/v2/suppressions', '{"email":');
  assert.equal(badJson.status, 400);
  assert.deepEqual(badJson.body, { statusCode: 400, error: 'Bad Request', message: 'Invalid JSON in request body' });
});

test('one suppression per address and type: 409 {error, existing}; another type is fine', async () => {
  const { api } = await workspace();
  const first = await create(api, { email: 'dup@example.com', reason: 'first' });
  const again = await api.post('/v2/suppressions', { email: 'DUP@example.com', reason: 'second' });
  assert.equal(again.status, 409);
  assert.deepEqual(again.body, { error: 'A suppression of this type already exists for this address', existing: first });

  const bounce = await create(api, { email: 'dup@example.com', type: 'bounce' });
  assert.equal(bounce.type, 'bounce');

  const other = await app.newWorkspace();
  assert.equal((await other.api.post('/v2/suppressions', { email: 'dup@example.com' })).status, 201, 'another workspace has its own list');
});

test('retrieve by id or URL-encoded address; 400 when neither; 404 when unknown or in another workspace', async () => {
  const { api } = await workspace();
  const sup = await create(api, { email: 'First.Last+tag@Example.com', reason: 'r' });
  assert.deepEqual((await api.get(`/v2/suppressions/${sup.id}`)).body, sup);
  const byAddress = await api.get(`/v2/suppressions/${encodeURIComponent('first.last+tag@example.com')}`);
  assert.equal(byAddress.status, 200);
  assert.deepEqual(byAddress.body, sup);
  assert.deepEqual((await api.get(`/v2/suppressions/${encodeURIComponent('FIRST.LAST+TAG@EXAMPLE.COM')}`)).body, sup);
  assert.deepEqual((await api.get('/v2/suppressions/first.last+tag@example.com')).body, sup, 'an unencoded @ works too');

  for (const bad of ['not-an-address', 'sup_short', encodeURIComponent('a b@example.com')]) {
    const res = await api.get(`/v2/suppressions/${bad}`);
    assert.equal(res.status, 400, bad);
    assert.deepEqual(res.body, { error: 'Invalid suppression id or email address' });
  }
  for (const unknown of ['sup_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR', 'nobody%40example.com']) {
    const res = await api.get(`/v2/suppressions/${unknown}`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'Suppression not found' });
  }
  const other = await app.newWorkspace();
  assert.equal((await other.api.get(`/v2/suppressions/${sup.id}`)).status, 404);
  assert.equal((await other.api.get('/v2/suppressions/first.last%2Btag%40example.com')).status, 404);
});

test('by address with several types, the recipient suppression is returned; the id targets a type', async () => {
  const { api } = await workspace();
  const complaint = await create(api, { email: 'multi@example.com', type: 'complaint' });
  const recipient = await create(api, { email: 'multi@example.com' });
  assert.deepEqual((await api.get('/v2/suppressions/multi%40example.com')).body, recipient);
  assert.deepEqual((await api.get(`/v2/suppressions/${complaint.id}`)).body, complaint);
});

test('update: changes only the given fields, emits suppression.updated, keep_until null makes permanent', async () => {
  const { id, api } = await workspace();
  const sup = await create(api, { email: 'u@example.com', reason: 'old', keep_until: '2030-01-01T00:00:00Z' });

  const reason = await api.post(`/v2/suppressions/${sup.id}`, { reason: 'new reason' });
  assert.equal(reason.status, 200);
  assert.deepEqual(reason.body, { ...sup, reason: 'new reason' });

  const permanent = await api.post('/v2/suppressions/u%40example.com', { keep_until: null });
  assert.deepEqual(permanent.body, { ...sup, reason: 'new reason', keep_until: null });

  const moved = await api.post(`/v2/suppressions/${sup.id}`, {
    email: 'New@Example.com',
    type: 'unsubscribe',
    keep_until: 'Dec 31 2031 5pm',
  });
  assert.equal(moved.status, 200);
  assert.deepEqual(moved.body, {
    ...sup,
    email: 'new@example.com',
    type: 'unsubscribe',
    reason: 'new reason',
    keep_until: '2031-12-31T17:00:00.000000Z',
  });
  assert.deepEqual((await api.get('/v2/suppressions/new%40example.com')).body, moved.body);
  assert.equal((await api.get('/v2/suppressions/u%40example.com')).status, 404);

  const cleared = await api.post(`/v2/suppressions/${sup.id}`, { reason: null });
  assert.equal(cleared.body.reason, null);

  const log = await events(id);
  assert.deepEqual(
    log.map((e) => e.type),
    ['suppression.created', 'suppression.updated', 'suppression.updated', 'suppression.updated', 'suppression.updated'],
  );
  assert.deepEqual(log[3].object, moved.body);
});

test('update errors: no fields, invalid email, bad keep_until (400); unknown (404); collision (409)', async () => {
  const { api } = await workspace();
  const a = await create(api, { email: 'a@example.com' });
  const b = await create(api, { email: 'b@example.com' });
  const noFields = { error: 'At least one of email, type, reason or keep_until is required' };
  assert.deepEqual((await api.post(`/v2/suppressions/${a.id}`, {})).body, noFields);
  const noBody = await api.post(`/v2/suppressions/${a.id}`);
  assert.equal(noBody.status, 400);
  assert.deepEqual(noBody.body, noFields);
  const emptyJson = await api.post(`/v2/suppressions/${a.id}`, '', { 'content-type': 'application/json' });
  assert.deepEqual([emptyJson.status, emptyJson.body], [400, noFields]);

  const badEmail = await api.post(`/v2/suppressions/${a.id}`, { email: 'nope' });
  assert.deepEqual([badEmail.status, badEmail.body], [400, { error: 'Invalid email address' }]);
  const badKeep = await api.post(`/v2/suppressions/${a.id}`, { keep_until: 'someday maybe' });
  assert.deepEqual([badKeep.status, badKeep.body], [400, KEEP_UNTIL_ERROR]);
  const badType = await api.post(`/v2/suppressions/${a.id}`, { type: 'other' });
  assert.equal(badType.status, 400);
  assert.equal(badType.body.error, 'Bad Request');

  const missing = await api.post('/v2/suppressions/sup_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR', { reason: 'x' });
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Suppression not found' }]);
  const invalidId = await api.post('/v2/suppressions/whatever', { reason: 'x' });
  assert.deepEqual([invalidId.status, invalidId.body], [400, { error: 'Invalid suppression id or email address' }]);

  const clash = await api.post(`/v2/suppressions/${a.id}`, { email: 'B@example.com' });
  assert.equal(clash.status, 409);
  assert.deepEqual(clash.body, { error: 'A suppression of this type already exists for this address', existing: b });
  assert.deepEqual((await api.get(`/v2/suppressions/${a.id}`)).body, a, 'nothing changed');
  const sameValues = await api.post(`/v2/suppressions/${a.id}`, { email: 'a@example.com', type: 'recipient' });
  assert.equal(sameValues.status, 200, 'its own address and type are no collision');
});

test('delete by id or address removes one suppression and emits suppression.deleted', async () => {
  const { id, api } = await workspace();
  const recipient = await create(api, { email: 'd@example.com', reason: 'r' });
  const bounce = await create(api, { email: 'd@example.com', type: 'bounce' });
  const other = await create(api, { email: 'e@example.com' });

  const byId = await api.delete(`/v2/suppressions/${other.id}`);
  assert.equal(byId.status, 200);
  assert.deepEqual(byId.body, { id: other.id, email: 'e@example.com', deleted: true });
  assert.deepEqual((await api.delete(`/v2/suppressions/${other.id}`)).body, { error: 'Suppression not found' });

  const first = await api.delete('/v2/suppressions/D%40example.com');
  assert.deepEqual(first.body, { id: recipient.id, email: 'd@example.com', deleted: true });
  const second = await api.delete('/v2/suppressions/d%40example.com');
  assert.deepEqual(second.body, { id: bounce.id, email: 'd@example.com', deleted: true });
  const third = await api.delete('/v2/suppressions/d%40example.com');
  assert.deepEqual([third.status, third.body], [404, { error: 'Suppression not found' }]);
  const invalid = await api.delete('/v2/suppressions/not-valid');
  assert.deepEqual([invalid.status, invalid.body], [400, { error: 'Invalid suppression id or email address' }]);

  const deleted = (await events(id)).filter((e) => e.type === 'suppression.deleted');
  assert.deepEqual(
    deleted.map((e) => e.object),
    [other, recipient, bounce],
  );
});

test('list: newest first, default limit 10, page URLs keep search, filters and sort', async () => {
  const { api } = await workspace();
  const made = [];
  for (let i = 0; i < 12; i++)
    made.push(await create(api, { email: `user${String(i).padStart(2, '0')}@example.com`, reason: i % 2 ? 'odd bounce' : 'even' }));

  const page1 = await api.get('/v2/suppressions');
  assert.equal(page1.status, 200);
  assert.deepEqual(page1.body.data, made.slice().reverse().slice(0, 10));
  assert.equal(page1.body.next_page_url, '/v2/suppressions?page=2');
  assert.equal(page1.body.previous_page_url, null);
  const page2 = await api.get(page1.body.next_page_url);
  assert.deepEqual(page2.body.data, [made[1], made[0]]);
  assert.equal(page2.body.next_page_url, null);
  assert.equal(page2.body.previous_page_url, '/v2/suppressions?page=1');

  const query = 'search=odd&type.exact=recipient&sort=email&order=asc&limit=2';
  const s1 = await api.get(`/v2/suppressions?${query}`);
  assert.deepEqual(
    s1.body.data.map((s: any) => s.email),
    ['user01@example.com', 'user03@example.com'],
  );
  assert.equal(s1.body.next_page_url, `/v2/suppressions?${query}&page=2`);
  const s2 = await api.get(s1.body.next_page_url);
  assert.deepEqual(
    s2.body.data.map((s: any) => s.email),
    ['user05@example.com', 'user07@example.com'],
  );
  assert.equal(s2.body.previous_page_url, `/v2/suppressions?${query}&page=1`);

  const q = await api.get('/v2/suppressions?q=USER1&limit=5');
  assert.deepEqual(
    q.body.data.map((s: any) => s.email),
    ['user11@example.com', 'user10@example.com'],
    'q is an alias of search (case-insensitive, on the address)',
  );
  const onReason = await api.get('/v2/suppressions?search=even&limit=100');
  assert.equal(onReason.body.data.length, 6, 'search also matches the reason');
});

test('list: sort keys, order, filters with match, limits', async () => {
  const { api } = await workspace();
  await create(api, { email: 'carol@b.org', type: 'bounce', reason: 'Mailbox full' });
  await create(api, { email: 'alice@a.com', type: 'unsubscribe', reason: 'clicked link' });
  await create(api, { email: 'bob@a.com', type: 'complaint', reason: null });
  await create(api, { email: 'dave@c.net', reason: 'added by hand' });
  const emails = async (query: string) => {
    const res = await api.get(`/v2/suppressions?${query}`);
    assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    return res.body.data.map((s: any) => s.email);
  };
  assert.deepEqual(await emails(''), ['dave@c.net', 'bob@a.com', 'alice@a.com', 'carol@b.org']);
  assert.deepEqual(
    await emails('order=asc'),
    ['carol@b.org', 'alice@a.com', 'bob@a.com', 'dave@c.net'],
    'order alone reverses the default created_at sort',
  );
  assert.deepEqual(
    await emails('sort=email'),
    ['dave@c.net', 'carol@b.org', 'bob@a.com', 'alice@a.com'],
    'sort without order is descending',
  );
  assert.deepEqual(await emails('sort=email&order=asc'), ['alice@a.com', 'bob@a.com', 'carol@b.org', 'dave@c.net']);
  assert.deepEqual(await emails('sort=type&order=asc'), ['carol@b.org', 'bob@a.com', 'dave@c.net', 'alice@a.com']);
  assert.deepEqual(
    await emails('sort=reason&order=asc'),
    ['bob@a.com', 'dave@c.net', 'alice@a.com', 'carol@b.org'],
    'case-insensitive; no reason first',
  );
  assert.deepEqual(await emails('sort=reason&order=desc'), ['carol@b.org', 'alice@a.com', 'dave@c.net', 'bob@a.com']);
  assert.deepEqual(await emails('sort=created_at&order=asc'), ['carol@b.org', 'alice@a.com', 'bob@a.com', 'dave@c.net']);

  assert.deepEqual(await emails('email.ends_with=@a.com&sort=email&order=asc'), ['alice@a.com', 'bob@a.com']);
  assert.deepEqual(await emails('type.in=bounce,complaint&sort=email&order=asc'), ['bob@a.com', 'carol@b.org']);
  assert.deepEqual(await emails('type.exact=bounce&email.contains=dave&match=or&sort=email&order=asc'), ['carol@b.org', 'dave@c.net']);
  assert.deepEqual(await emails('type.exact=bounce&email.contains=dave'), []);
  assert.deepEqual(await emails('reason.is_empty=1'), ['bob@a.com']);
  assert.deepEqual(await emails('reason.is_not_empty=1&reason.not_contains=LINK&sort=email&order=asc'), ['carol@b.org', 'dave@c.net']);
  assert.deepEqual(
    await emails('type.exact=nonsense&unknown.exact=1&sort=email&order=asc'),
    ['alice@a.com', 'bob@a.com', 'carol@b.org', 'dave@c.net'],
    'filters that do not apply are ignored',
  );
  assert.equal((await emails('created_at.after=2000-01-01')).length, 4);

  for (const bad of ['limit=0', 'limit=101', 'page=0', 'sort=keep_until', 'order=sideways', 'match=some']) {
    const res = await api.get(`/v2/suppressions?${bad}`);
    assert.equal(res.status, 400, bad);
    assert.equal(res.body.error, 'Bad Request');
  }
});

test('every endpoint needs a full key', async () => {
  const key = await app.api.post('/v2/api-keys', { name: 'sending only', scope: 'sending' });
  const sending = app.as(key.body.key);
  for (const [method, path] of [
    ['GET', '/v2/suppressions'],
    ['POST', '/v2/suppressions'],
    ['GET', '/v2/suppressions/a%40b.com'],
    ['POST', '/v2/suppressions/a%40b.com'],
    ['DELETE', '/v2/suppressions/a%40b.com'],
  ]) {
    const res = await sending.request(method, path, method === 'POST' ? { email: 'a@b.com' } : undefined);
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.equal(res.body.error, 'Forbidden');
  }
  assert.equal((await app.as(null).get('/v2/suppressions')).status, 401);
});

test('expired suppressions stay listed but stop blocking: activeSuppressions', async (t) => {
  t.after(() => resetClock());
  const { id, api } = await workspace();
  const db = app.running.ctx.db;
  const permanent = await create(api, { email: 'perm@example.com' });
  const expired = await create(api, { email: 'old@example.com', keep_until: '2020-01-01T00:00:00Z' });
  const soon = await create(api, { email: 'soon@example.com', keep_until: 'in 1 hour' });
  const unsubscribe = await create(api, { email: 'perm@example.com', type: 'unsubscribe' });
  await (await app.newWorkspace()).api.post('/v2/suppressions', { email: 'elsewhere@example.com' });

  assert.equal((await api.get('/v2/suppressions')).body.data.length, 4, 'the expired one is still listed');
  const addresses = [
    'PERM@example.com',
    'old@example.com',
    ' soon@example.com ',
    'clean@example.com',
    'elsewhere@example.com',
    'perm@example.com',
  ];
  assert.deepEqual(await activeSuppressions(db, id, addresses), [permanent, unsubscribe, soon]);
  assert.deepEqual(await activeSuppressions(db, id, addresses, ['recipient']), [permanent, soon]);
  assert.deepEqual(await activeSuppressions(db, id, addresses, ['unsubscribe', 'bounce']), [unsubscribe]);
  assert.deepEqual(await activeSuppressions(db, id, []), []);
  assert.deepEqual(await activeSuppressions(db, id, addresses, []), []);
  assert.ok(expired.keep_until < new Date().toISOString());

  shiftClock(2 * 3600_000);
  assert.deepEqual(await activeSuppressions(db, id, addresses, ['recipient']), [permanent], 'keep_until has passed');

  const many = Array.from({ length: 1200 }, (_, i) => `bulk${i}@example.com`).concat(['perm@example.com']);
  assert.deepEqual(await activeSuppressions(db, id, many, ['recipient']), [permanent], 'long address lists are queried in chunks');
});

test('addAutomaticSuppression upserts without suppression.created; an expired one becomes permanent again', async () => {
  const { id, api } = await workspace();
  const db = app.running.ctx.db;
  const auto = await db
    .transaction()
    .execute((tx) => addAutomaticSuppression(tx, id, 'Bounced@Example.com', 'bounce', '550 5.1.1 user unknown'));
  assert.deepEqual(auto, {
    object: 'suppression',
    id: auto.id,
    type: 'bounce',
    email: 'bounced@example.com',
    reason: '550 5.1.1 user unknown',
    created_at: auto.created_at,
    keep_until: null,
  });
  assert.deepEqual((await api.get('/v2/suppressions')).body.data, [auto], 'automatic suppressions are listed');
  assert.deepEqual(await events(id), [], 'no suppression.created for automatic suppressions');

  const again = await db.transaction().execute((tx) => addAutomaticSuppression(tx, id, 'bounced@example.com', 'bounce', '550 again'));
  assert.deepEqual(again, { ...auto, reason: '550 again' });

  const expired = await create(api, { email: 'c@example.com', type: 'complaint', keep_until: '2021-01-01' });
  const future = await create(api, { email: 'f@example.com', type: 'complaint', keep_until: '2099-01-01' });
  const revived = await db.transaction().execute((tx) => addAutomaticSuppression(tx, id, 'c@example.com', 'complaint', 'complained'));
  assert.deepEqual(revived, { ...expired, reason: 'complained', keep_until: null });
  const kept = await db.transaction().execute((tx) => addAutomaticSuppression(tx, id, 'f@example.com', 'complaint', 'complained'));
  assert.deepEqual(kept, { ...future, reason: 'complained' }, 'a future expiry set by the user is kept');
  assert.deepEqual(
    (await activeSuppressions(db, id, ['c@example.com'])).map((s) => s.id),
    [expired.id],
  );
});

test('the routes are in the OpenAPI document', async () => {
  const doc = (await app.as(null).get('/openapi.json')).body;
  assert.ok(doc.paths['/v2/suppressions'].post && doc.paths['/v2/suppressions'].get);
  assert.ok(doc.paths['/v2/suppressions/{id}'].get && doc.paths['/v2/suppressions/{id}'].post && doc.paths['/v2/suppressions/{id}'].delete);
});
