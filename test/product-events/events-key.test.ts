// Events Only API keys (https://emailit.com/docs/developers/api-keys/#scopes): created,
// listed and regenerated as the other keys are; they send events and nothing else. The walk
// tries every operation of /openapi.json with such a key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ roles: ['api'] });
});
after(() => app?.close());

test('create, list by scope, regenerate: an Events Only key is a key like the others', async () => {
  const created = await app.api.post('/v2/api-keys', { name: 'backend events', scope: 'events' });
  assert.equal(created.status, 201);
  assert.equal(created.body.scope, 'events');
  assert.match(created.body.key, /^secret_[A-Za-z0-9]{32}$/);
  await app.api.post('/v2/api-keys', { name: 'a sender', scope: 'sending' });

  const listed = await app.api.get('/v2/api-keys?scope.exact=events');
  assert.deepEqual(
    listed.body.data.map((k: any) => k.name),
    ['backend events'],
  );
  const byType = await app.api.get('/v2/api-keys?type.exact=api&limit=100');
  assert.ok(
    byType.body.data.some((k: any) => k.scope === 'events'),
    'an Events Only key is an api credential',
  );

  assert.equal((await app.as(created.body.key).post('/v2/events', { type: 'c:signed.up' })).status, 200);
  const regenerated = await app.api.post(`/v2/api-keys/${created.body.id}/regenerate`);
  assert.equal(regenerated.body.scope, 'events');
  assert.equal((await app.as(created.body.key).post('/v2/events', { type: 'c:signed.up' })).status, 401, 'the old secret stops at once');
  const batch = await app.as(regenerated.body.key).post('/v2/events/batch', { events: [{ type: 'c:signed.up' }] });
  assert.equal(batch.status, 200);
});

test('an Events Only key is refused on every other operation of /openapi.json, before anything runs', async () => {
  const key = (await app.api.post('/v2/api-keys', { name: 'walker', scope: 'events' })).body.key;
  const events = app.as(key);
  const document = (await (await fetch(`${app.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
  const allowed = new Set(['POST /v2/events', 'POST /v2/events/batch']);
  const seen = new Set<string>();
  let walked = 0;
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const upper = method.toUpperCase();
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(upper)) continue;
      const name = `${upper} ${path}`;
      if (allowed.has(name)) {
        seen.add(name);
        continue;
      }
      if (!/^\/v[12]\//.test(path)) continue; // dashboard sign-in and the like: no API key there
      if (!operation.responses?.['401']) continue; // public (a form's submission): no key asked
      // An id-shaped value: GET /v2/forms/{id} serves the public with any other (a form's token).
      const url = path.replace(/\{(\w+)\}/g, 'frm_2xGk7Nq1VbD5sR8tLmW3eYhC6aP');
      const response = await events.request(upper, url, operation.requestBody ? {} : undefined);
      walked++;
      assert.equal(response.status, 403, `${name} answered ${response.status} to an Events Only key`);
      assert.equal(response.body.error, 'Forbidden', name);
      assert.match(response.body.message, /does not have the "(full|sending)" permission/, name);
    }
  }
  assert.deepEqual([...seen].sort(), [...allowed].sort(), 'the send routes are in the document');
  assert.ok(walked > 100, `walked ${walked} operations`);
  // The dashboard's own list of keys and the event log stay closed too.
  assert.equal((await events.get('/v2/events')).status, 403);
});
