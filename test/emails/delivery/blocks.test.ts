// Blocks are not bounces (docs/delivery.md): a receiver that answers a reputation block with
// 550 leaves the email attempted (retried later) and the recipient unsuppressed, and slows the
// destination down. Queue administration: holds by recipient domain, release, purge.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { eventually } from '../../helpers/app.ts';

let app: DeliveryApp;
before(async () => {
  // A short back-off after a block, so the retry below does not wait a minute.
  process.env.DELIVERY_SHAPING = JSON.stringify({ 'mx.example.org': { blockPauseMs: 300 } });
  app = await startDeliveryApp();
  delete process.env.DELIVERY_SHAPING;
});
after(async () => {
  await app.close();
});

const send = (to: string) => app.api.post('/v2/emails', { from: 'Acme <hello@acme.test>', to, subject: 'Hi', text: 'Hi' });

test('a 550 reputation block is retried, never suppresses the recipient, and slows the destination', async () => {
  app.sink.addRule({
    match: 'customer@example.org',
    reply: { code: 550, message: '5.7.1 Your IP has very low reputation, blocked' },
    times: 1,
  });
  const res = await send('customer@example.org');
  assert.equal(res.status, 200, res.text);
  await app.waitForStatus(res.body.id, 'attempted');
  const attempts = await app.attemptsOf(res.body.id);
  assert.deepEqual(
    attempts.map((a) => [a.outcome, a.smtp_code, a.reason, a.tls]),
    [['temporary', 550, 'reputation_block', 'opportunistic']],
  );
  assert.equal((await app.api.get('/v2/suppressions/customer%40example.org')).status, 404);
  const email = await app.api.get(`/v2/emails/${res.body.id}`);
  assert.deepEqual(email.body.bounce, {
    reason: 'reputation_block',
    type: 'soft',
    description: "Refused because of the sending IP's or domain's reputation or a blocklist.",
  });
  const attempted = (await app.eventsOf(res.body.id)).find((e) => e.type === 'email.attempted');
  assert.equal(attempted?.object.bounce_reason, 'reputation_block');

  // The destination was slowed: its pace halved and it backed off (the workers write the state every 5 s).
  const destination = await eventually(async () => {
    const list = await app.api.get('/v2/delivery/destinations');
    assert.equal(list.status, 200, list.text);
    return list.body.data.find((d: { destination: string; blocked: number }) => d.destination === 'mx.example.org' && d.blocked >= 1);
  }, 8000);
  assert.ok(destination.current_per_minute !== null, 'a pace is in force after the block');
  assert.equal(destination.provider, null);

  // Retried later: the receiver accepts now.
  await app.makeDue(res.body.id);
  await app.waitForStatus(res.body.id, 'delivered');
  assert.equal((await app.email(res.body.id)).bounce_reason, null);
});

test('a hold keeps deliveries to a domain queued until released; a purge cancels queued ones', async () => {
  const hold = await app.api.post('/v2/delivery/holds', { domain: 'Example.org', reason: 'warm-up review' });
  assert.equal(hold.status, 201, hold.text);
  assert.equal(hold.body.domain, 'example.org');
  assert.match(hold.body.id, /^hold_/);
  const held = await send('held@example.org');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal((await app.email(held.body.id)).status, 'accepted', 'not sent while held');
  assert.equal(app.sink.messages.filter((m) => m.rcptTo.includes('held@example.org')).length, 0);
  assert.deepEqual(
    (await app.api.get('/v2/delivery/holds')).body.data.map((h: { id: string }) => h.id),
    [hold.body.id],
  );

  const released = await app.api.delete(`/v2/delivery/holds/${hold.body.id}`);
  assert.equal(released.status, 200, released.text);
  assert.equal((await app.api.delete(`/v2/delivery/holds/${hold.body.id}`)).status, 404);
  await app.makeDue(held.body.id);
  await app.waitForStatus(held.body.id, 'delivered');

  // Purge: queued (held) deliveries to the domain are canceled, each with email.canceled.
  const again = await app.api.post('/v2/delivery/holds', {});
  const queued = [await send('p1@example.org'), await send('p2@example.org')];
  // Each was picked up, found held and put back in the queue (a delivery under way is not purged).
  for (const r of queued) {
    await eventually(async () => {
      const job = await app.jobOf(r.body.id);
      return job && job.run_at > Date.now() + 10_000 && (job.locked_until === null || Number(job.locked_until) < Date.now());
    }, 5000);
  }
  const purge = await app.api.post('/v2/delivery/purge', { domain: 'example.org' });
  assert.equal(purge.status, 200, purge.text);
  assert.equal(purge.body.purged, 2);
  assert.deepEqual([...purge.body.ids].sort(), queued.map((r) => r.body.id).sort());
  for (const r of queued) {
    assert.equal((await app.email(r.body.id)).status, 'canceled');
    assert.ok((await app.eventsOf(r.body.id)).some((e) => e.type === 'email.canceled'));
  }
  await app.api.delete(`/v2/delivery/holds/${again.body.id}`);
  const types = (await app.running.ctx.db.selectFrom('events').select('type').where('type', 'like', 'delivery.%').execute()).map(
    (e) => e.type,
  );
  assert.deepEqual(types.sort(), ['delivery.held', 'delivery.held', 'delivery.released', 'delivery.released']);
});
