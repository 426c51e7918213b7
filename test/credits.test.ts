// Credits: one conditional UPDATE per spend, so the balance never goes below zero, not even
// with many concurrent spenders in one process or in several.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, race, inParallel, type TestDatabase } from './fixtures/limits-db.ts';
import { getCredits, insufficientCreditsError, refundCredits, spendCredits } from '../src/platform/credits.ts';
import { ApiError } from '../src/platform/http/errors.ts';
import { apiErrorOf } from './helpers/app.ts';

let t: TestDatabase;
before(async () => {
  t = await openTestDatabase();
});
after(() => t.close());

const spend = (workspaceId: string, n: number) => t.db.transaction().execute((tx) => spendCredits(tx, workspaceId, n));

test('spending takes credits and returns the balance left', async () => {
  const ws = await t.newWorkspace({ credits: 10 });
  assert.equal(await spend(ws.id, 3), 7);
  assert.equal(await spend(ws.id, 7), 0, 'the whole balance can be spent');
  assert.equal(await getCredits(t.db, ws.id), 0);
});

test('a short balance is the 402 Insufficient credits, stating required and available, with nothing taken', async () => {
  const ws = await t.newWorkspace({ credits: 2 });
  const error = await apiErrorOf(spend(ws.id, 3));
  assert.equal(error.status, 402);
  assert.deepEqual(error.body, {
    error: 'Insufficient credits',
    message: 'This request needs 3 credits but the workspace has 2 available.',
  });
  assert.equal(await getCredits(t.db, ws.id), 2);

  const none = await t.newWorkspace({ credits: 0 });
  assert.deepEqual((await apiErrorOf(spend(none.id, 1))).body, {
    error: 'Insufficient credits',
    message: 'This request needs 1 credit but the workspace has 0 available.',
  });
  const built = insufficientCreditsError(5, 4);
  assert.equal(built.status, 402);
  assert.deepEqual(built.body, {
    error: 'Insufficient credits',
    message: 'This request needs 5 credits but the workspace has 4 available.',
  });
});

test('a 402 inside a send rolls back everything the send wrote', async () => {
  const ws = await t.newWorkspace({ credits: 5 });
  const error = await apiErrorOf(
    t.db.transaction().execute(async (tx) => {
      await spendCredits(tx, ws.id, 2); // e.g. the first recipients…
      await spendCredits(tx, ws.id, 4); // …then more than is left
    }),
  );
  assert.equal(error.status, 402);
  assert.equal(
    error.body.message,
    'This request needs 4 credits but the workspace has 3 available.',
    'the balance as the transaction saw it',
  );
  assert.equal(await getCredits(t.db, ws.id), 5, 'nothing changed');
});

test('refunds give credits back; zero is a no-op; nonsense amounts are refused', async () => {
  const ws = await t.newWorkspace({ credits: 4 });
  assert.equal(await spend(ws.id, 4), 0);
  assert.equal(await t.db.transaction().execute((tx) => refundCredits(tx, ws.id, 3)), 3);
  assert.equal(await spend(ws.id, 0), 3);
  await assert.rejects(spend(ws.id, -1), TypeError);
  await assert.rejects(spend(ws.id, 1.5), TypeError);
  await assert.rejects(
    t.db.transaction().execute((tx) => refundCredits(tx, ws.id, -2)),
    TypeError,
  );
  await assert.rejects(
    t.db.transaction().execute((tx) => refundCredits(tx, 'wsp_missing', 1)),
    /no workspace/,
  );
  assert.equal(await getCredits(t.db, ws.id), 3);
});

test('concurrent spenders never overspend', async () => {
  const ws = await t.newWorkspace({ credits: 25 });
  const outcomes = await inParallel(40, 10, async () => {
    try {
      await spend(ws.id, 1);
      return 'ok';
    } catch (error) {
      if (error instanceof ApiError && error.status === 402) return '402';
      throw error;
    }
  });
  assert.equal(outcomes.filter((o) => o === 'ok').length, 25);
  assert.equal(outcomes.filter((o) => o === '402').length, 15);
  assert.equal(await getCredits(t.db, ws.id), 0);
});

test('concurrent spenders of different sizes: every success is paid for, the balance stays at or above zero', async () => {
  const ws = await t.newWorkspace({ credits: 100 });
  const sizes = Array.from({ length: 30 }, (_, i) => (i % 7) + 1);
  const spent = await inParallel(sizes.length, 10, async (i) => {
    try {
      await spend(ws.id, sizes[i]);
      return sizes[i];
    } catch (error) {
      if (error instanceof ApiError && error.status === 402) return 0;
      throw error;
    }
  });
  const total = spent.reduce((a, b) => a + b, 0);
  const left = await getCredits(t.db, ws.id);
  assert.equal(left, 100 - total);
  assert.ok(left >= 0 && left < 7, `only a spend larger than what is left may fail (left ${left})`);
});

test('two processes spending at once: exactly the balance is spent', async () => {
  const ws = await t.newWorkspace({ credits: 50 });
  const tallies = await race<Record<string, number>>('limits-racer.ts', t.target, {
    op: 'spend',
    workspaceId: ws.id,
    times: 40,
    units: 1,
    now: 0,
  });
  const ok = tallies.reduce((sum, tally) => sum + (tally.ok ?? 0), 0);
  const refused = tallies.reduce((sum, tally) => sum + (tally['402'] ?? 0), 0);
  assert.equal(ok, 50);
  assert.equal(refused, 30);
  assert.equal(await getCredits(t.db, ws.id), 0);
});
