import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshMigratedDb } from '../helpers/app.ts';
import { dialectOf, runInTransactionNow, type Db } from '../../src/platform/db/database.ts';
import { prefetch, prefetchForEach, preparedQuery, useFetchedAhead } from '../../src/platform/db/prepared.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
});
after(() => close());

const insertWorkspace = preparedQuery((d, p: { id: string; name: string; credits: number }) =>
  d.insertInto('workspaces').values({
    id: p.id,
    name: p.name,
    plan: 'pro',
    credits: p.credits,
    verified: 1,
    members: '[]',
    features: '[]',
    send_rate: 2,
    daily_limit: 10,
    created_at: 'c',
    updated_at: 'u',
  }),
);
const spend = preparedQuery((d, p: { id: string; n: number }) =>
  d
    .updateTable('workspaces')
    .set((eb) => ({ credits: eb('credits', '-', p.n) }))
    .where('id', '=', p.id)
    .where('credits', '>=', p.n)
    .returning('credits'),
);
const plain = <T extends object>(rows: T[]) => rows.map((row) => ({ ...row }));
const byNameQuery = preparedQuery((d, p: { name: string }) =>
  d.selectFrom('workspaces').select(['id', 'credits']).where('name', '=', p.name).where('plan', '=', 'pro'),
);
const byName = async (d: Db, p: { name: string }) => plain(await byNameQuery(d, p));

test('prepared queries bind fresh values on every call and keep literal values', async () => {
  await insertWorkspace(db, { id: 'w1', name: 'one', credits: 5 });
  await insertWorkspace(db, { id: 'w2', name: 'two', credits: 1 });
  assert.deepEqual(await byName(db, { name: 'one' }), [{ id: 'w1', credits: 5 }]);
  assert.deepEqual(await byName(db, { name: 'two' }), [{ id: 'w2', credits: 1 }]);
  assert.deepEqual(await byName(db, { name: 'three' }), []);
  assert.deepEqual(plain(await spend(db, { id: 'w1', n: 3 })), [{ credits: 2 }]);
  assert.deepEqual(await spend(db, { id: 'w1', n: 3 }), [], 'the condition uses the bound value too');
  assert.deepEqual(plain(await spend(db, { id: 'w2', n: 1 })), [{ credits: 0 }]);
});

test('prepared queries run inside transactions and roll back with them', async () => {
  await assert.rejects(
    db.transaction().execute(async (tx) => {
      await spend(tx, { id: 'w1', n: 1 });
      throw new Error('abort');
    }),
  );
  assert.deepEqual(await byName(db, { name: 'one' }), [{ id: 'w1', credits: 2 }]);
  const { rows } = await sql<{ n: number }>`select count(*) as n from workspaces`.execute(db);
  assert.equal(Number(rows[0].n), 2);
});

test('inside a transaction, prepared statements and Kysely queries see each other in order, and a savepoint rollback undoes them', async () => {
  await db.transaction().execute(async (tx) => {
    await insertWorkspace(tx, { id: 'w3', name: 'three', credits: 10 });
    const built = await tx.selectFrom('workspaces').select('credits').where('id', '=', 'w3').executeTakeFirst();
    assert.equal(built?.credits, 10, 'a Kysely query sees the prepared insert');
    await tx.updateTable('workspaces').set({ credits: 7 }).where('id', '=', 'w3').execute();
    assert.deepEqual(await byName(tx, { name: 'three' }), [{ id: 'w3', credits: 7 }], 'a prepared read sees the Kysely update');
    await sql`savepoint unit_0`.execute(tx);
    assert.deepEqual(plain(await spend(tx, { id: 'w3', n: 5 })), [{ credits: 2 }]);
    await sql`rollback to savepoint unit_0`.execute(tx);
    await sql`release savepoint unit_0`.execute(tx);
    assert.deepEqual(await byName(tx, { name: 'three' }), [{ id: 'w3', credits: 7 }]);
    // On SQLite the statements above ran on the connection directly, not through Kysely's executor.
    const direct = runInTransactionNow(tx, 'select 1 as one', []);
    assert.deepEqual(direct && plain(direct as object[]), dialectOf(db) === 'sqlite' ? [{ one: 1 }] : null);
  });
  assert.equal(runInTransactionNow(db, 'select 1 as one', []), null, 'outside a transaction it never runs');
  assert.deepEqual(await byName(db, { name: 'three' }), [{ id: 'w3', credits: 7 }]);
  await db.deleteFrom('workspaces').where('id', '=', 'w3').execute();
});

