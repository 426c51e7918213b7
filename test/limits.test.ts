// Sending limits (https://emailit.com/docs/limits.md): the per-second sliding window, the UTC day,
// hourly forwards, the 429 bodies and rate-limit headers, and counters that stay exact when several
// processes count at once. Times are passed explicitly (in 2030, clear of the real clock).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, race, type TestDatabase } from './fixtures/limits-db.ts';
import {
  checkForwardLimit,
  checkSendLimits,
  countForward,
  countSends,
  pruneLimitCounters,
  rateLimitHeaders,
  secondsToUtcMidnight,
  sendUnits,
  utcDay,
  type SendLimitsOf,
} from '../src/platform/limits.ts';
import { ApiError } from '../src/platform/http/errors.ts';

let t: TestDatabase;
before(async () => {
  t = await openTestDatabase();
});
after(() => t.close());

const T = Date.UTC(2030, 0, 15, 12, 0, 0); // a whole second, 12:00:00 UTC
const HOUR = 3_600_000;

async function workspace(sendRate = 2, dailyLimit = 5000): Promise<SendLimitsOf> {
  const ws = await t.newWorkspace();
  assert.equal(ws.sendRate, 2, 'new workspaces default to 2 per second');
  assert.equal(ws.dailyLimit, 5000, 'new workspaces default to 5,000 per day');
  return { id: ws.id, sendRate, dailyLimit };
}

const count = (ws: SendLimitsOf, units: number, now: number) => t.db.transaction().execute((tx) => countSends(tx, ws.id, units, now));

test('a third send within one second is refused with the exact 429 body and headers', async () => {
  const ws = await workspace();
  const first = await checkSendLimits(t.db, ws, T);
  assert.ok(first.ok);
  assert.deepEqual(first.state, { limit: 2, current: 0, reset: 1, dailyLimit: 5000, dailyCurrent: 0, dailyReset: 43200 });
  await count(ws, 1, T);
  await count(ws, 1, T + 400);

  const third = await checkSendLimits(t.db, ws, T + 900);
  assert.equal(third.ok, false);
  if (third.ok) return;
  assert.equal(third.status, 429);
  assert.equal(third.limitType, 'rate');
  assert.deepEqual(third.body, {
    error: 'Rate limit exceeded',
    message: 'Sending rate limit of 2 emails per second exceeded; retry after 1 second.',
    limit: 2,
    current: 2,
    retry_after: 1,
  });
  assert.deepEqual(third.headers, {
    'ratelimit-limit': '2',
    'ratelimit-remaining': '0',
    'ratelimit-reset': '1',
    'ratelimit-daily-limit': '5000',
    'ratelimit-daily-remaining': '4998',
    'ratelimit-daily-reset': '43200',
    'retry-after': '1',
  });
  assert.ok(third.error instanceof ApiError);
  assert.equal(third.error.status, 429);
  assert.deepEqual(third.error.body, third.body);
  assert.deepEqual(third.error.headers, third.headers);
});

test('the one-second window slides: each send leaves it exactly one second after it was made', async () => {
  const ws = await workspace();
  await count(ws, 1, T);
  await count(ws, 1, T + 400);
  const at = async (now: number) => {
    const check = await checkSendLimits(t.db, ws, now);
    return { ok: check.ok, current: check.state.current };
  };
  assert.deepEqual(await at(T + 999), { ok: false, current: 2 });
  assert.deepEqual(await at(T + 1000), { ok: true, current: 1 }, 'the send at T has left the window');
  assert.deepEqual(await at(T + 1399), { ok: true, current: 1 });
  assert.deepEqual(await at(T + 1400), { ok: true, current: 0 });
  // The window counts sends in 10 ms slots: one made at T+1405 counts from T+1400.
  await count(ws, 2, T + 1405);
  assert.deepEqual(await at(T + 2399), { ok: false, current: 2 });
  assert.deepEqual(await at(T + 2400), { ok: true, current: 0 });
  assert.equal((await checkSendLimits(t.db, ws, T + 2400)).state.dailyCurrent, 4, 'the day keeps every send');
});

test('without an explicit time, both functions use the clock (fractional milliseconds included)', async () => {
  const ws = await workspace();
  await t.db.transaction().execute((tx) => countSends(tx, ws.id, 2));
  const check = await checkSendLimits(t.db, ws);
  assert.equal(check.ok, false);
  assert.equal(check.state.current, 2);
  await t.db.transaction().execute((tx) => countForward(tx, ws.id));
  assert.equal((await checkForwardLimit(t.db, ws.id)).current, 1);
});

