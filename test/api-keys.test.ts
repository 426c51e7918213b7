import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

test('create returns 201 with the key object and a secret shown once', async () => {
  const res = await app.api.post('/v2/api-keys', { name: 'Production' });
  assert.equal(res.status, 201);
  const key = res.body;
  assert.equal(key.object, 'api_key');
  assert.match(key.id, /^key_[A-Za-z0-9]{27}$/);
  assert.equal(key.name, 'Production');
  assert.equal(key.scope, 'full', 'scope defaults to full');
  assert.equal(key.sending_domain_id, null);
  assert.equal(key.last_used_at, null);
  assert.match(key.created_at, ISO_MICROS);
  assert.equal(key.updated_at, key.created_at);
  assert.match(key.key, /^secret_[A-Za-z0-9]{32}$/);
  assert.deepEqual(Object.keys(key).sort(), [
    'created_at',
    'id',
    'key',
    'last_used_at',
    'name',
    'object',
    'scope',
    'sending_domain_id',
    'updated_at',
  ]);

  const again = await app.api.get(`/v2/api-keys/${key.id}`);
  assert.equal(again.status, 200);
  assert.equal(again.body.key, undefined, 'the secret is never returned again');
  assert.ok(!again.text.includes(key.key));
});

test('the new secret authenticates; a sending key only reaches the send endpoints', async () => {
  const full = (await app.api.post('/v2/api-keys', { name: 'second full' })).body;
  assert.equal((await app.as(full.key).get('/v2/api-keys')).status, 200);

  const sending = await app.api.post('/v2/api-keys', { name: 'sender', scope: 'sending' });
  assert.equal(sending.status, 201);
  assert.equal(sending.body.scope, 'sending');
  const denied = await app.as(sending.body.key).get('/v2/api-keys');
  assert.equal(denied.status, 403);
  assert.deepEqual(denied.body, {
    statusCode: 403,
    error: 'Forbidden',
    message: 'This API key does not have the "full" permission required for this endpoint',
  });
});

test('missing, malformed and unknown credentials get the same 401', async () => {
  const expected = { statusCode: 401, error: 'Unauthorized', message: 'Invalid API key' };
  for (const headers of [
    {} as Record<string, string>,
    { authorization: 'Bearer' },
    { authorization: 'Basic abc' },
    { authorization: 'Bearer secret_unknownunknownunknownunknown12' },
  ]) {
    const res = await app.as(null).get('/v2/api-keys', headers);
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, expected);
  }
});

test('sending_domain_id must be a domain of the workspace (sending keys); ignored for full keys', async () => {
  const res = await app.api.post('/v2/api-keys', {
    name: 'restricted',
    scope: 'sending',
    sending_domain_id: 'dom_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR',
  });
  assert.equal(res.status, 400);
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.match(res.body.error, /dom_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR/);
  assert.equal((await app.api.get('/v2/api-keys/restricted')).status, 404, 'nothing was stored');

  const full = await app.api.post('/v2/api-keys', {
    name: 'full with domain',
    scope: 'full',
    sending_domain_id: 'dom_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR',
  });
  assert.equal(full.status, 201);
  assert.equal(full.body.sending_domain_id, null);
});

test('duplicate names give 409 with the existing key', async () => {
  const first = (await app.api.post('/v2/api-keys', { name: 'dup' })).body;
  const res = await app.api.post('/v2/api-keys', { name: 'dup', scope: 'sending' });
  assert.equal(res.status, 409);
  assert.deepEqual(res.body, {
    error: 'An API key with this name already exists',
    existing: { object: 'api_key', id: first.id, name: 'dup' },
  });
});

test('validation errors use the standard 400 shape, byte for byte', async () => {
  const missing = await app.api.post('/v2/api-keys', {});
  assert.equal(missing.status, 400);
  assert.equal(
    missing.text,
    JSON.stringify({
      statusCode: 400,
      error: 'Bad Request',
      message: "body must have required property 'name'",
      details: [
        {
          instancePath: '',
          schemaPath: '#/required',
          keyword: 'required',
          params: { missingProperty: 'name' },
          message: "must have required property 'name'",
        },
      ],
    }),
  );

  const badScope = await app.api.post('/v2/api-keys', { name: 'x', scope: 'admin' });
  assert.equal(badScope.status, 400);
  assert.equal(badScope.body.error, 'Bad Request');
  assert.ok(badScope.body.details.some((d: { instancePath: string }) => d.instancePath === '/scope'));

  const wrongType = await app.api.post('/v2/api-keys', { name: 42 });
  assert.equal(wrongType.status, 400, 'a number is not silently turned into a name');

  const badJson = await app.api.post('/v2/api-keys', '{"name": ');
  assert.equal(badJson.status, 400);
  assert.equal(badJson.text, JSON.stringify({ statusCode: 400, error: 'Bad Request', message: 'Invalid JSON in request body' }));
});

