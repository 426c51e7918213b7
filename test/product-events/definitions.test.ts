// Workspace event definitions (https://emailit.com/docs/api-reference/workspace-events/):
// create, list, get, update, delete, with typed properties.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ roles: ['api'] });
});
after(() => app?.close());

test('define, read, change and delete a workspace event', async () => {
  const created = await app.api.post('/v2/workspace/events', {
    name: 'customer.type',
    title: 'Customer type',
    description: 'Set when a customer changes plan',
    properties: [
      { name: 'plan', type: 'string', required: true, title: 'Plan' },
      { name: 'seats', type: 'number' },
    ],
  });
  assert.equal(created.status, 201, created.text);
  assert.match(created.body.id, /^wev_[A-Za-z0-9]{27}$/);
  assert.equal(created.body.object, 'workspace_event');
  assert.equal(created.body.type, 'w:customer.type');
  assert.deepEqual(created.body.properties, [
    { name: 'plan', type: 'string', required: true, title: 'Plan', description: null },
    { name: 'seats', type: 'number', required: false, title: null, description: null },
  ]);

  const duplicate = await app.api.post('/v2/workspace/events', { name: 'w:customer.type' });
  assert.equal(duplicate.status, 409);
  assert.equal(duplicate.body.existing.id, created.body.id);

  for (const ref of [created.body.id, 'customer.type', 'w:customer.type']) {
    const got = await app.api.get(`/v2/workspace/events/${encodeURIComponent(ref)}`);
    assert.deepEqual(got.body, created.body, ref);
  }
  assert.equal((await app.api.get('/v2/workspace/events/nothing.here')).status, 404);
  const list = await app.api.get('/v2/workspace/events');
  assert.deepEqual(
    list.body.data.map((d: any) => d.id),
    [created.body.id],
  );

  const updated = await app.api.post(`/v2/workspace/events/${created.body.id}`, {
    properties: [
      { name: 'plan', type: 'string', required: true },
      { name: 'trial', type: 'boolean' },
    ],
  });
  assert.equal(updated.status, 200);
  assert.deepEqual(
    updated.body.properties.map((p: any) => p.name),
    ['plan', 'trial'],
  );
  assert.equal(updated.body.title, 'Customer type', 'untouched fields stay');
  // Events are checked against the definition as it is now.
  assert.equal((await app.api.post('/v2/events', { type: 'w:customer.type', properties: { plan: 'pro', trial: true } })).status, 200);
  assert.equal((await app.api.post('/v2/events', { type: 'w:customer.type', properties: { plan: 'pro', seats: 3 } })).status, 400);

  const deleted = await app.api.delete(`/v2/workspace/events/${created.body.id}`);
  assert.deepEqual(deleted.body, { object: 'workspace_event', id: created.body.id, name: 'customer.type', deleted: true });
  assert.equal((await app.api.post('/v2/events', { type: 'w:customer.type', properties: { plan: 'pro' } })).status, 400, 'undefined again');
  assert.equal((await app.api.get('/v2/events?scope=workspace')).body.data.length, 1, 'recorded events stay');
});

test('refused definitions name each problem', async () => {
  const bad = await app.api.post('/v2/workspace/events', {
    name: '.starts.with.dot',
    properties: [
      { name: 'a.b', type: 'string' },
      { name: 'x', type: 'money' },
      { name: 'x', type: 'string' },
    ],
  });
  assert.equal(bad.status, 400);
  assert.deepEqual(Object.keys(bad.body.errors).sort(), ['name', 'properties.0.name', 'properties.1.type', 'properties.2.name']);
  assert.equal((await app.api.get('/v2/workspace/events')).body.data.length, 0, 'nothing stored');
  const events = (await app.api.post('/v2/api-keys', { name: 'events only', scope: 'events' })).body.key;
  assert.equal(
    (await app.as(events).post('/v2/workspace/events', { name: 'nope' })).status,
    403,
    'an Events Only key manages no definitions',
  );
});
