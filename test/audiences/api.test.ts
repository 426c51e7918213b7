// Audiences and subscribers over HTTP (https://emailit.com/docs/audiences.md) and the legacy v1
// audiences.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp, type ApiClient } from '../helpers/app.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

async function workspace(plan = 'pro') {
  const { workspace, api, key } = await app.newWorkspace({ plan });
  return { id: workspace.id, api, key };
}

async function events(workspaceId: string, prefix: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('type', 'like', `${prefix}%`)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ type: row.type, object: JSON.parse(row.data) }));
}

async function createAudience(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/v2/audiences', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

test('audiences: create with token and settings, 409 existing, get by id or name, update, list, delete keeps contacts', async () => {
  const { id, api } = await workspace();
  const created = await createAudience(api, {
    name: 'Newsletter',
    visibility: 'public',
    public_name: 'The Weekly',
    unengaged: { exclude: true, days: 60 },
  });
  assert.match(created.id, /^aud_[A-Za-z0-9]{27}$/);
  assert.match(created.token, /^[A-Za-z0-9]{32}$/);
  assert.equal(created.object, 'audience');
  assert.equal(created.subscribers_count, 0);
  assert.equal(created.visibility, 'public');
  assert.equal(created.public_name, 'The Weekly');
  assert.deepEqual(created.unengaged, { exclude: true, days: 60 });
  assert.equal(created.double_opt_in.enabled, false);

  const dup = await api.post('/v2/audiences', { name: 'Newsletter' });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.existing.id, created.id);
  assert.equal((await api.post('/v2/audiences', {})).status, 400);
  assert.equal((await api.post('/v2/audiences', { name: 'x', unengaged: { days: 5 } })).status, 400);
  const noSender = await api.post('/v2/audiences', { name: 'DOI', double_opt_in: true });
  assert.equal(noSender.status, 400);
  assert.match(noSender.body.error, /from is required/);
  const unverified = await api.post('/v2/audiences', {
    name: 'DOI',
    double_opt_in: { enabled: true, email: { from: 'news@unverified.test' } },
  });
  assert.equal(unverified.status, 422);
  assert.deepEqual(unverified.body, { error: 'Domain not verified' });

  assert.equal((await api.get(`/v2/audiences/${created.id}`)).body.name, 'Newsletter');
  assert.equal((await api.get('/v2/audiences/Newsletter')).body.id, created.id);
  const renamed = await api.post(`/v2/audiences/${created.id}`, { name: 'Weekly news', public_description: 'Every Monday' });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.name, 'Weekly news');
  assert.equal(renamed.body.public_name, 'The Weekly', 'settings not sent are kept');
  assert.equal(renamed.body.public_description, 'Every Monday');
  await createAudience(api, { name: 'Other' });
  assert.equal((await api.post(`/v2/audiences/${created.id}`, { name: 'Other' })).status, 409);

  const list = await api.get('/v2/audiences?order=name&direction=asc');
  assert.deepEqual(
    list.body.data.map((a: any) => a.name),
    ['Other', 'Weekly news'],
  );
  assert.equal(list.body.total_records, 2);
  assert.deepEqual(
    (await api.get('/v2/audiences?search=week')).body.data.map((a: any) => a.name),
    ['Weekly news'],
  );

  await api.post('/v2/contacts', { email: 'stays@example.com', audiences: [created.id] });
  const deleted = await api.delete(`/v2/audiences/${created.id}`);
  assert.deepEqual(deleted.body, { object: 'audience', id: created.id, name: 'Weekly news', deleted: true });
  assert.equal((await api.get(`/v2/audiences/${created.id}`)).status, 404);
  const contact = await api.get('/v2/contacts/stays%40example.com');
  assert.equal(contact.status, 200);
  assert.deepEqual(contact.body.audiences, []);
  const types = (await events(id, 'audience.')).map((e) => e.type);
  assert.deepEqual(types, ['audience.created', 'audience.updated', 'audience.created', 'audience.deleted']);
  for (const e of await events(id, 'audience.')) assert.deepEqual(checkEventPayload(e.type, e.object), []);
});