test('retrieve by id or URL-encoded name; unknown gives 404 {error}', async () => {
  const created = (await app.api.post('/v2/api-keys', { name: 'My Key/ü' })).body;
  const byName = await app.api.get(`/v2/api-keys/${encodeURIComponent('My Key/ü')}`);
  assert.equal(byName.status, 200);
  assert.equal(byName.body.id, created.id);
  const byId = await app.api.get(`/v2/api-keys/${created.id}`);
  assert.equal(byId.body.name, 'My Key/ü');
  const missing = await app.api.get('/v2/api-keys/key_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: 'API key not found' });
});

test('keys of another workspace are invisible', async () => {
  const other = await app.newWorkspace();
  const mine = (await app.api.post('/v2/api-keys', { name: 'private' })).body;
  assert.equal((await other.api.get(`/v2/api-keys/${mine.id}`)).status, 404);
  const list = (await other.api.get('/v2/api-keys?limit=100')).body;
  assert.ok(list.data.every((k: { id: string }) => k.id !== mine.id));
  // Names are unique per workspace, not globally.
  assert.equal((await other.api.post('/v2/api-keys', { name: 'private' })).status, 201);
});

test('rename changes the name and updated_at only; 409 on a taken name; 404 unknown', async () => {
  const key = (await app.api.post('/v2/api-keys', { name: 'old name' })).body;
  await new Promise((r) => setTimeout(r, 5));
  const res = await app.api.post(`/v2/api-keys/${key.id}`, { name: 'new name' });
  assert.equal(res.status, 200);
  assert.equal(res.body.name, 'new name');
  assert.equal(res.body.scope, key.scope);
  assert.equal(res.body.created_at, key.created_at);
  assert.ok(res.body.updated_at > key.updated_at);
  assert.equal(res.body.key, undefined);
  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 200, 'the secret still works');

  await app.api.post('/v2/api-keys', { name: 'taken' });
  const clash = await app.api.post(`/v2/api-keys/${key.id}`, { name: 'taken' });
  assert.equal(clash.status, 409);
  assert.deepEqual(Object.keys(clash.body), ['error']);
  assert.equal((await app.api.post('/v2/api-keys/key_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR', { name: 'x' })).status, 404);
  assert.equal((await app.api.post(`/v2/api-keys/${key.id}`, {})).status, 400);
});

test('regenerate issues a new secret, kills the old one at once, and clears last_used_at', async () => {
  const key = (await app.api.post('/v2/api-keys', { name: 'rotating', scope: 'full' })).body;
  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 200);
  const used = (await app.api.get(`/v2/api-keys/${key.id}`)).body;
  assert.match(used.last_used_at, ISO_MICROS, 'last_used_at records the first use');

  const res = await app.api.post(`/v2/api-keys/${key.id}/regenerate`);
  assert.equal(res.status, 200);
  assert.match(res.body.key, /^secret_[A-Za-z0-9]{32}$/);
  assert.notEqual(res.body.key, key.key);
  assert.equal(res.body.id, key.id);
  assert.equal(res.body.name, key.name);
  assert.equal(res.body.scope, key.scope);
  assert.equal(res.body.last_used_at, null);

  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 401, 'old secret dies at once');
  assert.equal((await app.as(res.body.key).get('/v2/api-keys?limit=1')).status, 200);
  assert.equal((await app.api.post('/v2/api-keys/no-such-key/regenerate')).status, 404);
});

test('a key may regenerate itself; later requests use the new secret', async () => {
  const key = (await app.api.post('/v2/api-keys', { name: 'self-rotating' })).body;
  const res = await app.as(key.key).post(`/v2/api-keys/${key.id}/regenerate`, '', { 'content-type': 'application/json' });
  assert.equal(res.status, 200);
  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 401);
  assert.equal((await app.as(res.body.key).get('/v2/api-keys?limit=1')).status, 200);
});