test('checked before, counted after: one large request may overshoot, and then refuses the next', async () => {
  const ws = await workspace();
  await count(ws, 1, T);
  const check = await checkSendLimits(t.db, ws, T + 10);
  assert.ok(check.ok, 'one of two used: the next request may go');
  await count(ws, 50, T + 10);
  const after = await checkSendLimits(t.db, ws, T + 20);
  assert.equal(after.ok, false);
  assert.equal(after.state.current, 51);
  assert.equal(after.ok ? null : after.body.current, 51);
});

test('ratelimit headers after a counted request include the request itself', async () => {
  const ws = await workspace(10, 100);
  await count(ws, 3, T);
  const check = await checkSendLimits(t.db, ws, T + 250.5);
  assert.ok(check.ok);
  assert.deepEqual(rateLimitHeaders(check.state, 4), {
    'ratelimit-limit': '10',
    'ratelimit-remaining': '3',
    'ratelimit-reset': '1',
    'ratelimit-daily-limit': '100',
    'ratelimit-daily-remaining': '93',
    'ratelimit-daily-reset': '43200',
  });
  assert.equal(rateLimitHeaders(check.state, 40)['ratelimit-remaining'], '0', 'never negative');
});

test('the daily limit counts the UTC calendar day and resets at 00:00 UTC', async () => {
  const ws = await workspace(100, 3);
  const lateEvening = Date.UTC(2030, 0, 15, 23, 0, 0);
  await count(ws, 2, lateEvening);
  await count(ws, 1, lateEvening + 5000);
  const full = await checkSendLimits(t.db, ws, lateEvening + 10_000);
  assert.equal(full.ok, false);
  if (full.ok) return;
  assert.equal(full.limitType, 'daily');
  assert.deepEqual(full.body, {
    error: 'Daily limit exceeded',
    message: 'Daily sending limit of 3 emails reached; it resets at 00:00 UTC, in 3590 seconds.',
    limit: 3,
    current: 3,
    retry_after: 3590,
  });
  assert.equal(full.headers['retry-after'], '3590');
  assert.equal(full.headers['ratelimit-daily-reset'], '3590');
  assert.equal(full.headers['ratelimit-daily-remaining'], '0');

  const lastMoment = await checkSendLimits(t.db, ws, Date.UTC(2030, 0, 15, 23, 59, 59, 999));
  assert.equal(lastMoment.ok ? null : lastMoment.body.retry_after, 1);
  const midnight = Date.UTC(2030, 0, 16);
  const nextDay = await checkSendLimits(t.db, ws, midnight);
  assert.ok(nextDay.ok, 'a new UTC day starts from zero');
  assert.equal(nextDay.state.dailyCurrent, 0);
  assert.equal(nextDay.state.dailyReset, 86400);
});

test('when both limits are full the daily one answers (waiting a second would not help)', async () => {
  const ws = await workspace(2, 2);
  await count(ws, 2, T);
  const check = await checkSendLimits(t.db, ws, T + 1);
  assert.equal(check.ok ? null : check.limitType, 'daily');
  assert.equal(check.ok ? null : check.body.error, 'Daily limit exceeded');
});

test('counters belong to one workspace and are shared by all of its callers', async () => {
  const a = await workspace();
  const b = await workspace();
  await count(a, 2, T);
  assert.equal((await checkSendLimits(t.db, a, T + 1)).ok, false);
  const other = await checkSendLimits(t.db, b, T + 1);
  assert.ok(other.ok);
  assert.equal(other.state.current, 0);
  // A caller with raised limits (e.g. the SMTP relay reading the same workspace) sees the same counts.
  const raised = await checkSendLimits(t.db, { ...a, sendRate: 3 }, T + 1);
  assert.ok(raised.ok);
  assert.equal(raised.state.current, 2);
});

test('countSends records nothing for zero units and refuses nonsense', async () => {
  const ws = await workspace();
  await count(ws, 0, T);
  assert.equal((await checkSendLimits(t.db, ws, T)).state.dailyCurrent, 0);
  await assert.rejects(count(ws, -1, T), TypeError);
  await assert.rejects(count(ws, 1.5, T), TypeError);
});

test('a rolled-back send is not counted', async () => {
  const ws = await workspace();
  await assert.rejects(
    t.db.transaction().execute(async (tx) => {
      await countSends(tx, ws.id, 5, T);
      throw new Error('the send failed');
    }),
    /the send failed/,
  );
  assert.equal((await checkSendLimits(t.db, ws, T)).state.dailyCurrent, 0);
});

test('each unique recipient address counts once', () => {
  assert.equal(sendUnits(['a@x.test', 'A@X.test', ' b@x.test', 'b@x.test', 'c@x.test']), 3);
  assert.equal(sendUnits([]), 0);
});

