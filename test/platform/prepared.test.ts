import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshMigratedDb } from '../helpers/app.ts';
import type { Db } from '../../src/platform/db/database.ts';
import { preparedQuery } from '../../src/platform/db/prepared.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
});
after(() => close());

const insertWorkspace = preparedQuery((d, p: { id: string; name: string; credits: number }) =>
  d.insertInto('workspaces').values({ id: p.id, name: p.name, plan: 'pro', credits: p.credits, verified: 1, members: '[]', features: '[]', send_rate: 2, daily_limit: 10, created_at: 'c', updated_at: 'u' }));
const spend = preparedQuery((d, p: { id: string; n: number }) =>
  d.updateTable('workspaces').set((eb) => ({ credits: eb('credits', '-', p.n) })).where('id', '=', p.id).where('credits', '>=', p.n).returning('credits'));
const plain = <T extends object>(rows: T[]) => rows.map((row) => ({ ...row }));
const byNameQuery = preparedQuery((d, p: { name: string }) => d.selectFrom('workspaces').select(['id', 'credits']).where('name', '=', p.name).where('plan', '=', 'pro'));
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
  await assert.rejects(db.transaction().execute(async (tx) => {
    await spend(tx, { id: 'w1', n: 1 });
    throw new Error('abort');
  }));
  assert.deepEqual(await byName(db, { name: 'one' }), [{ id: 'w1', credits: 2 }]);
  const { rows } = await sql<{ n: number }>`select count(*) as n from workspaces`.execute(db);
  assert.equal(Number(rows[0].n), 2);
});
