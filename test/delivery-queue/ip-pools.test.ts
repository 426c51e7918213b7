// IP pools (docs/delivery.md, "IP pools"): each workspace's mail leaves from its pool's source
// address with that address's EHLO name, as the receiving SMTP server sees it; traffic shaping
// keeps a state per source address and destination. Loopback: Linux routes all of 127.0.0.0/8
// to lo, so connections bound to 127.0.0.2 and 127.0.0.3 reach the sink on 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { eventually, type ApiClient } from '../helpers/app.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

const POOLS = {
  alpha: { default: true, addresses: [{ address: '127.0.0.2', helo: 'alpha.mta.test' }] },
  beta: { addresses: [{ address: '127.0.0.3', helo: 'beta.mta.test' }] },
};

let app: DeliveryApp;
let other: { workspace: { id: string }; api: ApiClient };
before(async () => {
  app = await startDeliveryApp({ env: { DELIVERY_IP_POOLS: JSON.stringify(POOLS) } });
  other = await app.newWorkspace();
  await app.verifiedDomain('beta.test', other.api);
  await updateWorkspace(app.running.ctx.db, other.workspace.id, { sendRate: 1000 });
});
after(async () => {
  await app.close();
});

async function deliver(api: ApiClient, from: string, to: string) {
  const res = await api.post('/v2/emails', { from, to, subject: 'Hi', text: 'Hi' });
  assert.equal(res.status, 200, res.text);
  await app.waitForStatus(res.body.id, 'delivered');
  const message = app.sink.messages.find((m) => m.rcptTo.includes(to));
  assert.ok(message, `the sink got the message to ${to}`);
  // The email's delivery attempt names the source address it left from.
  const email = await api.get(`/v2/emails/${res.body.id}`);
  assert.equal(email.status, 200, email.text);
  assert.deepEqual(
    email.body.attempts.map((a: { outcome: string; source_address: string | null }) => [a.outcome, a.source_address]),
    [['delivered', message.remoteAddress]],
  );
  return message;
}

test('the configured pools, the default, and assignments an admin makes', async () => {
  const list = await app.api.get('/v2/delivery/pools');
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    list.body.data.map((p: { name: string; default: boolean; addresses: unknown[] }) => [p.name, p.default, p.addresses]),
    [
      ['alpha', true, [{ address: '127.0.0.2', helo: 'alpha.mta.test' }]],
      ['beta', false, [{ address: '127.0.0.3', helo: 'beta.mta.test' }]],
    ],
  );
  assert.deepEqual(list.body.assignment, { all: null, transactional: null, bulk: null });
  assert.deepEqual(list.body.effective.transactional, { pool: 'alpha', from: 'default' });

  const unknown = await other.api.patch('/v2/delivery/pools/assignment', { all: 'beta', bulk: 'gamma' });
  assert.equal(unknown.status, 400, unknown.text);
  assert.match(unknown.body.errors.bulk[0], /No IP pool named "gamma"/);
  assert.deepEqual(
    (await other.api.get('/v2/delivery/pools')).body.assignment,
    { all: null, transactional: null, bulk: null },
    'nothing changed',
  );

  const assigned = await other.api.patch('/v2/delivery/pools/assignment', { all: 'Beta' });
  assert.equal(assigned.status, 200, assigned.text);
  assert.deepEqual(assigned.body.assignment, { all: 'beta', transactional: null, bulk: null });
  assert.deepEqual(assigned.body.effective, {
    transactional: { pool: 'beta', from: 'workspace' },
    bulk: { pool: 'beta', from: 'workspace' },
  });
  // One workspace's assignment is its own.
  assert.deepEqual((await app.api.get('/v2/delivery/pools')).body.effective.transactional, { pool: 'alpha', from: 'default' });
});

test("each workspace's mail leaves from its pool's address with its EHLO name; shaping per source", async () => {
  const a = await deliver(app.api, 'Acme <hello@acme.test>', 'a1@example.org');
  const b = await deliver(other.api, 'Beta <hello@beta.test>', 'b1@example.org');
  assert.deepEqual([a.remoteAddress, a.heloName], ['127.0.0.2', 'alpha.mta.test']);
  assert.deepEqual([b.remoteAddress, b.heloName], ['127.0.0.3', 'beta.mta.test']);

  // Removing the assignment: the default pool again.
  const cleared = await other.api.patch('/v2/delivery/pools/assignment', { all: null });
  assert.deepEqual(cleared.body.effective.transactional, { pool: 'alpha', from: 'default' });

  // The delivery workers write the shaping state every 5 s: one entry per source address.
  const states = await eventually(async () => {
    const list = await app.api.get('/v2/delivery/destinations');
    assert.equal(list.status, 200, list.text);
    const mine = list.body.data.filter(
      (d: { destination: string; accepted: number }) => d.destination === 'mx.example.org' && d.accepted >= 1,
    );
    return mine.length === 2 && mine;
  }, 10_000);
  assert.deepEqual(
    states.map((s: { source: string; accepted: number }) => [s.source, s.accepted]),
    [
      ['127.0.0.2', 1],
      ['127.0.0.3', 1],
    ],
  );
});
