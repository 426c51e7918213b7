// Idempotency-Key (https://emailit.com/docs/api-reference/idempotency/): header validation, the
// per-workspace namespace, replay for 24 hours after completion, 409 while held, release on
// failure, leases that follow their process (renewed while it lives, for 15 minutes at most), 503
// when the store cannot be reached, and exactly one winner among racing processes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, race, inParallel, type TestDatabase } from './fixtures/limits-db.ts';
import {
  beginIdempotent,
  completeIdempotent,
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_REPLAY_MS,
  parseIdempotencyKey,
  pruneIdempotencyKeys,
  releaseIdempotent,
  renewIdempotencyLeases,
} from '../src/platform/idempotency.ts';
import { checkSendLimits } from '../src/platform/limits.ts';
import { openDatabase } from '../src/platform/db/database.ts';
import { ApiError } from '../src/platform/http/errors.ts';
import { apiErrorOf } from './helpers/app.ts';

let t: TestDatabase;
let ws: string;
before(async () => {
  t = await openTestDatabase();
  ws = (await t.newWorkspace()).id;
});
after(() => t.close());

const T = Date.UTC(2030, 0, 15, 12, 0, 0);
let n = 0;
const freshKey = () => `key-${++n}_${Math.random().toString(36).slice(2)}`;

const IN_PROGRESS = {
  error: 'Idempotency key in progress',
  message: 'A request with this Idempotency-Key is still being processed. Retry shortly.',
};
const INVALID = {
  error: 'Invalid Idempotency-Key',
  message: 'The Idempotency-Key header must be 1 to 256 characters long and contain only letters, digits, "-" and "_".',
};

async function claim(key: string, now = T, workspaceId = ws): Promise<string> {
  const result = await beginIdempotent(t.db, workspaceId, key, now);
  assert.equal(result.kind, 'new');
  return result.kind === 'new' ? result.token : '';
}

const complete = (key: string, token: string, body: unknown, now = T, workspaceId = ws) =>
  t.db.transaction().execute((tx) => completeIdempotent(tx, workspaceId, key, token, 200, body, now));

test('the header: absent, valid, or a 400 Invalid Idempotency-Key', () => {
  assert.equal(parseIdempotencyKey(undefined), null);
  assert.equal(parseIdempotencyKey('order-123_ABC'), 'order-123_ABC');
  assert.equal(parseIdempotencyKey('x'), 'x');
  assert.equal(parseIdempotencyKey('a'.repeat(256)), 'a'.repeat(256));
  for (const bad of ['', 'a'.repeat(257), 'has space', 'dot.ted', 'slash/', 'ключ', 'a,b', 'tab\t']) {
    assert.throws(
      () => parseIdempotencyKey(bad),
      (error: unknown) => error instanceof ApiError && error.status === 400 && JSON.stringify(error.body) === JSON.stringify(INVALID),
      `"${bad}" is refused`,
    );
  }
  assert.throws(() => parseIdempotencyKey(['a', 'b']), ApiError, 'a repeated header is refused');
});

test('first use claims the key; while it runs another request gets 409; once complete it replays with 200', async () => {
  const key = freshKey();
  const token = await claim(key);
  const busy = await apiErrorOf(beginIdempotent(t.db, ws, key, T + 1000));
  assert.equal(busy.status, 409);
  assert.deepEqual(busy.body, IN_PROGRESS);

  const response = { id: 'em_1', object: 'email', status: 'accepted' };
  await complete(key, token, response, T + 2000);
  assert.deepEqual(await beginIdempotent(t.db, ws, key, T + 3000), { kind: 'replay', status: 200, body: response });
  assert.deepEqual(await beginIdempotent(t.db, ws, key, T + 4000), { kind: 'replay', status: 200, body: response }, 'every time');
});

test('keys are per workspace: another workspace may use the same key', async () => {
  const other = (await t.newWorkspace()).id;
  const key = freshKey();
  const token = await claim(key);
  await complete(key, token, { mine: true });
  const theirs = await claim(key, T, other);
  await complete(key, theirs, { theirs: true }, T, other);
  assert.deepEqual(await beginIdempotent(t.db, ws, key, T + 1), { kind: 'replay', status: 200, body: { mine: true } });
  assert.deepEqual(await beginIdempotent(t.db, other, key, T + 1), { kind: 'replay', status: 200, body: { theirs: true } });
});

test('the replay window is 24 hours after the request completed, not after it started', async () => {
  const key = freshKey();
  const token = await claim(key, T);
  const completedAt = T + 10 * 60_000;
  await complete(key, token, { ok: 1 }, completedAt);
  assert.equal(IDEMPOTENCY_REPLAY_MS, 24 * 3600 * 1000);
  const last = await beginIdempotent(t.db, ws, key, completedAt + IDEMPOTENCY_REPLAY_MS - 1);
  assert.deepEqual(last, { kind: 'replay', status: 200, body: { ok: 1 } });
  const afterwards = await beginIdempotent(t.db, ws, key, completedAt + IDEMPOTENCY_REPLAY_MS);
  assert.equal(afterwards.kind, 'new', 'after 24 hours the key is new again');
});

