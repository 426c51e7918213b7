// transact: PostgreSQL's deadlock victims and find-then-insert races run again, and succeed.
// SQLite runs one writer at a time, so neither can happen there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshMigratedDb, usingPostgres } from '../helpers/app.ts';
import { transact } from '../../src/platform/db/transact.ts';

const skip = !usingPostgres && 'PostgreSQL only: SQLite runs one writer at a time';

/** Resolves when both sides have reached it (once); later calls pass straight through. */
function barrier() {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return async () => {
    if (++arrived === 2) open();
    if (arrived <= 2) await Promise.race([opened, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  };
}

test('two transactions that lock two rows in opposite orders both commit: the deadlock victim runs again', { skip }, async () => {
  const { db, close } = await freshMigratedDb();
  try {
    await sql`create table lock_pair (id int primary key, hits int not null)`.execute(db);
    await sql`insert into lock_pair values (1, 0), (2, 0)`.execute(db);
    const bump = (id: number) => sql`update lock_pair set hits = hits + 1 where id = ${id}`;
    const crossing = (meet: () => Promise<void>, first: number, second: number) => async (tx: any) => {
      await bump(first).execute(tx);
      await meet();
      await bump(second).execute(tx);
    };
    // Without transact, one side is refused with PostgreSQL's deadlock error.
    const plainMeet = barrier();
    const plain = await Promise.allSettled([
      db.transaction().execute(crossing(plainMeet, 1, 2)),
      db.transaction().execute(crossing(plainMeet, 2, 1)),
    ]);
    assert.deepEqual(plain.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok')).sort(), ['40P01', 'ok']);

    await sql`update lock_pair set hits = 0`.execute(db);
    const meet = barrier();
    await Promise.all([transact(db, crossing(meet, 1, 2)), transact(db, crossing(meet, 2, 1))]);
    const rows = await sql<{ id: number; hits: number }>`select id, hits from lock_pair order by id`.execute(db);
    assert.deepEqual(
      rows.rows,
      [
        { id: 1, hits: 2 },
        { id: 2, hits: 2 },
      ],
      'each transaction applied once',
    );
  } finally {
    await close();
  }
});

test("two requests that both find no row and insert it: the second runs again and finds the first one's", { skip }, async () => {
  const { db, close } = await freshMigratedDb();
  try {
    await sql`create table named_once (id serial primary key, name text unique not null)`.execute(db);
    const meet = barrier();
    const findOrCreate = async (tx: any) => {
      const found = await sql<{ id: number }>`select id from named_once where name = 'x'`.execute(tx);
      if (found.rows[0]) return found.rows[0].id;
      await meet();
      const made = await sql<{ id: number }>`insert into named_once (name) values ('x') returning id`.execute(tx);
      return made.rows[0].id;
    };
    const ids = await Promise.all([transact(db, findOrCreate), transact(db, findOrCreate)]);
    assert.equal(ids[0], ids[1], 'both see the same row');
    const count = await sql<{ n: string }>`select count(*) as n from named_once`.execute(db);
    assert.equal(Number(count.rows[0].n), 1);
  } finally {
    await close();
  }
});
