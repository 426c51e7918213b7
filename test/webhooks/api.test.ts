// The webhooks resource over HTTP: create, retrieve (id or name, with the secret), update,
// list with usage, delete, reset-secret; URL checks through the test DNS server with
// ALLOW_PRIVATE_URLS off; plan gates and limits.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, eventually, type TestApp } from '../helpers/app.ts';
import { emitEvent } from '../../src/platform/events.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';

let app: TestApp;
let dns: TestDnsServer;
// Public documentation-free addresses; nothing is ever delivered in this file (no events).
const PUBLIC_IP = '93.184.216.34';

before(async () => {
  dns = await startDnsServer();
  for (const name of ['hooks.example.com', 'other.example.com', 'new.example.com']) dns.set(name, 'A', [PUBLIC_IP]);
  dns.set('internal.example.com', 'A', ['10.0.0.5']);
  dns.set('mixed.example.com', 'A', [PUBLIC_IP, '127.0.0.1']);
  dns.set('ula.example.com', 'AAAA', ['fd00::7']);
  dns.set('rebind.example.com', 'A', [PUBLIC_IP]);
  app = await startTestApp({ env: { DNS_SERVERS: dns.address, WEBHOOK_POLL_MS: '50' } });
});
after(async () => {
  await app?.close();
  await dns?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

test('create returns 201 with every field and the secret; retrieve by id or name returns the secret', async () => {
  const created = await app.api.post('/v2/webhooks', {
    name: 'Orders',
    url: 'https://hooks.example.com/emailit',
    events: ['email.delivered', 'email.bounced'],
  });
  assert.equal(created.status, 201);
  const { id, secret, created_at, updated_at, ...rest } = created.body;
  assert.match(id, /^wh_[A-Za-z0-9]{27}$/);
  assert.match(secret, /^whsec_[0-9a-f]{64}$/);
  assert.match(created_at, ISO);
  assert.equal(updated_at, created_at);
  assert.deepEqual(rest, {
    object: 'webhook',
    name: 'Orders',
    url: 'https://hooks.example.com/emailit',
    all_events: false,
    enabled: true,
    events: ['email.delivered', 'email.bounced'],
    filter: null,
    filters_allowed: true,
    last_used_at: null,
  });

  const byId = await app.api.get(`/v2/webhooks/${id}`);
  assert.equal(byId.status, 200);
  assert.deepEqual(byId.body, created.body);
  const byName = await app.api.get('/v2/webhooks/Orders');
  assert.deepEqual(byName.body, created.body);

  // Sealed at rest: the stored value is not the secret.
  const stored = await app.running.ctx.db.selectFrom('webhooks').select('secret').where('id', '=', id).executeTakeFirstOrThrow();
  assert.ok(!stored.secret.includes(secret.slice(6)));
  assert.equal(app.running.ctx.secrets.open(stored.secret), secret);
});

test('names are unique in the workspace: 409 with existing; names with spaces work URL-encoded', async () => {
  const first = await app.api.post('/v2/webhooks', { name: 'Billing hooks', url: 'https://other.example.com/x', all_events: true });
  assert.equal(first.status, 201);
  const again = await app.api.post('/v2/webhooks', { name: 'Billing hooks', url: 'https://other.example.com/y' });
  assert.equal(again.status, 409);
  assert.deepEqual(again.body, {
    error: 'A webhook with this name already exists',
    existing: { object: 'webhook', id: first.body.id, name: 'Billing hooks' },
  });
  const byName = await app.api.get(`/v2/webhooks/${encodeURIComponent('Billing hooks')}`);
  assert.equal(byName.body.id, first.body.id);
  assert.equal(byName.body.all_events, true);
});

test('the URL is checked on save: scheme, resolution through DNS_SERVERS, non-public addresses', async () => {
  const cases: Array<[string, string]> = [
    ['ftp://hooks.example.com/x', 'Invalid url: The URL must use http or https'],
    ['not a url', 'Invalid url: The URL is not a valid URL'],
    [
      'https://internal.example.com/hook',
      'Invalid url: The hostname internal.example.com resolves to 10.0.0.5, which is not a public address',
    ],
    ['https://mixed.example.com/hook', 'Invalid url: The hostname mixed.example.com resolves to 127.0.0.1, which is not a public address'],
    ['https://ula.example.com/hook', 'Invalid url: The hostname ula.example.com resolves to fd00::7, which is not a public address'],
    ['http://localhost:8080/hook', 'Invalid url: The hostname localhost is not a public host'],
    ['http://127.0.0.1/hook', 'Invalid url: The address 127.0.0.1 is not a public address'],
    ['http://169.254.169.254/latest/meta-data', 'Invalid url: The address 169.254.169.254 is not a public address'],
    ['http://[::1]:3000/', 'Invalid url: The address ::1 is not a public address'],
    ['https://nowhere.example.com/hook', 'Invalid url: The hostname nowhere.example.com does not resolve to any address'],
  ];
  for (const [url, error] of cases) {
    const response = await app.api.post('/v2/webhooks', { name: `bad ${url}`, url });
    assert.equal(response.status, 400, url);
    assert.deepEqual(response.body, { error }, url);
  }
  assert.ok(
    dns.queries.some((q) => q.name === 'internal.example.com'),
    'resolved through the test DNS server',
  );
});

test('missing name or url and malformed fields give the standard validation error', async () => {
  for (const body of [
    { url: 'https://hooks.example.com/' },
    { name: 'x' },
    { name: 'x', url: 'https://hooks.example.com/', enabled: 'yes' },
  ]) {
    const response = await app.api.post('/v2/webhooks', body);
    assert.equal(response.status, 400);
    assert.equal(response.body.statusCode, 400);
    assert.equal(response.body.error, 'Bad Request');
    assert.ok(Array.isArray(response.body.details) && response.body.details.length > 0);
  }
  const blank = await app.api.post('/v2/webhooks', { name: '   ', url: 'https://hooks.example.com/' });
  assert.deepEqual([blank.status, blank.body], [400, { error: 'name must not be empty' }]);
});

test('filters: validated with their typing, at most 25 rules', async () => {
  const rules = [
    { field: 'payload.meta.plan', operator: 'equals', value: 'pro' },
    { field: 'to', operator: 'ends_with', value: '@example.com' },
    { field: 'meta.tier', operator: 'greater_than', value: 2 },
    { field: 'status', operator: 'in', value: ['delivered', 'bounced'] },
    { field: 'meta', operator: 'is_set' },
  ];
  const ok = await app.api.post('/v2/webhooks', {
    name: 'Filtered',
    url: 'https://hooks.example.com/f',
    all_events: true,
    filter: { rules },
  });
  assert.equal(ok.status, 201);
  assert.deepEqual(ok.body.filter, { match: 'all', rules }, 'the rules come back as given, with the default match');
  const bad: Array<[unknown, string]> = [
    [{ rules: [{ field: 'to', operator: 'contains', value: 5 }] }, 'Invalid filter: filter.rules[0].value must be a string for contains'],
    [
      { rules: [{ field: 'x', operator: 'greater_than', value: '5' }] },
      'Invalid filter: filter.rules[0].value must be a number for greater_than',
    ],
    [
      { rules: [{ field: 'x', operator: 'in', value: 'a' }] },
      'Invalid filter: filter.rules[0].value must be an array of strings, numbers or booleans for in',
    ],
    [{ rules: [{ field: 'x', operator: 'equals' }] }, 'Invalid filter: filter.rules[0].value is required for equals'],
    [
      { match: 'all', rules: [{ field: 'a..b', operator: 'is_set' }] },
      'Invalid filter: filter.rules[0].field "a..b" is not a valid dotted path',
    ],
  ];
  for (const [filter, error] of bad) {
    const response = await app.api.post('/v2/webhooks', { name: 'Bad filter', url: 'https://hooks.example.com/f', filter });
    assert.deepEqual([response.status, response.body], [400, { error }]);
  }
  const tooMany = await app.api.post('/v2/webhooks', {
    name: 'Too many',
    url: 'https://hooks.example.com/f',
    filter: { rules: Array.from({ length: 26 }, () => ({ field: 'to', operator: 'is_set' })) },
  });
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.body.details[0].keyword, 'maxItems');
  const badOperator = await app.api.post('/v2/webhooks', {
    name: 'Bad op',
    url: 'https://hooks.example.com/f',
    filter: { rules: [{ field: 'to', operator: 'like', value: 'x' }] },
  });
  assert.equal(badOperator.status, 400);
  assert.equal(badOperator.body.error, 'Bad Request');
});

test('update: rules of the spec; secret never changes and is not returned', async () => {
  const created = await app.api.post('/v2/webhooks', {
    name: 'Updatable',
    url: 'https://hooks.example.com/u',
    events: ['email.delivered'],
  });
  const id = created.body.id;

  const empty = await app.api.post(`/v2/webhooks/${id}`, {});
  assert.deepEqual(
    [empty.status, empty.body],
    [400, { error: 'At least one of name, url, all_events, enabled, events or filter is required' }],
  );

  const all = await app.api.post(`/v2/webhooks/${id}`, { all_events: true, events: ['email.bounced'] });
  assert.equal(all.status, 200);
  assert.equal(all.body.secret, undefined);
  assert.deepEqual([all.body.all_events, all.body.events], [true, []]);

  const ignored = await app.api.post(`/v2/webhooks/${id}`, { events: ['email.failed'] });
  assert.deepEqual([ignored.body.all_events, ignored.body.events], [true, []], 'events are ignored while all_events is true');

  const back = await app.api.post(`/v2/webhooks/${id}`, {
    all_events: false,
    events: ['email.failed', 'email.failed', 'c:order.completed'],
  });
  assert.deepEqual([back.body.all_events, back.body.events], [false, ['email.failed', 'c:order.completed']]);

  const filtered = await app.api.post(`/v2/webhooks/${id}`, {
    filter: { match: 'any', rules: [{ field: 'to', operator: 'contains', value: 'x' }] },
  });
  assert.deepEqual(filtered.body.filter, { match: 'any', rules: [{ field: 'to', operator: 'contains', value: 'x' }] });
  const unfiltered = await app.api.post(`/v2/webhooks/${id}`, { filter: null });
  assert.equal(unfiltered.body.filter, null);

  const renamed = await app.api.post(`/v2/webhooks/${id}`, { name: 'Renamed', url: 'https://new.example.com/hook', enabled: false });
  assert.deepEqual([renamed.body.name, renamed.body.url, renamed.body.enabled], ['Renamed', 'https://new.example.com/hook', false]);
  assert.ok(renamed.body.updated_at > created.body.updated_at);

  const clash = await app.api.post(`/v2/webhooks/${id}`, { name: 'Orders' });
  assert.equal(clash.status, 409);
  assert.equal(clash.body.existing.name, 'Orders');

  const privateUrl = await app.api.post(`/v2/webhooks/${id}`, { url: 'https://internal.example.com/' });
  assert.deepEqual(
    [privateUrl.status, privateUrl.body],
    [400, { error: 'Invalid url: The hostname internal.example.com resolves to 10.0.0.5, which is not a public address' }],
  );

  const fetched = await app.api.get(`/v2/webhooks/${id}`);
  assert.equal(fetched.body.secret, created.body.secret);

  const missing = await app.api.post('/v2/webhooks/wh_000000000000000000000000000', { enabled: true });
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Webhook not found' }]);
});

test('list: newest first, search by name or URL, usage, no secrets', async () => {
  const list = await app.api.get('/v2/webhooks?limit=100');
  assert.equal(list.status, 200);
  const count = list.body.data.length;
  assert.ok(count >= 4);
  assert.deepEqual(list.body.usage, { used: count, limit: 10, filters_allowed: true });
  assert.ok(list.body.data.every((w: any) => w.secret === undefined && w.object === 'webhook'));
  const created = list.body.data.map((w: any) => w.created_at);
  assert.deepEqual(created, [...created].sort().reverse());
  assert.equal(list.body.next_page_url, null);

  const search = await app.api.get('/v2/webhooks?search=ORDERS');
  assert.deepEqual(
    search.body.data.map((w: any) => w.name),
    ['Orders'],
  );
  const byUrl = await app.api.get('/v2/webhooks?search=new.example');
  assert.deepEqual(
    byUrl.body.data.map((w: any) => w.name),
    ['Renamed'],
  );

  const paged = await app.api.get('/v2/webhooks?limit=2');
  assert.equal(paged.body.data.length, 2);
  assert.equal(paged.body.next_page_url, '/v2/webhooks?limit=2&page=2');
  const disabled = await app.api.get('/v2/webhooks?enabled.exact=false');
  assert.deepEqual(
    disabled.body.data.map((w: any) => w.name),
    ['Renamed'],
  );
  const badLimit = await app.api.get('/v2/webhooks?limit=101');
  assert.equal(badLimit.status, 400);
});

test('reset-secret: a new secret at once, returned; retrieve shows the new one', async () => {
  const created = await app.api.post('/v2/webhooks', { name: 'Rotating', url: 'https://hooks.example.com/r' });
  const reset = await app.api.post(`/v2/webhooks/${created.body.id}/reset-secret`);
  assert.equal(reset.status, 200);
  assert.match(reset.body.secret, /^whsec_[0-9a-f]{64}$/);
  assert.notEqual(reset.body.secret, created.body.secret);
  assert.equal(reset.body.id, created.body.id);
  assert.equal((await app.api.get(`/v2/webhooks/${created.body.id}`)).body.secret, reset.body.secret);
  const missing = await app.api.post('/v2/webhooks/nope/reset-secret');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Webhook not found' }]);
});

test('delete by id or name; afterwards 404', async () => {
  const created = await app.api.post('/v2/webhooks', { name: 'Short lived', url: 'https://hooks.example.com/d' });
  const deleted = await app.api.delete(`/v2/webhooks/${encodeURIComponent('Short lived')}`);
  assert.deepEqual([deleted.status, deleted.body], [200, { object: 'webhook', id: created.body.id, name: 'Short lived', deleted: true }]);
  const gone = await app.api.get(`/v2/webhooks/${created.body.id}`);
  assert.deepEqual([gone.status, gone.body], [404, { error: 'Webhook not found' }]);
  assert.equal((await app.api.delete(`/v2/webhooks/${created.body.id}`)).status, 404);
});

test('plan limits: 10 on Pro; 422 with usage above it', async () => {
  const list = await app.api.get('/v2/webhooks?limit=100');
  for (let i = list.body.usage.used; i < 10; i++) {
    assert.equal((await app.api.post('/v2/webhooks', { name: `fill ${i}`, url: 'https://hooks.example.com/fill' })).status, 201);
  }
  const over = await app.api.post('/v2/webhooks', { name: 'one too many', url: 'https://hooks.example.com/x' });
  assert.deepEqual(
    [over.status, over.body],
    [422, { error: 'Webhook limit reached: the Pro plan allows 10 webhooks', usage: { used: 10, limit: 10 } }],
  );
});

test('Pay as you go: 3 webhooks, filters refused with plan_required, usage says so', async () => {
  const payg = await app.newWorkspace({ plan: 'payg' });
  const filtered = await payg.api.post('/v2/webhooks', {
    name: 'f',
    url: 'https://hooks.example.com/',
    filter: { rules: [{ field: 'to', operator: 'is_set' }] },
  });
  assert.deepEqual(
    [filtered.status, filtered.body],
    [
      403,
      {
        error: 'plan_required',
        required_plan: 'pro',
        message: 'Webhook payload filters are available on the Pro, Business and Custom plans',
      },
    ],
  );
  for (let i = 0; i < 3; i++) {
    const created = await payg.api.post('/v2/webhooks', {
      name: `w${i}`,
      url: 'https://hooks.example.com/',
      filter: i === 0 ? null : undefined,
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.filters_allowed, false);
  }
  const fourth = await payg.api.post('/v2/webhooks', { name: 'w3', url: 'https://hooks.example.com/' });
  assert.deepEqual(
    [fourth.status, fourth.body],
    [422, { error: 'Webhook limit reached: the Pay as you go plan allows 3 webhooks', usage: { used: 3, limit: 3 } }],
  );
  const list = await payg.api.get('/v2/webhooks');
  assert.deepEqual(list.body.usage, { used: 3, limit: 3, filters_allowed: false });
  const update = await payg.api.post('/v2/webhooks/w0', { filter: { rules: [{ field: 'to', operator: 'is_set' }] } });
  assert.equal(update.status, 403);
  assert.equal((await payg.api.post('/v2/webhooks/w0', { filter: null })).status, 200);
});

test('workspaces are isolated and sending keys are refused', async () => {
  const other = await app.newWorkspace({ plan: 'business' });
  assert.equal((await other.api.get('/v2/webhooks/Orders')).status, 404);
  const list = await other.api.get('/v2/webhooks');
  assert.deepEqual(list.body.data, []);
  assert.deepEqual(list.body.usage, { used: 0, limit: 100, filters_allowed: true });

  const key = await app.api.post('/v2/api-keys', { name: 'sender', scope: 'sending' });
  const sending = app.as(key.body.key);
  const refused = await sending.get('/v2/webhooks');
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'Forbidden');
  assert.equal((await app.as(null).get('/v2/webhooks')).status, 401);
});

test('the routes are in the OpenAPI document', async () => {
  const doc = (await app.api.get('/openapi.json')).body;
  for (const path of [
    '/v2/webhooks',
    '/v2/webhooks/{id}',
    '/v2/webhooks/{id}/reset-secret',
    '/v2/webhooks/{id}/test',
    '/v2/webhooks/{id}/requests',
    '/v2/webhooks/{id}/requests/{request_id}',
    '/v2/webhooks/{id}/requests/{request_id}/resend',
  ]) {
    assert.ok(doc.paths[path], path);
  }
});

test('at delivery the name is resolved and checked again: a name now pointing inside is not contacted', async () => {
  // Its own workspace, so that no other webhook of this file receives the event.
  const owner = await app.newWorkspace({ plan: 'pro' });
  const created = await owner.api.post('/v2/webhooks', { name: 'rebinding', url: 'https://rebind.example.com/hook', all_events: true });
  assert.equal(created.status, 201);
  dns.set('rebind.example.com', 'A', ['10.0.0.9']);
  await app.running.ctx.db
    .transaction()
    .execute((tx) => emitEvent(tx, owner.workspace.id, 'email.delivered', { id: 'em_1', object: 'email' }));
  const [request] = await eventually(async () => {
    const list = (await owner.api.get(`/v2/webhooks/${created.body.id}/requests`)).body.data;
    return list[0]?.status === 'retrying' ? list : null;
  });
  assert.deepEqual(
    [request.response_status, request.error],
    [null, 'The hostname rebind.example.com resolves to 10.0.0.9, which is not a public address'],
  );
});