test('delete revokes at once, frees the name and hides the key from lists', async () => {
  const key = (await app.api.post('/v2/api-keys', { name: 'doomed' })).body;
  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 200);
  const res = await app.api.delete(`/v2/api-keys/${encodeURIComponent('doomed')}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.object, 'api_key');
  assert.equal(res.body.id, key.id);
  assert.equal(res.body.name, 'doomed');

  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 401);
  assert.equal((await app.api.get(`/v2/api-keys/${key.id}`)).status, 404);
  assert.equal((await app.api.delete(`/v2/api-keys/${key.id}`)).status, 404);
  const all = (await app.api.get('/v2/api-keys?limit=100')).body.data;
  assert.ok(all.every((k: { id: string }) => k.id !== key.id));
  const reused = await app.api.post('/v2/api-keys', { name: 'doomed' });
  assert.equal(reused.status, 201, 'the name is free again');
});

test('a key may delete itself', async () => {
  const key = (await app.api.post('/v2/api-keys', { name: 'suicidal' })).body;
  assert.equal((await app.as(key.key).delete(`/v2/api-keys/${key.id}`)).status, 200);
  assert.equal((await app.as(key.key).get('/v2/api-keys?limit=1')).status, 401);
});

test('list: newest first, search, filters, sorting, paging with URLs that keep the query', async () => {
  const { api } = await app.newWorkspace();
  // The workspace starts with its "Default key".
  for (const [name, scope] of [
    ['alpha', 'full'],
    ['beta', 'sending'],
    ['Gamma', 'sending'],
    ['delta', 'full'],
  ] as const) {
    assert.equal((await api.post('/v2/api-keys', { name, scope })).status, 201);
  }
  const all = (await api.get('/v2/api-keys')).body;
  assert.deepEqual(
    all.data.map((k: { name: string }) => k.name),
    ['delta', 'Gamma', 'beta', 'alpha', 'Default key'],
  );
  assert.equal(all.next_page_url, null);
  assert.equal(all.previous_page_url, null);
  assert.ok(
    all.data.every((k: Record<string, unknown>) => !('key' in k)),
    'no secrets in lists',
  );

  const names = async (query: string) => (await api.get(`/v2/api-keys?${query}`)).body.data.map((k: { name: string }) => k.name);
  assert.deepEqual(await names('search=GAM'), ['Gamma']);
  assert.deepEqual(await names('scope.exact=sending'), ['Gamma', 'beta']);
  assert.deepEqual(await names('scope.exact=sending&name.starts_with=g'), ['Gamma']);
  assert.deepEqual(await names('scope.exact=sending&name.exact=alpha&match=or'), ['Gamma', 'beta', 'alpha']);
  assert.deepEqual(await names('type.exact=api&scope.in=full'), ['delta', 'alpha', 'Default key']);
  assert.deepEqual(await names('order=name&direction=asc'), ['alpha', 'beta', 'Default key', 'delta', 'Gamma']);
  assert.deepEqual(
    await names('order=name'),
    ['alpha', 'beta', 'Default key', 'delta', 'Gamma'],
    'order without direction sorts ascending',
  );
  assert.deepEqual(await names('order=name&direction=desc&scope.exact=full'), ['delta', 'Default key', 'alpha']);
  assert.deepEqual(await names('created_at.after=2000-01-01&created_at.before=2999-01-01&limit=2'), ['delta', 'Gamma']);
  assert.deepEqual(await names('created_at.before=2000-01-01'), []);
  // Unknown keys, conditions that do not fit, and bad values are ignored, not rejected.
  assert.deepEqual(await names('nope.exact=1&scope.contains=x&created_at.after=yesterday-ish&scope.exact=owner'), [
    'delta',
    'Gamma',
    'beta',
    'alpha',
    'Default key',
  ]);

  const page1 = (await api.get('/v2/api-keys?limit=2&scope.exact=sending&search=a&order=name&direction=desc')).body;
  assert.deepEqual(
    page1.data.map((k: { name: string }) => k.name),
    ['Gamma', 'beta'],
  );
  assert.equal(page1.previous_page_url, null);
  assert.equal(page1.next_page_url, null);
  const p1 = (await api.get('/v2/api-keys?limit=2&search=a&direction=asc&order=name')).body;
  assert.equal(p1.next_page_url, '/v2/api-keys?limit=2&search=a&direction=asc&order=name&page=2');
  const p2 = (await api.get(p1.next_page_url)).body;
  assert.equal(p2.previous_page_url, '/v2/api-keys?limit=2&search=a&direction=asc&order=name&page=1');
  assert.deepEqual(
    p2.data.map((k: { name: string }) => k.name),
    ['Default key', 'delta'],
  );
  const p3 = (await api.get(p2.next_page_url)).body;
  assert.deepEqual(
    p3.data.map((k: { name: string }) => k.name),
    ['Gamma'],
  );
  assert.equal(p3.next_page_url, null);
});

test('limit and page out of range give the standard 400', async () => {
  for (const query of ['limit=0', 'limit=101', 'limit=abc', 'page=0']) {
    const res = await app.api.get(`/v2/api-keys?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.statusCode, 400);
    assert.equal(res.body.error, 'Bad Request');
    assert.ok(Array.isArray(res.body.details) && res.body.details.length > 0);
  }
  assert.equal((await app.api.get('/v2/api-keys?limit=100')).status, 200);
});

test('an internal failure answers 500 without leaking internals', async () => {
  const broken = await startTestApp();
  try {
    // Make the key lookup itself fail after start: the table disappears.
    await broken.running.ctx.db.schema.alterTable('api_keys').renameTo('api_keys_gone').execute();
    const res = await broken.api.get('/v2/api-keys');
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' });
    await broken.running.ctx.db.schema.alterTable('api_keys_gone').renameTo('api_keys').execute();
  } finally {
    await broken.close();
  }
});

test('every route checks its key, HEAD routes too: none gets 401, a sending key on a full route 403', async () => {
  const created = await app.api.post('/v2/api-keys', { name: 'head check sender', scope: 'sending' });
  assert.equal(created.status, 201, created.text);
  const head = (key?: string) =>
    fetch(`${app.url}/v2/api-keys`, { method: 'HEAD', headers: key ? { authorization: `Bearer ${key}` } : {} });
  assert.equal((await head()).status, 401);
  assert.equal((await head(app.key)).status, 200);
  assert.equal((await head(created.body.key)).status, 403);
  assert.equal((await app.as(created.body.key).get('/v2/api-keys')).status, 403);
  assert.equal((await app.as(null).get(`/v2/api-keys/${created.body.id}`)).status, 401);
});
