// Warm-up over the API is the workspace's own (docs/api.md "Delivery warm-up"): a workspace
// starts, sees and stops warm-ups of its verified sending domains only; another workspace's
// domain is a 404, a source address (shared by every workspace of the MTA) a 403 — those are
// the operator's, through `postlane delivery warmup`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import type { ApiClient } from '../helpers/app.ts';
import { startWarmup, warmupStates } from '../../src/resources/warmup/service.ts';

let app: DeliveryApp;
let other: { api: ApiClient };

before(async () => {
  app = await startDeliveryApp();
  other = await app.newWorkspace();
  await app.verifiedDomain('beta.test', other.api);
  // Added, never verified: no proof the workspace controls it.
  const pending = await app.api.post('/v2/domains', { name: 'pending.test' });
  assert.equal(pending.status, 201, pending.text);
});
after(() => app.close());

const subjects = async (api: ApiClient) => {
  const res = await api.get('/v2/delivery/warmup');
  assert.equal(res.status, 200, res.text);
  return res.body.data.map((w: { subject: string }) => w.subject);
};

test("a workspace acts on its own domains' warm-ups only; addresses are the operator's", async () => {
  const mine = await app.api.post('/v2/delivery/warmup', { domain: 'acme.test' });
  assert.equal(mine.status, 201, mine.text);
  const theirs = await other.api.post('/v2/delivery/warmup', { domain: 'beta.test' });
  assert.equal(theirs.status, 201, theirs.text);
  // The operator warms up an address with the CLI (the same service).
  await startWarmup(app.running.ctx.db, { address: '192.0.2.7' });

  // Each lists its own domain; the address only the operator sees.
  assert.deepEqual(await subjects(app.api), ['acme.test']);
  assert.deepEqual(await subjects(other.api), ['beta.test']);
  assert.deepEqual(
    (await warmupStates(app.running.ctx.db)).map((w) => w.subject),
    ['acme.test', 'beta.test', '192.0.2.7'],
  );

  // Another workspace's domain: not found, by name or by id; nothing changes.
  const start = await app.api.post('/v2/delivery/warmup', { domain: 'beta.test' });
  assert.equal(start.status, 404, start.text);
  assert.match(start.body.message, /beta\.test is not a verified domain of this workspace/);
  assert.equal((await app.api.delete('/v2/delivery/warmup/beta.test')).status, 404);
  const byId = await app.api.delete(`/v2/delivery/warmup/${theirs.body.id}`);
  assert.equal(byId.status, 404, byId.text);
  assert.equal(byId.body.error, 'Warm-up not found');
  // Its own domain, not verified yet: not found either.
  assert.equal((await app.api.post('/v2/delivery/warmup', { domain: 'pending.test' })).status, 404);

  // Addresses: refused through the API, whoever asks.
  const address = await app.api.post('/v2/delivery/warmup', { address: '192.0.2.8' });
  assert.equal(address.status, 403, address.text);
  assert.match(address.body.message, /postlane delivery warmup/);
  assert.equal((await app.api.delete('/v2/delivery/warmup/192.0.2.7')).status, 404);

  assert.deepEqual(
    (await warmupStates(app.running.ctx.db)).map((w) => w.subject),
    ['acme.test', 'beta.test', '192.0.2.7'],
    'nothing changed',
  );
  const stopped = await other.api.delete(`/v2/delivery/warmup/${theirs.body.id}`);
  assert.equal(stopped.status, 200, stopped.text);
  assert.deepEqual(await subjects(other.api), []);
  assert.deepEqual(await subjects(app.api), ['acme.test']);
});