test('subscribers: add creates the contact (201), existing contact overwritten, 409 already, resubscribe 200 with both events, update, delete', async () => {
  const { id, api } = await workspace();
  const list = await createAudience(api, { name: 'Members' });
  const added = await api.post(`/v2/audiences/${list.id}/subscribers`, {
    email: 'New@Example.com',
    first_name: 'New',
    custom_fields: { a: 1 },
  });
  assert.equal(added.status, 201, added.text);
  assert.match(added.body.id, /^sub_/);
  assert.equal(added.body.subscribed, true);
  assert.deepEqual(added.body.audience, { id: list.id, name: 'Members' });
  assert.deepEqual(added.body.contact.email, 'new@example.com');
  assert.deepEqual(checkEventPayload('subscriber.created', (await events(id, 'subscriber.created'))[0].object), []);

  await api.post('/v2/contacts', { email: 'old@example.com', first_name: 'Old', last_name: 'Name', custom_fields: { keep: false } });
  const byName = await api.post('/v2/audiences/Members/subscribers', {
    email: 'old@example.com',
    first_name: 'Renamed',
    custom_fields: { b: 2 },
  });
  assert.equal(byName.status, 201);
  assert.equal(byName.body.contact.first_name, 'Renamed');
  assert.equal(byName.body.contact.last_name, 'Name', 'fields not sent stay');
  assert.deepEqual(byName.body.contact.custom_fields, { b: 2 }, 'custom_fields replace');

  const again = await api.post(`/v2/audiences/${list.id}/subscribers`, { email: 'old@example.com' });
  assert.equal(again.status, 409);
  assert.equal(again.body.existing.id, byName.body.id);

  const off = await api.post(`/v2/audiences/${list.id}/subscribers/${byName.body.id}`, { subscribed: false });
  assert.equal(off.status, 200);
  assert.equal(off.body.subscribed, false);
  assert.ok(off.body.unsubscribed_at);
  const before = (await events(id, 'subscriber.')).length;
  const back = await api.post(`/v2/audiences/${list.id}/subscribers`, { email: 'old@example.com' });
  assert.equal(back.status, 200);
  assert.equal(back.body.subscribed, true);
  assert.equal(back.body.unsubscribed_at, null);
  assert.deepEqual(
    (await events(id, 'subscriber.')).slice(before).map((e) => e.type),
    ['subscriber.updated', 'subscriber.resubscribed'],
  );

  const got = await api.get(`/v2/audiences/${list.id}/subscribers/${encodeURIComponent('OLD@example.com')}`);
  assert.equal(got.body.id, byName.body.id);
  assert.equal((await api.get(`/v2/audiences/${list.id}/subscribers/nobody%40example.com`)).status, 404);

  const deleted = await api.delete(`/v2/audiences/${list.id}/subscribers/${byName.body.id}`);
  assert.deepEqual(deleted.body, { object: 'subscriber', id: byName.body.id, deleted: true });
  assert.equal((await api.get('/v2/contacts/old%40example.com')).status, 200, 'the contact stays');
  assert.equal((await api.get(`/v2/audiences/${list.id}`)).body.subscribers_count, 1);
  assert.equal((await events(id, 'subscriber.deleted')).length, 1);
  assert.equal(
    (await api.post(`/v2/audiences/${list.id}/subscribers`, { email: 'x@example.com', double_opt_in: true })).status,
    422,
    'double opt-in off',
  );
  assert.equal((await api.post('/v2/audiences/aud_000000000000000000000000000/subscribers', { email: 'x@example.com' })).status, 404);
});

test('subscribers list: limit or per_page (default 25), filters, usage', async () => {
  const { api } = await workspace('business');
  const list = await createAudience(api, { name: 'Big' });
  const bulk = await api.post(`/v2/audiences/${list.id}/subscribers/bulk`, {
    subscribers: Array.from({ length: 30 }, (_, i) => ({ email: `p${String(i).padStart(2, '0')}@example.com`, first_name: `P${i}` })),
  });
  assert.equal(bulk.status, 200, bulk.text);
  assert.deepEqual(bulk.body, {
    object: 'bulk_result',
    created: 30,
    resubscribed: 0,
    already_subscribed: 0,
    contacts_created: 30,
    usage: { used: 30, limit: 250_000, plan: 'Business' },
  });
  const page = await api.get(`/v2/audiences/${list.id}/subscribers`);
  assert.equal(page.body.data.length, 25);
  assert.equal(page.body.total_records, 30);
  assert.deepEqual(page.body.usage, { used: 30, limit: 250_000, plan: 'Business' });
  assert.equal((await api.get(`/v2/audiences/${list.id}/subscribers?per_page=5`)).body.data.length, 5);
  assert.equal((await api.get(`/v2/audiences/${list.id}/subscribers?limit=7`)).body.data.length, 7);
  await api.post(`/v2/audiences/${list.id}/subscribers/p03%40example.com`, { subscribed: false });
  const off = await api.get(`/v2/audiences/${list.id}/subscribers?subscribed=false`);
  assert.deepEqual(
    off.body.data.map((s: any) => s.contact.email),
    ['p03@example.com'],
  );
  const sorted = await api.get(`/v2/audiences/${list.id}/subscribers?order=email&direction=asc&limit=2&email.starts_with=p1`);
  assert.deepEqual(
    sorted.body.data.map((s: any) => s.contact.email),
    ['p10@example.com', 'p11@example.com'],
  );

  const removed = await api.post(`/v2/audiences/${list.id}/subscribers/bulk-remove`, {
    subscribers: ['p00@example.com', page.body.data[0].id, 'nobody@example.com'],
  });
  assert.equal(removed.body.removed, 2);
  assert.deepEqual(removed.body.not_found, ['nobody@example.com']);
  assert.equal(removed.body.usage.used, 28);
});

