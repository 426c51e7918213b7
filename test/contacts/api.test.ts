// The contacts API over HTTP (docs/api.md, "Contacts, audiences and subscribers"), every response
// checked against /openapi.json by the api client.
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
  const { workspace, api } = await app.newWorkspace({ plan });
  return { id: workspace.id, api };
}

async function audience(api: ApiClient, name: string): Promise<string> {
  const res = await api.post('/v2/audiences', { name });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
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

test('create: lowercase email, {} custom fields, audiences of the workspace only, 201 with id/name/subscribed', async () => {
  const { id, api } = await workspace();
  const other = await workspace();
  const news = await audience(api, 'News');
  const foreign = await audience(other.api, 'Foreign');
  const res = await api.post('/v2/contacts', { email: 'Jane.Doe@Example.COM', first_name: 'Jane', audiences: [news, foreign, 'aud_nope'] });
  assert.equal(res.status, 201);
  const contact = res.body;
  assert.match(contact.id, /^con_[A-Za-z0-9]{27}$/);
  assert.equal(contact.email, 'jane.doe@example.com');
  assert.deepEqual(contact.custom_fields, {});
  assert.equal(contact.last_name, null);
  assert.equal(contact.unsubscribed, false);
  assert.deepEqual(contact.audiences, [{ id: news, name: 'News', subscribed: true }]);

  const types = (await events(id, '')).filter((e) => e.type.startsWith('contact.') || e.type.startsWith('subscriber.'));
  assert.deepEqual(
    types.map((e) => e.type),
    ['contact.created', 'subscriber.created'],
  );
  for (const e of types) assert.deepEqual(checkEventPayload(e.type, e.object), []);

  const dup = await api.post('/v2/contacts', { email: 'JANE.DOE@example.com' });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.existing.id, contact.id);
  assert.equal(dup.body.existing.email, 'jane.doe@example.com');

  const bad = await api.post('/v2/contacts', { email: 'not an address' });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, { error: 'Invalid email address' });
  const missing = await api.post('/v2/contacts', { first_name: 'x' });
  assert.equal(missing.status, 400);
  assert.ok(Array.isArray(missing.body.details));
});

test('unsubscribed on create makes memberships unsubscribed; custom fields: declared dates YYYY-MM-DD, unknown keys as given', async () => {
  const { api } = await workspace();
  const list = await audience(api, 'List');
  assert.equal((await api.post('/v2/custom-fields', { key: 'birthday', label: 'Birthday', type: 'date' })).status, 201);
  assert.equal((await api.post('/v2/custom-fields', { key: 'score', type: 'number' })).status, 201);
  const badDate = await api.post('/v2/contacts', { email: 'd@example.com', custom_fields: { birthday: '12/31/1990' } });
  assert.equal(badDate.status, 400);
  assert.match(badDate.body.error, /birthday.*YYYY-MM-DD/);
  const badDay = await api.post('/v2/contacts', { email: 'd@example.com', custom_fields: { birthday: '2023-02-30' } });
  assert.equal(badDay.status, 400);
  assert.equal((await api.get('/v2/contacts/d%40example.com')).status, 404, 'nothing created');

  const res = await api.post('/v2/contacts', {
    email: 'd@example.com',
    unsubscribed: true,
    audiences: [list],
    custom_fields: { birthday: '1990-12-31', score: '42', 'Favourite colour': ['blue'] },
  });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.custom_fields, { birthday: '1990-12-31', score: 42, 'Favourite colour': ['blue'] });
  assert.equal(res.body.unsubscribed, true);
  assert.deepEqual(res.body.audiences, [{ id: list, name: 'List', subscribed: false }]);
});