test('a failed request stores nothing and releases the key', async () => {
  const key = freshKey();
  const token = await claim(key);
  // The send fails after writing its response in its transaction: all of it rolls back…
  await assert.rejects(
    t.db.transaction().execute(async (tx) => {
      await completeIdempotent(tx, ws, key, token, 200, { never: 'stored' }, T);
      throw new Error('delivery queue unavailable');
    }),
    /delivery queue unavailable/,
  );
  assert.equal((await apiErrorOf(beginIdempotent(t.db, ws, key, T + 1))).status, 409, '…and the key is still held…');
  assert.equal(await releaseIdempotent(t.db, ws, key, token), true, '…until the failed request releases it');
  const retry = await beginIdempotent(t.db, ws, key, T + 2);
  assert.equal(retry.kind, 'new', 'a retry with the key runs afresh');
});

test('only the holder releases or completes a key', async () => {
  const key = freshKey();
  const token = await claim(key);
  assert.equal(await releaseIdempotent(t.db, ws, key, 'someone-else'), false);
  assert.equal((await apiErrorOf(beginIdempotent(t.db, ws, key, T + 1))).status, 409);
  const stranger = await apiErrorOf(complete(key, 'someone-else', { x: 1 }));
  assert.deepEqual(stranger.body, IN_PROGRESS);
  await complete(key, token, { x: 2 });
  assert.equal(await releaseIdempotent(t.db, ws, key, token), false, 'a completed key is not released');
  assert.deepEqual(await beginIdempotent(t.db, ws, key, T + 2), { kind: 'replay', status: 200, body: { x: 2 } });
});

test('a holder whose process died stops renewing: its key is free after the lease, and a late completion cannot store a second send', async () => {
  const key = freshKey();
  const crashed = await claim(key, T);
  assert.equal(IDEMPOTENCY_LEASE_MS, 10_000);
  assert.equal((await apiErrorOf(beginIdempotent(t.db, ws, key, T + IDEMPOTENCY_LEASE_MS - 1))).status, 409);
  const next = await claim(key, T + IDEMPOTENCY_LEASE_MS);
  assert.notEqual(next, crashed);
  // Had the first holder only stalled, its late completion must not store a second send.
  const late = await apiErrorOf(complete(key, crashed, { first: true }, T + IDEMPOTENCY_LEASE_MS + 5));
  assert.equal(late.status, 409);
  await complete(key, next, { second: true }, T + IDEMPOTENCY_LEASE_MS + 10);
  assert.deepEqual(await beginIdempotent(t.db, ws, key, T + IDEMPOTENCY_LEASE_MS + 20), {
    kind: 'replay',
    status: 200,
    body: { second: true },
  });
});

test("a live holder renews its lease while the request runs, for the spec's 15 minutes at most", async () => {
  const key = freshKey();
  const live = await claim(key, T);
  for (let at = T + 5_000; at + 5_000 < T + IDEMPOTENCY_LOCK_MS; at += 5_000) {
    await renewIdempotencyLeases(at);
    assert.equal((await apiErrorOf(beginIdempotent(t.db, ws, key, at + 5_000))).status, 409, `held at +${at - T} ms`);
  }
  assert.equal(IDEMPOTENCY_LOCK_MS, 15 * 60_000);
  assert.equal((await apiErrorOf(beginIdempotent(t.db, ws, key, T + IDEMPOTENCY_LOCK_MS - 1))).status, 409);
  await renewIdempotencyLeases(T + IDEMPOTENCY_LOCK_MS);
  const next = await claim(key, T + IDEMPOTENCY_LOCK_MS);
  assert.notEqual(next, live, 'no renewal past 15 minutes');
});

test('leases are renewed on the real clock while a key is held, and never shortened', async () => {
  const key = freshKey();
  const first = await beginIdempotent(t.db, ws, key);
  assert.equal(first.kind, 'new');
  const expiry = async () =>
    Number(
      (
        await t.db
          .selectFrom('idempotency_keys')
          .select('expires_at')
          .where('workspace_id', '=', ws)
          .where('key', '=', key)
          .executeTakeFirstOrThrow()
      ).expires_at,
    );
  const claimed = await expiry();
  // The renewal timer runs every 3 seconds.
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  assert.ok((await expiry()) > claimed, 'renewed');
  // A renewal for an earlier time leaves a later expiry alone.
  const later = await expiry();
  await renewIdempotencyLeases(later - IDEMPOTENCY_LEASE_MS - 60_000);
  assert.equal(await expiry(), later);
  if (first.kind === 'new') assert.equal(await releaseIdempotent(t.db, ws, key, first.token), true);
});