test('bulk add is all or nothing: a bad address or the cap refuses the whole request', async () => {
  const { api } = await workspace('payg');
  const list = await createAudience(api, { name: 'Capped' });
  const bad = await api.post(`/v2/audiences/${list.id}/subscribers/bulk`, {
    subscribers: [{ email: 'ok@example.com' }, { email: 'nope' }],
  });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body.errors, [{ index: 1, email: 'nope', error: 'Invalid email address' }]);
  assert.equal((await api.get('/v2/contacts/ok%40example.com')).status, 404);

  await app.running.ctx.db.updateTable('audiences').set({ subscriber_count: 9_999 }).where('id', '=', list.id).execute();
  const over = await api.post(`/v2/audiences/${list.id}/subscribers/bulk`, {
    subscribers: [{ email: 'one@example.com' }, { email: 'two@example.com' }],
  });
  assert.equal(over.status, 422);
  assert.deepEqual(over.body.usage, { used: 10_000, limit: 10_000, plan: 'Pay as you go' });
  assert.equal((await api.get('/v2/contacts/one%40example.com')).status, 404, 'rolled back');
  const single = await api.post(`/v2/audiences/${list.id}/subscribers`, { email: 'one@example.com' });
  assert.equal(single.status, 201, 'the last place is still free');
  const full = await api.post(`/v2/audiences/${list.id}/subscribers`, { email: 'two@example.com' });
  assert.equal(full.status, 422);
  assert.equal(full.body.usage.used, 10_000);
});

test('v1 audiences: 16-character id, subscribers_count, per_page 25, filter[name], PUT, delete keeps one', async () => {
  const { api } = await workspace();
  const created = await api.post('/v1/audiences', { name: 'Legacy list' });
  assert.equal(created.status, 201);
  assert.match(created.body.id, /^[A-Za-z0-9]{16}$/);
  assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'name', 'subscribers_count', 'updated_at']);
  const v2 = (await api.get('/v2/audiences/Legacy%20list')).body;
  await api.post(`/v2/audiences/${v2.id}/subscribers`, { email: 'v1@example.com' });
  const got = await api.get(`/v1/audiences/${created.body.id}`);
  assert.equal(got.body.subscribers_count, 1);
  assert.equal(got.body.id, created.body.id, 'stable');
  for (let i = 0; i < 26; i++) await api.post('/v1/audiences', { name: `Bulk ${i}` });
  const list = await api.get('/v1/audiences');
  assert.equal(list.body.data.length, 25);
  assert.equal(list.body.per_page, 25);
  assert.equal(list.body.total_records, 27);
  assert.deepEqual(
    (await api.get('/v1/audiences?filter[name]=legacy')).body.data.map((a: any) => a.id),
    [created.body.id],
  );
  const put = await api.request('PUT', `/v1/audiences/${created.body.id}`, { name: 'Renamed legacy' });
  assert.equal(put.body.name, 'Renamed legacy');
  assert.equal((await api.get(`/v1/audiences/${created.body.id}`)).body.name, 'Renamed legacy');
  assert.equal((await api.get('/v1/audiences/nothere00000000')).status, 404);

  const lone = await workspace();
  const only = (await lone.api.post('/v1/audiences', { name: 'Only' })).body;
  const refused = await lone.api.delete(`/v1/audiences/${only.id}`);
  assert.equal(refused.status, 422);
  assert.match(refused.body.error, /at least one audience/);
  await lone.api.post('/v1/audiences', { name: 'Second' });
  const deleted = await lone.api.delete(`/v1/audiences/${only.id}`);
  assert.deepEqual(deleted.body, { id: only.id, name: 'Only', deleted: true });
});

test('v1 subscribe by token: no key, adds the contact once, never duplicates, 404 unknown token', async () => {
  const { api } = await workspace();
  const list = await createAudience(api, { name: 'Signups' });
  const visitor = app.as(null);
  const first = await visitor.post(`/v1/audiences/subscribe/${list.token}`, {
    email: 'Visitor@Example.com',
    first_name: 'Vi',
    custom_fields: { source: 'site' },
  });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.status, 'subscribed');
  const second = await visitor.post(`/v1/audiences/subscribe/${list.token}`, { email: 'visitor@example.com', first_name: 'Someone else' });
  assert.equal(second.status, 200);
  assert.equal(second.body.status, 'already_subscribed');
  const contacts = await api.get('/v2/contacts?search=visitor');
  assert.equal(contacts.body.total_records, 1);
  assert.equal(contacts.body.data[0].first_name, 'Vi', 'a public request does not overwrite a contact');
  assert.equal((await visitor.post('/v1/audiences/subscribe/nosuchtoken', { email: 'v@example.com' })).status, 404);
  assert.equal((await visitor.post(`/v1/audiences/subscribe/${list.token}`, { email: 'bad' })).status, 400);
});