test('retrieve by id or URL-encoded email with subscriber objects; 404 {error}', async () => {
  const { api } = await workspace();
  const list = await audience(api, 'Weekly');
  const created = (await api.post('/v2/contacts', { email: 'a+tag@example.com', audiences: [list] })).body;
  for (const path of [created.id, encodeURIComponent('a+tag@example.com'), encodeURIComponent('A+Tag@Example.com')]) {
    const res = await api.get(`/v2/contacts/${path}`);
    assert.equal(res.status, 200, path);
    assert.equal(res.body.id, created.id);
    const [membership] = res.body.audiences;
    assert.equal(membership.id, list);
    assert.equal(membership.name, 'Weekly');
    assert.match(membership.subscriber.id, /^sub_/);
    assert.equal(membership.subscriber.subscribed, true);
    assert.ok(membership.subscriber.subscribed_at);
    assert.equal(membership.subscriber.unsubscribed_at, null);
  }
  const missing = await api.get('/v2/contacts/con_000000000000000000000000000');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: 'Contact not found' });
});

test('update: fields, custom_fields replaced, audiences as the complete list, previous of changed fields; 400 none; 409 taken email', async () => {
  const { id, api } = await workspace();
  const [a, b, c] = [await audience(api, 'A'), await audience(api, 'B'), await audience(api, 'C')];
  const contact = (
    await api.post('/v2/contacts', { email: 'u@example.com', first_name: 'U', custom_fields: { x: 1, y: 2 }, audiences: [a, b] })
  ).body;
  await api.post('/v2/contacts', { email: 'taken@example.com' });
  const before = (await events(id, 'subscriber.')).length;

  const res = await api.post(`/v2/contacts/${contact.id}`, { last_name: 'Updated', custom_fields: { z: 3 }, audiences: [b, c] });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.last_name, 'Updated');
  assert.equal(res.body.first_name, 'U');
  assert.deepEqual(res.body.custom_fields, { z: 3 });
  assert.deepEqual(
    res.body.audiences.map((m: any) => m.name),
    ['B', 'C'],
  );
  assert.ok(res.body.audiences[0].subscriber.id);

  const updated = (await events(id, 'contact.updated')).at(-1)!;
  assert.deepEqual(checkEventPayload('contact.updated', updated.object), []);
  assert.equal(updated.object.previous.last_name, null);
  assert.deepEqual(updated.object.previous.custom_fields, { x: 1, y: 2 });
  assert.equal('first_name' in updated.object.previous, false, 'unchanged fields are not in previous');
  const subscriberEvents = (await events(id, 'subscriber.')).slice(before);
  assert.deepEqual(
    subscriberEvents.map((e) => [e.type, e.object.audience.name]),
    [
      ['subscriber.created', 'C'],
      ['subscriber.deleted', 'A'],
    ],
  );

  const none = await api.post(`/v2/contacts/${contact.id}`, {});
  assert.equal(none.status, 400);
  assert.match(none.body.error, /at least one/);
  const noBody = await api.request('POST', `/v2/contacts/${contact.id}`);
  assert.equal(noBody.status, 400);
  const taken = await api.post(`/v2/contacts/${contact.id}`, { email: 'TAKEN@example.com' });
  assert.equal(taken.status, 409);
  assert.deepEqual(taken.body, { error: 'This email belongs to another contact' });
  const emptied = await api.post(`/v2/contacts/${encodeURIComponent('u@example.com')}`, { audiences: [], unsubscribed: true });
  assert.deepEqual(emptied.body.audiences, []);
  assert.equal(emptied.body.unsubscribed, true);
  assert.equal((await api.post('/v2/contacts/nobody%40example.com', { first_name: 'x' })).status, 404);
});