test('prefetched reads answer once with the rows a plain read returns, in one statement on PostgreSQL', async () => {
  await insertWorkspace(db, { id: 'w9', name: 'nine', credits: 2 ** 40 }); // bigint beyond int4
  await db.insertInto('send_daily_counts').values({ workspace_id: 'w9', day: '2026-11-27', units: 7 }).execute();
  const counters = preparedQuery((d, p: { id: string; day: string }) =>
    d.selectNoFrom((eb) => [
      eb.selectFrom('send_daily_counts').select('units').where('workspace_id', '=', p.id).where('day', '=', p.day).as('day'),
    ]),
  );
  const workspace = preparedQuery((d, p: { id: string }) => d.selectFrom('workspaces').selectAll().where('id', '=', p.id));
  const expected = {
    workspace: plain(await workspace(db, { id: 'w9' })),
    counters: plain(await counters(db, { id: 'w9', day: '2026-11-27' })),
  };
  await db.transaction().execute(async (tx) => {
    await prefetch(tx, [
      { query: workspace, params: { id: 'w9' } },
      { query: counters, params: { id: 'w9', day: '2026-11-27' } },
    ]);
    // A write after the prefetch: on PostgreSQL the next read still answers from the prefetch
    // (SQLite prefetches nothing); asked again, or for other values, it reads afresh.
    await tx.updateTable('workspaces').set({ name: 'nine!' }).where('id', '=', 'w9').execute();
    const first = plain(await workspace(tx, { id: 'w9' }));
    if (dialectOf(tx) === 'postgres') assert.deepEqual(first, expected.workspace);
    else assert.deepEqual(first, [{ ...expected.workspace[0], name: 'nine!' }]);
    assert.equal((await workspace(tx, { id: 'w9' }))[0].name, 'nine!', 'answered from the prefetch only once');
    assert.deepEqual(plain(await counters(tx, { id: 'w9', day: '2026-11-28' })), [{ day: null }], 'other values: a read of its own');
    assert.deepEqual(plain(await counters(tx, { id: 'w9', day: '2026-11-27' })), expected.counters);
  });
  assert.equal(expected.workspace[0].credits, 2 ** 40);
  assert.deepEqual(expected.counters, [{ day: 7 }]);
});

test('units of a group reading the same rows each get their own copy, and other values their own rows', async () => {
  await insertWorkspace(db, { id: 'g1', name: 'group one', credits: 11 });
  await insertWorkspace(db, { id: 'g2', name: 'group two', credits: 22 });
  const workspace = preparedQuery((d, p: { id: string }) => d.selectFrom('workspaces').select(['id', 'credits']).where('id', '=', p.id));
  const readsOf = (id: string) => [{ query: workspace, params: { id } }];
  await db.transaction().execute(async (tx) => {
    const ahead = await prefetchForEach(tx, [readsOf('g1'), readsOf('g2'), readsOf('g1')]);
    const answers = [];
    for (const [i, id] of ['g1', 'g2', 'g1'].entries()) {
      useFetchedAhead(tx, ahead[i]);
      const rows = await workspace(tx, { id });
      answers.push(plain(rows));
      (rows[0] as { credits: number }).credits = -1; // a unit changing its rows changes no other unit's
    }
    assert.deepEqual(answers, [[{ id: 'g1', credits: 11 }], [{ id: 'g2', credits: 22 }], [{ id: 'g1', credits: 11 }]]);
  });
});
