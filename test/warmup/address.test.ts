// Warm-up of a source address (docs/delivery.md "Warm-up"): in a pool of two addresses, the
// warming one sends its day's cap per destination and the rest spills to the other address of
// the pool, as the SMTP sink sees it (the connection's remote address); when every address of
// the pool is over its cap, the message waits for the next UTC day. Loopback: Linux routes all
// of 127.0.0.0/8 to lo, so connections bound to 127.0.0.2 and 127.0.0.3 reach the sink.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { eventually } from '../helpers/app.ts';
import { nowMs, resetClock, shiftClock } from '../../src/platform/clock.ts';
import { startWarmup, warmupStates } from '../../src/resources/warmup/service.ts';

const DAY = 86_400_000;
const POOLS = { main: { default: true, addresses: ['127.0.0.2', '127.0.0.3'] } };
let app: DeliveryApp;

before(async () => {
  // 01:00 UTC of a day: "today" cannot end while the test runs.
  const now = nowMs();
  shiftClock((Math.floor(now / DAY) + 1) * DAY + 3600_000 - now);
  process.env.DELIVERY_WARMUP = JSON.stringify({ tiny: [2, 100] });
  app = await startDeliveryApp({ env: { DELIVERY_IP_POOLS: JSON.stringify(POOLS) } });
});
after(async () => {
  delete process.env.DELIVERY_WARMUP;
  resetClock();
  await app.close();
});

const send = async (to: string) => {
  const res = await app.api.post('/v2/emails', { from: 'Acme <hello@acme.test>', to, subject: `Hi ${to}`, text: 'Hi' });
  assert.equal(res.status, 200, res.text);
  return res.body.id as string;
};
const from = (address: string) => app.sink.messages.filter((m) => m.remoteAddress === address).map((m) => m.rcptTo[0]);

test('a warming source address sends its cap; the rest leaves from the other address of the pool, or waits when both are capped', async () => {
  // Address warm-ups are MTA-wide: the operator starts them (the CLI does this).
  const db = app.running.ctx.db;
  const warming = await startWarmup(db, { address: '127.0.0.2', schedule: 'tiny' });

  // One at a time: the pool takes its addresses in turn, so 127.0.0.2 is offered every other message.
  for (let i = 1; i <= 6; i++) {
    const id = await send(`s${i}@example.org`);
    const email = await app.waitForStatus(id, 'delivered', 15_000);
    assert.ok(email);
  }
  assert.equal(from('127.0.0.2').length, 2, "127.0.0.2 sends no more than today's cap");
  assert.equal(from('127.0.0.3').length, 4, 'the rest spilled to 127.0.0.3, not deferred');
  // Each attempt names the address it left from, as the sink saw it.
  for (const message of app.sink.messages) {
    const [email] = await db.selectFrom('emails').select('id').where('to', '=', message.rcptTo[0]).execute();
    const attempts = await app.attemptsOf(email.id);
    assert.deepEqual(
      attempts.map((a) => a.source_address),
      [message.remoteAddress],
    );
  }
  const [view] = await warmupStates(db);
  assert.deepEqual(
    [view.id, view.kind, view.deferred, view.destinations],
    [warming.id, 'address', 0, [{ destination: 'mx.example.org', cap: 2, sent: 2, next_day_cap: 100, deferred: 0 }]],
  );

  // Both addresses warming and over their caps: the message waits for tomorrow, counted once.
  await startWarmup(db, { address: '127.0.0.3', schedule: 'tiny' });
  const more = [await send('m1@example.org'), await send('m2@example.org'), await send('m3@example.org')];
  await app.sink.waitForMessages(8, 15_000);
  const states = await eventually(async () => {
    const list = await warmupStates(db);
    return list.reduce((n, w) => n + w.deferred, 0) === 1 && list;
  }, 15_000);
  assert.deepEqual(
    states.map((w) => [w.subject, w.destinations[0].sent]),
    [
      ['127.0.0.2', 2],
      ['127.0.0.3', 2],
    ],
  );
  assert.equal(from('127.0.0.3').length, 6);
  const statuses = await eventually(async () => {
    const list: string[] = await Promise.all(more.map(async (id) => (await app.email(id)).status));
    return [...list].sort().join() === 'accepted,delivered,delivered' && list;
  }, 10_000);
  // Deferred, not failed: its job runs again when the next UTC day starts.
  const job = await app.jobOf(more[statuses.indexOf('accepted')]);
  assert.equal(Number(job.run_at), (Math.floor(nowMs() / DAY) + 1) * DAY);
  assert.equal(app.sink.messages.length, 8);

  // Day 2: it goes, and no address keeps it in its backlog.
  shiftClock((Math.floor(nowMs() / DAY) + 1) * DAY + 60_000 - nowMs());
  await app.waitForStatus(more[statuses.indexOf('accepted')], 'delivered', 20_000);
  const day2 = await eventually(async () => {
    const list = await warmupStates(db);
    return list.every((w) => w.deferred === 0) && list;
  }, 10_000);
  assert.deepEqual(
    day2.map((w) => [w.subject, w.day]),
    [
      ['127.0.0.2', 2],
      ['127.0.0.3', 2],
    ],
  );
  assert.equal(
    day2.reduce((n, w) => n + w.destinations.reduce((m, d) => m + d.sent, 0), 0),
    1,
    "one message counted in day 2's caps",
  );
});
