// Group commit: units that arrive together share a transaction on SQLite, yet each one's
// failure rolls back only its own writes and reaches only its own caller.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { freshMigratedDb, usingPostgres } from '../helpers/app.ts';
import { dialectOf, type Db } from '../../src/platform/db/database.ts';
import { groupCommit } from '../../src/platform/db/group-commit.ts';
import { spendCredits, spendCreditsAtCommit } from '../../src/platform/credits.ts';
import { checkSendLimits, countSends } from '../../src/platform/limits.ts';
import { enqueueJob } from '../../src/platform/jobs.ts';
import { pipelinedWrite } from '../../src/platform/db/pg-client.ts';
import { prefetch } from '../../src/platform/db/prepared.ts';
import { getWorkspace, workspaceRead } from '../../src/resources/workspaces/service.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
  await db
    .insertInto('workspaces')
    .values({
      id: 'w',
      name: 'w',
      plan: 'pro',
      credits: 5,
      verified: 1,
      members: '[]',
      features: '[]',
      send_rate: 2,
      daily_limit: 10,
      created_at: 'c',
      updated_at: 'u',
    })
    .execute();
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

test('on SQLite a unit sees the writes of the units before it in its group; on PostgreSQL those of its own group', async () => {
  const seen = await Promise.all(
    [1, 2, 3].map(() =>
      groupCommit(db, async (tx) => {
        await enqueueJob(tx, 'group.count', {});
        const rows = await tx.selectFrom('jobs').select('id').where('type', '=', 'group.count').execute();
        return rows.length;
      }),
    ),
  );
  if (dialectOf(db) === 'sqlite') assert.deepEqual(seen, [1, 2, 3]);
  else
    assert.ok(
      seen.every((n) => n >= 1 && n <= 3),
      String(seen),
    );
  const total = await db.selectFrom('jobs').select('id').where('type', '=', 'group.count').execute();
  assert.equal(total.length, 3);
});

test('credits taken at the commit: twelve units, credits for five; the units of a refused group run again alone', async () => {
  await db.updateTable('workspaces').set({ credits: 5 }).where('id', '=', 'w').execute();
  // Twelve units arriving at once: on PostgreSQL the first runs alone and the others share the next group.
  const results = await Promise.allSettled(
    Array.from({ length: 12 }, (_, n) =>
      groupCommit(db, async (tx) => {
        await enqueueJob(tx, 'group.hot', { n });
        await spendCreditsAtCommit(tx, 'w', 1);
        return n;
      }),
    ),
  );
  const succeeded = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  assert.equal(succeeded.length, 5);
  assert.deepEqual(
    failed.map((e) => [e.status, e.body?.error]),
    Array(7).fill([402, 'Insufficient credits']),
  );
  const jobs = await db.selectFrom('jobs').select('payload').where('type', '=', 'group.hot').execute();
  assert.deepEqual(jobs.map((j) => JSON.parse(j.payload).n).sort(), succeeded.sort());
  const { credits } = await db.selectFrom('workspaces').select('credits').where('id', '=', 'w').executeTakeFirstOrThrow();
  assert.equal(Number(credits), 0);
});

test('a limit check counts what the units before it in its transaction will write', async () => {
  const workspace = { id: 'w', sendRate: 3, dailyLimit: 1_000_000 };
  // Twenty units behind three busy ones: on PostgreSQL they share transactions, whose counts
  // are written only at the commit; on SQLite all share one.
  const busy = Array.from({ length: 3 }, () => groupCommit(db, () => new Promise((r) => setTimeout(r, 50))));
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      groupCommit(db, async (tx) => {
        const check = await checkSendLimits(tx, workspace);
        if (check.ok) await countSends(tx, 'w', 1);
        return check.ok;
      }),
    ),
  );
  await Promise.all(busy);
  assert.equal(results.filter(Boolean).length, 3, String(results));
});

test('in a shared transaction, a failing first unit rolls back alone too', async () => {
  const busy = Array.from({ length: 3 }, () => groupCommit(db, () => new Promise((r) => setTimeout(r, 50))));
  const results = await Promise.allSettled(
    [0, 1, 2].map((n) =>
      groupCommit(db, async (tx) => {
        await enqueueJob(tx, 'group.first', { n });
        if (n === 0) throw new Error('unit 0 fails after its write');
        return n;
      }),
    ),
  );
  await Promise.all(busy);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'fulfilled', 'fulfilled'],
  );
  const jobs = await db.selectFrom('jobs').select('payload').where('type', '=', 'group.first').execute();
  assert.deepEqual(jobs.map((j) => JSON.parse(j.payload).n).sort(), [1, 2]);
});

