// Deferred statements (PostgreSQL): a BEGIN or SAVEPOINT answered at once and sent with the
// connection's next query; pipelined writes likewise, with their values.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { freshMigratedDb, usingPostgres } from '../helpers/app.ts';
import type { Db } from '../../src/platform/db/database.ts';
import { deferred, isPipelinedWriteFailure, pipelinedWrite } from '../../src/platform/db/pg-client.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
});
after(() => close());

test('a deferred BEGIN opens the transaction of the next query, and a rollback undoes it', {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
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

test("the next query fails with the deferred statement's error, and the connection stays usable", {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
  await db.connection().execute(async (connection) => {
    await sql.raw(deferred('savepoint outside_any_transaction')).execute(connection);
    await assert.rejects(sql`select 1 as one`.execute(connection), /SAVEPOINT can only be used in transaction blocks/);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(connection);
    assert.equal(rows[0].one, 1);
  });
});

test('a deferred statement with no query after it goes out with the next one on the connection', {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
  await db.connection().execute(async (connection) => {
    await sql.raw(deferred('begin')).execute(connection);
    await sql.raw(deferred('savepoint unit_0')).execute(connection);
    await sql`rollback to savepoint unit_0`.execute(connection); // fails unless both went first
    await sql`commit`.execute(connection);
  });
});

test('a pipelined write goes out with the next query, which fails with its error, marked', {
  skip: !usingPostgres && 'PostgreSQL only',
}, async () => {
  await db.connection().execute(async (connection) => {
    await sql`create temporary table pipelined_probe (n int primary key)`.execute(connection);
    await sql.raw(deferred('begin')).execute(connection);
    await connection.executeQuery(CompiledQuery.raw(pipelinedWrite('insert into pipelined_probe values ($1)'), [1]));
    const { rows } = await sql<{ n: number }>`select n from pipelined_probe`.execute(connection);
    assert.deepEqual(rows, [{ n: 1 }], 'the write ran before the query it went out with');
    await connection.executeQuery(CompiledQuery.raw(pipelinedWrite('insert into pipelined_probe values ($1)'), [1]));
    const failure = await sql`commit`.execute(connection).then(
      () => null,
      (error: unknown) => error,
    );
    assert.match(String(failure), /duplicate key/);
    assert.equal(isPipelinedWriteFailure(failure), true);
    assert.equal(
      isPipelinedWriteFailure(await sql`select nope`.execute(connection).catch((error: unknown) => error)),
      false,
      "a query's own error is not marked",
    );
    await sql`rollback`.execute(connection);
    const after = await sql<{ n: number }>`select count(*)::int as n from pipelined_probe`.execute(connection);
    assert.equal(after.rows[0].n, 0, 'the failed COMMIT committed nothing');
  });
});