test('UTC day helpers', () => {
  assert.equal(utcDay(Date.UTC(2030, 0, 15, 23, 59, 59, 999)), '2030-01-15');
  assert.equal(utcDay(Date.UTC(2030, 0, 16)), '2030-01-16');
  assert.equal(secondsToUtcMidnight(Date.UTC(2030, 0, 15, 23, 59, 59, 1)), 1);
  assert.equal(secondsToUtcMidnight(Date.UTC(2030, 0, 15, 0, 0, 0, 500)), 86400);
  assert.equal(secondsToUtcMidnight(Date.UTC(2030, 0, 15, 0, 0, 1)), 86399);
});

test('forwards: 3 per sliding hour, then the exact 429 with the wait until one leaves', async () => {
  const ws = await workspace();
  const fwd = (now: number) => t.db.transaction().execute((tx) => countForward(tx, ws.id, now));
  assert.deepEqual(await checkForwardLimit(t.db, ws.id, T), { ok: true, limit: 3, current: 0 });
  await fwd(T);
  await fwd(T + 10 * 60_000);
  await fwd(T + 20 * 60_000 + 300);
  const fourth = await checkForwardLimit(t.db, ws.id, T + 30 * 60_000);
  assert.equal(fourth.ok, false);
  if (fourth.ok) return;
  assert.equal(fourth.status, 429);
  assert.deepEqual(fourth.body, {
    error: 'too_many_requests',
    message: 'Forward limit of 3 per hour reached; retry after 1800 seconds.',
    limit: 3,
    current: 3,
    retry_after: 1800,
  });
  assert.deepEqual(fourth.headers, { 'retry-after': '1800' });
  assert.deepEqual(fourth.error.body, fourth.body);
  assert.deepEqual(await checkForwardLimit(t.db, ws.id, T + HOUR), { ok: true, limit: 3, current: 2 });
  assert.equal((await checkForwardLimit(t.db, (await workspace()).id, T + 30 * 60_000)).ok, true, 'per workspace');
});

test('forwards: with several in one slot, the wait is until enough of them leave', async () => {
  const ws = await workspace();
  for (let i = 0; i < 4; i++) await t.db.transaction().execute((tx) => countForward(tx, ws.id, T + i * 100));
  await t.db.transaction().execute((tx) => countForward(tx, ws.id, T + 5 * 60_000));
  const check = await checkForwardLimit(t.db, ws.id, T + 6 * 60_000);
  assert.equal(check.ok ? null : check.body.current, 5);
  // Four forwards share the slot at T; only when all four leave (T + 1 h) do fewer than 3 remain.
  assert.equal(check.ok ? null : check.body.retry_after, 54 * 60);
});

test('pruning drops only counters no window can reach', async () => {
  const ws = await workspace();
  const later = T + 2 * 24 * HOUR;
  await count(ws, 1, T);
  await count(ws, 1, later - 500);
  await t.db.transaction().execute((tx) => countForward(tx, ws.id, later - 30 * 60_000));
  await t.db.transaction().execute((tx) => countForward(tx, ws.id, T));
  await pruneLimitCounters(t.db, later);
  const rows = async (table: 'send_window_counts' | 'send_daily_counts' | 'forward_counts') =>
    (await t.db.selectFrom(table).selectAll().where('workspace_id', '=', ws.id).execute()).length;
  assert.equal(await rows('send_window_counts'), 1);
  assert.equal(await rows('send_daily_counts'), 1, 'the day two days back is gone; yesterday stays');
  assert.equal(await rows('forward_counts'), 1);
  assert.equal((await checkSendLimits(t.db, ws, later)).state.current, 1);
});

test('two processes counting at once: the window and the day stay exact', async () => {
  const ws = await workspace(1_000_000, 1_000_000);
  const task = { op: 'count', workspaceId: ws.id, times: 40, units: 3, now: T + 50 };
  const tallies = await race<Record<string, number>>('limits-racer.ts', t.target, task);
  assert.deepEqual(tallies, [{ ok: 40 }, { ok: 40 }]);
  const check = await checkSendLimits(t.db, ws, T + 60);
  assert.equal(check.state.current, 2 * 40 * 3);
  assert.equal(check.state.dailyCurrent, 2 * 40 * 3);
});

test('two processes forwarding at once: every forward is counted', async () => {
  const ws = await workspace();
  const task = { op: 'forward', workspaceId: ws.id, times: 25, units: 1, now: T };
  await race('limits-racer.ts', t.target, task);
  const check = await checkForwardLimit(t.db, ws.id, T + 1);
  assert.equal(check.current, 50);
});
