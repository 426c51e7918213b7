// Deferred statements (PostgreSQL): a BEGIN or SAVEPOINT answered at once and sent with the
// connection's next query.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshMigratedDb, usingPostgres } from '../helpers/app.ts';
import type { Db } from '../../src/platform/db/database.ts';
import { deferred } from '../../src/platform/db/pg-client.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
});
after(() => close());

test('a deferred BEGIN opens the transaction of the next query, and a rollback undoes it', { skip: !usingPostgres && 'PostgreSQL only' }, async () => {
  await db.connection().execute(async (connection) => {
    await sql.raw(deferred('begin')).execute(connection);
    const { rows } = await sql<{ open: boolean }>`select now() = statement_timestamp() as open`.execute(connection);
    assert.equal(rows[0].open, false, 'in a transaction, now() is the BEGIN time, not the statement time');
    await sql`create temporary table deferred_probe (n int)`.execute(connection);
    await sql`insert into deferred_probe values (1)`.execute(connection);
    await sql`rollback`.execute(connection);
    await assert.rejects(sql`select * from deferred_probe`.execute(connection), /does not exist/, 'rolled back with the transaction');
  });
});

test('the next query fails with the deferred statement\'s error, and the connection stays usable', { skip: !usingPostgres && 'PostgreSQL only' }, async () => {
  await db.connection().execute(async (connection) => {
    await sql.raw(deferred('savepoint outside_any_transaction')).execute(connection);
    await assert.rejects(sql`select 1 as one`.execute(connection), /SAVEPOINT can only be used in transaction blocks/);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(connection);
    assert.equal(rows[0].one, 1);
  });
});

test('a deferred statement with no query after it goes out with the next one on the connection', { skip: !usingPostgres && 'PostgreSQL only' }, async () => {
  await db.connection().execute(async (connection) => {
    await sql.raw(deferred('begin')).execute(connection);
    await sql.raw(deferred('savepoint unit_0')).execute(connection);
    await sql`rollback to savepoint unit_0`.execute(connection); // fails unless both went first
    await sql`commit`.execute(connection);
  });
});