test('delete: memberships go, the audience count drops, contact.deleted; 404 after', async () => {
  const { id, api } = await workspace();
  const list = await audience(api, 'L');
  const contact = (await api.post('/v2/contacts', { email: 'gone@example.com', audiences: [list] })).body;
  const res = await api.delete(`/v2/contacts/${encodeURIComponent('gone@example.com')}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { object: 'contact', id: contact.id, email: 'gone@example.com', deleted: true });
  assert.equal((await api.get(`/v2/contacts/${contact.id}`)).status, 404);
  assert.equal((await api.get(`/v2/audiences/${list}`)).body.subscribers_count, 0);
  const types = (await events(id, '')).map((e) => e.type).filter((t) => t.startsWith('contact.') || t.startsWith('subscriber.'));
  assert.deepEqual(types.slice(-2), ['subscriber.deleted', 'contact.deleted']);
  assert.equal((await api.delete(`/v2/contacts/${contact.id}`)).status, 404);
});

test('422 with usage at the plan cap, nothing created', async () => {
  const { api } = await workspace('payg');
  const list = await audience(api, 'Full');
  await app.running.ctx.db.updateTable('audiences').set({ subscriber_count: 10_000 }).where('id', '=', list).execute();
  const res = await api.post('/v2/contacts', { email: 'late@example.com', audiences: [list] });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body.usage, { used: 10_000, limit: 10_000, plan: 'Pay as you go' });
  assert.match(res.body.error, /limit/);
  assert.equal((await api.get('/v2/contacts/late%40example.com')).status, 404);
});

test('list: search/q, audience_id, unsubscribed, filters (name, audiences, custom_fields.<key>, audience_id not_exact, filter[...] forms), sorts, total_records', async () => {
  const { api } = await workspace();
  const alpha = await audience(api, 'Alpha');
  const beta = await audience(api, 'Beta');
  const people = [
    { email: 'ann@example.com', first_name: 'Ann', last_name: 'Zed', audiences: [beta], custom_fields: { plan: 'gold', seats: 3 } },
    {
      email: 'bob@example.org',
      first_name: 'Bob',
      last_name: 'Young',
      audiences: [alpha, beta],
      custom_fields: { plan: 'silver', seats: 10 },
    },
    { email: 'cy@example.com', first_name: null, last_name: 'Xu', unsubscribed: true, custom_fields: { vip: true } },
  ];
  for (const p of people) assert.equal((await api.post('/v2/contacts', p)).status, 201);
  const emails = async (query: string) => {
    const res = await api.get(`/v2/contacts?${query}`);
    assert.equal(res.status, 200, `${query}: ${res.text}`);
    return res.body.data.map((c: any) => c.email);
  };
  assert.deepEqual(await emails(''), ['cy@example.com', 'bob@example.org', 'ann@example.com'], 'newest first');
  assert.deepEqual(await emails('search=example.org'), ['bob@example.org']);
  assert.deepEqual(await emails('q=ANN'), ['ann@example.com']);
  assert.deepEqual(await emails(`audience_id=${alpha}`), ['bob@example.org']);
  assert.deepEqual(await emails(`filter[audience_id]=${beta}&sort=email&order=asc`), ['ann@example.com', 'bob@example.org']);
  assert.deepEqual(await emails(`audience_id.not_exact=${beta}`), ['cy@example.com']);
  assert.deepEqual(await emails('unsubscribed=true'), ['cy@example.com']);
  assert.deepEqual(await emails('filter[unsubscribed]=false&sort=email&order=asc'), ['ann@example.com', 'bob@example.org']);
  assert.deepEqual(await emails('name.exact=bob%20young'), ['bob@example.org']);
  assert.deepEqual(await emails('name.exact=Xu'), ['cy@example.com'], 'a missing first name leaves no space');
  assert.deepEqual(await emails('audiences.exact=alpha'), ['bob@example.org'], 'alphabetically first audience');
  assert.deepEqual(await emails('custom_fields.plan.exact=gold'), ['ann@example.com']);
  assert.deepEqual(await emails('filter[custom_fields][plan]=silver'), ['bob@example.org']);
  assert.deepEqual(await emails('custom_fields.seats.exact=10'), ['bob@example.org'], 'numbers compared as text');
  assert.deepEqual(await emails('custom_fields.vip.exact=true'), ['cy@example.com'], 'booleans as true/false');
  assert.deepEqual(await emails('custom_fields.plan.exact=gold&custom_fields.plan.exact=silver&match=or&sort=email&order=asc'), [
    'ann@example.com',
    'bob@example.org',
  ]);
  assert.deepEqual(await emails('sort=last_name&order=asc'), ['cy@example.com', 'bob@example.org', 'ann@example.com']);
  assert.deepEqual(await emails('sort=name&order=asc'), ['ann@example.com', 'bob@example.org', 'cy@example.com']);
  assert.deepEqual(
    await emails('sort=audiences&order=asc'),
    ['bob@example.org', 'ann@example.com', 'cy@example.com'],
    'no audience sorts last',
  );
  assert.deepEqual(await emails('sort=first_name&order=desc'), ['bob@example.org', 'ann@example.com', 'cy@example.com']);
  assert.deepEqual(await emails('sort=custom_fields.plan&order=asc'), ['ann@example.com', 'bob@example.org', 'cy@example.com']);

  const page = await api.get('/v2/contacts?limit=2&sort=email&order=asc');
  assert.equal(page.body.total_records, 3);
  assert.equal(page.body.data.length, 2);
  assert.deepEqual(page.body.data[1].audiences, [
    { id: alpha, name: 'Alpha', subscribed: true },
    { id: beta, name: 'Beta', subscribed: true },
  ]);
  assert.equal(page.body.next_page_url, '/v2/contacts?limit=2&sort=email&order=asc&page=2');
  const second = await api.get(page.body.next_page_url);
  assert.deepEqual(
    second.body.data.map((c: any) => c.email),
    ['cy@example.com'],
  );
  assert.equal(second.body.next_page_url, null);
  assert.equal((await api.get('/v2/contacts?limit=101')).status, 400);
  assert.equal((await api.get('/v2/contacts?limit=0')).status, 400);
});

test('list: match=or joins every key.condition filter (audience_id and custom fields too); search, audience_id and unsubscribed stay ANDed', async () => {
  const { api } = await workspace();
  const club = await audience(api, 'Club');
  // Filters: A = email.ends_with=@one.test, B = custom_fields.plan.exact=gold, C = audience_id.exact=club.
  const people = [
    { email: 'one@one.test', custom_fields: { plan: 'silver' } }, // A
    { email: 'two@two.test', custom_fields: { plan: 'gold' } }, // B
    { email: 'both@one.test', custom_fields: { plan: 'gold' }, audiences: [club] }, // A, B, C
    { email: 'none@two.test', custom_fields: { plan: 'silver' } }, // none
    { email: 'member@two.test', custom_fields: { plan: 'silver' }, audiences: [club], unsubscribed: true }, // C
  ];
  for (const p of people) assert.equal((await api.post('/v2/contacts', p)).status, 201);
  const emails = async (query: string) => {
    const res = await api.get(`/v2/contacts?${query}&sort=email&order=asc`);
    assert.equal(res.status, 200, `${query}: ${res.text}`);
    assert.equal(res.body.total_records, res.body.data.length);
    return res.body.data.map((c: any) => c.email);
  };
  const A = 'email.ends_with=@one.test';
  const B = 'custom_fields.plan.exact=gold';
  const C = `audience_id.exact=${club}`;
  assert.deepEqual(await emails(`${A}&${B}`), ['both@one.test'], 'match=all by default');
  assert.deepEqual(await emails(`${A}&${B}&match=or`), ['both@one.test', 'one@one.test', 'two@two.test']);
  assert.deepEqual(
    await emails(`${A}&${C}&match=or`),
    ['both@one.test', 'member@two.test', 'one@one.test'],
    'audience_id.exact is one of the ORed filters',
  );
  assert.deepEqual(await emails(`${B}&audience_id.not_exact=${club}&match=or`), [
    'both@one.test',
    'none@two.test',
    'one@one.test',
    'two@two.test',
  ]);
  assert.deepEqual(
    await emails(`filter[custom_fields][plan]=gold&${A}&match=or`),
    ['both@one.test', 'one@one.test', 'two@two.test'],
    'the older filter[...] forms are filters too',
  );
  // The dedicated parameters narrow whatever match says.
  assert.deepEqual(await emails(`audience_id=${club}&${A}&${B}&match=or`), ['both@one.test']);
  assert.deepEqual(await emails(`unsubscribed=false&email.ends_with=@two.test&${C}&match=or`), [
    'both@one.test',
    'none@two.test',
    'two@two.test',
  ]);
  assert.deepEqual(await emails(`unsubscribed=true&${A}&${B}&match=or`), []);
  assert.deepEqual(await emails(`search=two&${A}&${B}&match=or`), ['two@two.test']);
  assert.deepEqual(await emails(`q=one&${B}&${C}&match=or`), ['both@one.test']);
  // The export reads the same parameters.
  const exported = await api.get(`/v2/contacts/export?${A}&${B}&match=or`);
  assert.equal(exported.headers.get('x-total-count'), '3');
});

test('two workspaces never see each other: ids, emails, audiences, lists', async () => {
  const one = await workspace();
  const two = await workspace();
  const list = await audience(one.api, 'Private list');
  const contact = (await one.api.post('/v2/contacts', { email: 'shared@example.com', audiences: [list] })).body;
  assert.equal((await two.api.get(`/v2/contacts/${contact.id}`)).status, 404);
  assert.equal((await two.api.get('/v2/contacts/shared%40example.com')).status, 404);
  assert.equal((await two.api.post(`/v2/contacts/${contact.id}`, { first_name: 'x' })).status, 404);
  assert.equal((await two.api.delete(`/v2/contacts/${contact.id}`)).status, 404);
  assert.equal((await two.api.get(`/v2/audiences/${list}`)).status, 404);
  assert.equal((await two.api.get(`/v2/audiences/${list}/subscribers`)).status, 404);
  assert.equal((await two.api.get(`/v2/contacts?audience_id=${list}`)).body.data.length, 0);
  assert.equal((await two.api.get('/v2/contacts')).body.total_records, 0);
  // The same address is a separate contact in the other workspace.
  const theirs = await two.api.post('/v2/contacts', { email: 'shared@example.com', audiences: [list] });
  assert.equal(theirs.status, 201);
  assert.notEqual(theirs.body.id, contact.id);
  assert.deepEqual(theirs.body.audiences, [], 'an audience of another workspace is skipped');
  assert.equal((await one.api.get(`/v2/contacts/${contact.id}`)).body.first_name, null);
});

test('custom field definitions: create, list, get by key, label update, 409, delete keeps values', async () => {
  const { api } = await workspace();
  const created = await api.post('/v2/custom-fields', { key: 'renewal', label: 'Renewal date', type: 'date' });
  assert.equal(created.status, 201);
  assert.match(created.body.id, /^fld_/);
  assert.equal((await api.post('/v2/custom-fields', { key: 'renewal', type: 'text' })).status, 409);
  assert.equal((await api.post('/v2/custom-fields', { key: 'bad key!', type: 'text' })).status, 400);
  assert.equal((await api.post('/v2/custom-fields', { key: 'k', type: 'color' })).status, 400);
  assert.equal((await api.get('/v2/custom-fields/renewal')).body.label, 'Renewal date');
  assert.equal((await api.post('/v2/custom-fields/renewal', { label: 'Renews on' })).body.label, 'Renews on');
  assert.deepEqual(
    (await api.get('/v2/custom-fields')).body.data.map((f: any) => f.key),
    ['renewal'],
  );
  await api.post('/v2/contacts', { email: 'r@example.com', custom_fields: { renewal: '2027-01-01' } });
  assert.equal((await api.delete('/v2/custom-fields/renewal')).status, 200);
  assert.equal((await api.get('/v2/custom-fields/renewal')).status, 404);
  assert.deepEqual((await api.get('/v2/contacts/r%40example.com')).body.custom_fields, { renewal: '2027-01-01' });
  const free = await api.post('/v2/contacts/r%40example.com', { custom_fields: { renewal: 'whenever' } });
  assert.equal(free.status, 200, 'undeclared keys are stored as given');
});