test('503 Idempotency unavailable when the store cannot be reached', async () => {
  // A connection to the same database that has gone away.
  const gone = openDatabase(t.target.url, { schema: t.target.schema });
  await gone.db.selectFrom('workspaces').select('id').limit(1).execute();
  await gone.close();
  const key = freshKey();
  const error = await apiErrorOf(beginIdempotent(gone.db, ws, key, T));
  assert.equal(error.status, 503);
  assert.deepEqual(error.body, {
    error: 'Idempotency unavailable',
    message: 'The Idempotency-Key could not be checked and the request was not processed. Retry with the same key.',
  });
  assert.equal(await releaseIdempotent(gone.db, ws, key, 'token'), false, 'release never throws');
  assert.equal((await beginIdempotent(t.db, ws, key, T)).kind, 'new', 'nothing was held: a retry with the same key runs');
});

test('the real clock is used when no time is given', async () => {
  const key = freshKey();
  const first = await beginIdempotent(t.db, ws, key);
  assert.equal(first.kind, 'new');
  if (first.kind !== 'new') return;
  await t.db.transaction().execute((tx) => completeIdempotent(tx, ws, key, first.token, 200, { now: true }));
  assert.deepEqual(await beginIdempotent(t.db, ws, key), { kind: 'replay', status: 200, body: { now: true } });
});

test('concurrent requests with one key in one process: exactly one claims it', async () => {
  const key = freshKey();
  const results = await inParallel(20, 20, async () => {
    try {
      return (await beginIdempotent(t.db, ws, key, T)).kind;
    } catch (error) {
      if (error instanceof ApiError) return String(error.status);
      throw error;
    }
  });
  assert.equal(results.filter((r) => r === 'new').length, 1);
  assert.equal(results.filter((r) => r === '409').length, 19);
});

test('pruning deletes keys whose lock or replay window ended', async () => {
  const prunedWs = (await t.newWorkspace()).id;
  const later = T + 30 * 24 * 3600 * 1000; // clear of every other test's keys
  const stale = freshKey();
  const replayable = freshKey();
  const held = freshKey();
  const doneToken = await claim(stale, later - IDEMPOTENCY_REPLAY_MS - 1000, prunedWs);
  await complete(stale, doneToken, {}, later - IDEMPOTENCY_REPLAY_MS - 1000, prunedWs);
  const replayToken = await claim(replayable, later - 1000, prunedWs);
  await complete(replayable, replayToken, { kept: true }, later - 1000, prunedWs);
  await claim(held, later - IDEMPOTENCY_LEASE_MS / 2, prunedWs);
  const before = await t.db.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', prunedWs).execute();
  assert.equal(before.length, 3);
  assert.ok((await pruneIdempotencyKeys(t.db, later)) >= 1);
  const left = await t.db.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', prunedWs).orderBy('key').execute();
  assert.deepEqual(left.map((r) => r.key).sort(), [replayable, held].sort());
});

test('two processes racing on the same keys: exactly one request per key sends; the rest wait or replay', async () => {
  const workspaceId = (await t.newWorkspace()).id;
  const keys = Array.from({ length: 15 }, () => freshKey());
  type Outcome = { key: string; got: string; body: any };
  const runs = await race<{ pid: number; outcomes: Outcome[] }>('idempotency-racer.ts', t.target, {
    workspaceId,
    keys,
    attempts: 3,
    now: T,
  });
  const outcomes = runs.flatMap((r) => r.outcomes);
  assert.equal(outcomes.length, 2 * 15 * 3);
  for (const key of keys) {
    const forKey = outcomes.filter((o) => o.key === key);
    const winners = forKey.filter((o) => o.got === 'new');
    assert.equal(winners.length, 1, `exactly one winner for ${key}: ${JSON.stringify(forKey.map((o) => o.got))}`);
    for (const other of forKey.filter((o) => o.got !== 'new')) {
      if (other.got === '409') assert.deepEqual(other.body, IN_PROGRESS);
      else assert.deepEqual(other, { key, got: 'replay', body: winners[0].body }, "a replay returns the winner's response");
    }
    // Afterwards every request with the key replays the one stored response.
    assert.deepEqual(await beginIdempotent(t.db, workspaceId, key, T + 1), { kind: 'replay', status: 200, body: winners[0].body });
  }
  const winnersByProcess = runs.map((r) => r.outcomes.filter((o) => o.got === 'new').length);
  assert.equal(winnersByProcess[0] + winnersByProcess[1], 15);
  // Each winner counted one send in the transaction that stored its response: the counter is exact.
  const limits = await checkSendLimits(t.db, { id: workspaceId, sendRate: 2, dailyLimit: 5000 }, T + 1);
  assert.equal(limits.state.dailyCurrent, 15);
});