test('a unit whose pipelined write fails gets its own error; the units that shared its transaction commit', {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
  await sql`create table pipelined_units (n int primary key)`.execute(db);
  await sql`insert into pipelined_units values (2)`.execute(db);
  // Three busy groups, so the units below share the next transaction; unit 2's failing write
  // goes out with unit 3's first statement (or with the COMMIT).
  const busy = Array.from({ length: 3 }, () => groupCommit(db, () => new Promise((r) => setTimeout(r, 50))));
  const results = await Promise.allSettled(
    [0, 1, 2, 3, 4].map((n) =>
      groupCommit(db, async (tx) => {
        await tx.executeQuery(CompiledQuery.raw(pipelinedWrite('insert into pipelined_units values ($1)'), [n]));
        return n;
      }),
    ),
  );
  await Promise.all(busy);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.match(String((results[2] as PromiseRejectedResult).reason), /duplicate key/);
  const rows = await sql<{ n: number }>`select n from pipelined_units order by n`.execute(db);
  assert.deepEqual(
    rows.rows.map((r) => r.n),
    [0, 1, 2, 3, 4],
  );
});

test('the units of a group fetch their reads in one statement at its start; each answers its own, and a failing hook only skips it', {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
  for (const [id, credits] of [
    ['ga', 11],
    ['gb', 22],
  ] as const) {
    await db
      .insertInto('workspaces')
      .values({
        id,
        name: id,
        plan: 'pro',
        credits,
        verified: 1,
        members: '[]',
        features: '[]',
        send_rate: 2,
        daily_limit: 10,
        created_at: 'c',
        updated_at: 'u',
      })
      .execute();
  }
  const busy = Array.from({ length: 3 }, () => groupCommit(db, () => new Promise((r) => setTimeout(r, 50))));
  const unit = (id: string, options: { raiseTo?: number; failingHook?: boolean } = {}) =>
    groupCommit(
      db,
      async (tx) => {
        await prefetch(tx, [workspaceRead(id)]);
        const credits = (await getWorkspace(tx, id))!.credits;
        if (options.raiseTo) await tx.updateTable('workspaces').set({ credits: options.raiseTo }).where('id', '=', id).execute();
        return credits;
      },
      {
        reads: () => {
          if (options.failingHook) throw new Error('the hook fails');
          return [workspaceRead(id)];
        },
      },
    );
  const seen = await Promise.all([unit('ga', { raiseTo: 99 }), unit('ga'), unit('gb'), unit('ga', { failingHook: true })]);
  await Promise.all(busy);
  // The second unit's read was fetched with the first's, before the first raised the balance;
  // the last one, without a read fetched ahead, reads it itself after the raise.
  assert.deepEqual(seen.map(Number), [11, 11, 22, 99]);
});

test('on SQLite a unit that fails before writing leaves the others to commit in the same pass', {
  skip: usingPostgres && 'SQLite only',
}, async () => {
  const runs = [0, 0, 0];
  const results = await Promise.allSettled(
    [0, 1, 2].map((n) =>
      groupCommit(db, async (tx) => {
        runs[n]++;
        if (n === 1) throw new Error('unit 1 fails before writing');
        await enqueueJob(tx, 'group.early', { n });
        return n;
      }),
    ),
  );
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(runs, [1, 1, 1], 'nothing to undo, so no unit ran twice');
  const jobs = await db.selectFrom('jobs').select('payload').where('type', '=', 'group.early').execute();
  assert.deepEqual(jobs.map((j) => JSON.parse(j.payload).n).sort(), [0, 2]);
});

test('a stalled group lets the units that arrive meanwhile commit beside it, and credits are still taken exactly', {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
  await db.updateTable('workspaces').set({ credits: 3 }).where('id', '=', 'w').execute();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const unit = (n: number, stall?: Promise<void>) =>
    groupCommit(db, async (tx) => {
      await enqueueJob(tx, 'group.stall', { n });
      await spendCreditsAtCommit(tx, 'w', 1);
      await stall; // a commit that does not come back (a WAL flush that takes its time)
      return n;
    });
  const stalled = unit(0, held);
  await new Promise((resolve) => setTimeout(resolve, 30)); // longer than a group may run alone
  try {
    const others = Promise.allSettled([1, 2, 3, 4].map((n) => unit(n)));
    const timeout = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5000).unref());
    const results = await Promise.race([others, timeout]);
    assert.notEqual(results, 'waited', 'the later units waited for the stalled group');
    if (results === 'waited') return;
    // The stalled unit's credit is taken only at its commit: the others find all three.
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    assert.equal((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.status, 402);
  } finally {
    release();
  }
  await assert.rejects(stalled, (error: { status?: number }) => error.status === 402);
  const jobs = await db.selectFrom('jobs').select('payload').where('type', '=', 'group.stall').execute();
  assert.equal(jobs.length, 3, 'only the units that got a credit wrote their job');
  const { credits } = await db.selectFrom('workspaces').select('credits').where('id', '=', 'w').executeTakeFirstOrThrow();
  assert.equal(Number(credits), 0);
});
