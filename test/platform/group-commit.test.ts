// Group commit: units that arrive together share a transaction on SQLite, yet each one's
// failure rolls back only its own writes and reaches only its own caller.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshMigratedDb } from '../helpers/app.ts';
import { dialectOf, type Db } from '../../src/platform/db/database.ts';
import { groupCommit } from '../../src/platform/db/group-commit.ts';
import { spendCredits } from '../../src/platform/credits.ts';
import { enqueueJob } from '../../src/platform/jobs.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
  await db.insertInto('workspaces').values({ id: 'w', name: 'w', plan: 'pro', credits: 5, verified: 1, members: '[]', features: '[]', send_rate: 2, daily_limit: 10, created_at: 'c', updated_at: 'u' }).execute();
});
after(() => close());

test('concurrent units commit together; a failing unit rolls back alone', async () => {
  const unit = (n: number) =>
    groupCommit(db, async (tx) => {
      await enqueueJob(tx, 'group.test', { n });
      await spendCredits(tx, 'w', 2); // the third unit finds 1 credit left and fails
      return n;
    });
  const results = await Promise.allSettled([unit(1), unit(2), unit(3)]);
  const succeeded = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  // On SQLite the group runs in arrival order, so the third unit is the one short of credits;
  // on PostgreSQL the three are concurrent transactions and any one of them may be.
  if (dialectOf(db) === 'sqlite') assert.deepEqual(succeeded, [1, 2]);
  assert.equal(succeeded.length, 2);
  assert.equal(failed.length, 1);
  assert.equal(failed[0].status, 402);

  const jobs = await db.selectFrom('jobs').select('payload').where('type', '=', 'group.test').execute();
  assert.deepEqual(jobs.map((j) => JSON.parse(j.payload).n).sort(), succeeded.sort(), "the failed unit's job was rolled back");
  const { credits } = await db.selectFrom('workspaces').select('credits').where('id', '=', 'w').executeTakeFirstOrThrow();
  assert.equal(Number(credits), 1);
});

test('on SQLite a unit sees the writes of the units before it in its group; on PostgreSQL each has its own transaction', async () => {
  const seen = await Promise.all([1, 2, 3].map(() =>
    groupCommit(db, async (tx) => {
      await enqueueJob(tx, 'group.count', {});
      const rows = await tx.selectFrom('jobs').select('id').where('type', '=', 'group.count').execute();
      return rows.length;
    }),
  ));
  if (dialectOf(db) === 'sqlite') assert.deepEqual(seen, [1, 2, 3]);
  else assert.ok(seen.every((n) => n >= 1 && n <= 3), String(seen));
  const total = await db.selectFrom('jobs').select('id').where('type', '=', 'group.count').execute();
  assert.equal(total.length, 3);
});
