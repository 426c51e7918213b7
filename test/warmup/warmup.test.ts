// Warm-up (docs/delivery.md "Warm-up"): a new sending domain delivers its day's cap per
// destination to a real SMTP sink and defers the rest to the next UTC day, transactional mail
// before bulk mail. Days are moved with the test clock, not waited for.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from '../emails/delivery/helpers.ts';
import { eventually } from '../helpers/app.ts';
import { nowMs, resetClock, shiftClock } from '../../src/platform/clock.ts';

const DAY = 86_400_000;
let app: DeliveryApp;

before(async () => {
  // Start the test at 01:00 UTC of a day, so that "today" cannot end while it runs.
  const now = nowMs();
  shiftClock((Math.floor(now / DAY) + 1) * DAY + 3600_000 - now);
  process.env.DELIVERY_WARMUP = JSON.stringify({ tiny: [2, 100] });
  app = await startDeliveryApp();
});
after(async () => {
  delete process.env.DELIVERY_WARMUP;
  resetClock();
  await app.close();
});

const at = (dayOffset: number, minutes: number) => (Math.floor(nowMs() / DAY) + dayOffset) * DAY + minutes * 60_000;
const moveTo = (ms: number) => shiftClock(ms - nowMs());
const send = (to: string, extra: Record<string, unknown> = {}) =>
  app.api.post('/v2/emails', { from: 'Acme <hello@acme.test>', to, subject: `Hi ${to}`, text: 'Hi', ...extra });
const warmups = async () => {
  const res = await app.api.get('/v2/delivery/warmup');
  assert.equal(res.status, 200, res.text);
  return res.body.data;
};
const delivered = () => app.sink.messages.map((m) => m.rcptTo[0]);

test("a warming domain delivers the day's cap, defers the rest, and sends it the next day transactional first", async () => {
  const started = await app.api.post('/v2/delivery/warmup', { domain: 'ACME.test', schedule: 'tiny' });
  assert.equal(started.status, 201, started.text);
  assert.deepEqual(
    [
      started.body.kind,
      started.body.subject,
      started.body.day,
      started.body.days,
      started.body.cap,
      started.body.next_day_cap,
      started.body.status,
    ],
    ['domain', 'acme.test', 1, 2, 2, 100, 'warming'],
  );
  assert.equal((await app.api.post('/v2/delivery/warmup', { domain: 'acme.test' })).status, 409);
  assert.equal((await app.api.post('/v2/delivery/warmup', { domain: 'acme.test', address: '192.0.2.1' })).status, 400);
  assert.equal((await app.api.post('/v2/delivery/warmup', { domain: 'other.test', schedule: 'nope' })).status, 400);

  // Bulk mail (a campaign's) due at 02:00; transactional mail now.
  const bulk = [
    await send('b1@example.org', { scheduled_at: new Date(at(0, 120)).toISOString() }),
    await send('b2@example.org', { scheduled_at: new Date(at(0, 120)).toISOString() }),
  ];
  for (const r of bulk) assert.equal(r.status, 200, r.text);
  await app.running.ctx.db
    .updateTable('emails')
    .set({ source: 'campaign' })
    .where(
      'id',
      'in',
      bulk.map((r) => r.body.id),
    )
    .execute();
  const transactional = [await send('t1@example.org'), await send('t2@example.org'), await send('t3@example.org')];

  // Day 1: two of the transactional messages go, the third waits for tomorrow (not failed).
  await app.sink.waitForMessages(2, 15_000);
  const deferred = await eventually(async () => {
    const [warmup] = await warmups();
    return warmup.deferred === 1 && warmup;
  }, 10_000);
  assert.deepEqual(deferred.destinations, [{ destination: 'mx.example.org', cap: 2, sent: 2, next_day_cap: 100, deferred: 1 }]);
  const statuses = () => Promise.all(transactional.map(async (r) => (await app.email(r.body.id)).status));
  await eventually(async () => (await statuses()).sort().join() === 'accepted,delivered,delivered', 10_000);

  // The bulk mail comes due the same day: over the cap, deferred as well.
  moveTo(at(0, 121));
  await eventually(async () => (await warmups())[0].deferred === 3, 15_000);
  assert.equal(app.sink.messages.length, 2);

  // Day 2, five minutes in: the transactional backlog goes first…
  moveTo(at(1, 5));
  await app.sink.waitForMessages(3, 20_000);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(app.sink.messages.length, 3, 'bulk mail waits for the transactional backlog');
  assert.match(delivered()[2], /^t\d@example\.org$/);

  // …then the bulk mail, within the day's cap.
  moveTo(at(0, 20));
  await app.sink.waitForMessages(5, 20_000);
  assert.deepEqual(delivered().slice(3).sort(), ['b1@example.org', 'b2@example.org']);
  for (const r of [...bulk, ...transactional]) await app.waitForStatus(r.body.id, 'delivered');
  const [day2] = await warmups();
  assert.deepEqual(
    [day2.day, day2.cap, day2.deferred, day2.destinations],
    [2, 100, 0, [{ destination: 'mx.example.org', cap: 100, sent: 3, next_day_cap: null, deferred: 0 }]],
  );

  // Stopped: listed no more, nothing capped.
  const stopped = await app.api.delete('/v2/delivery/warmup/acme.test');
  assert.equal(stopped.status, 200, stopped.text);
  assert.equal(stopped.body.id, started.body.id);
  assert.deepEqual(await warmups(), []);
  assert.equal((await app.api.delete(`/v2/delivery/warmup/${started.body.id}`)).status, 404);
});
