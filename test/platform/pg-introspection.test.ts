// PostgreSQL: a Postlane database lives in its connection's schema, whatever the database's
// other schemas hold or whoever drops them meanwhile (other tenants; parallel tests dropping
// their schemas made migrations fail with `schema "t_…" does not exist`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { freshDatabase, usingPostgres } from '../helpers/app.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';

const skip = usingPostgres ? false : 'PostgreSQL only (set TEST_DATABASE_URL)';

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

test("introspection sees the connection's own schema only", { skip }, async (t) => {
  const ours = await freshDatabase();
  const other = await freshDatabase();
  const handle = openDatabase(ours.url, { schema: ours.schema });
  t.after(async () => {
    await handle.close();
    await ours.drop();
    await other.drop();
  });
  await admin((c) => c.query(`create table ${other.schema}.elsewhere (id serial primary key)`));
  await handle.db.schema
    .createTable('here')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .execute();
  const tables = await handle.db.introspection.getTables();
  assert.deepEqual(
    tables.map((table) => [table.schema, table.name]),
    [[ours.schema, 'here']],
  );
  assert.deepEqual(
    tables[0].columns.map((c) => [c.name, c.dataType, c.isAutoIncrementing, c.isNullable]),
    [
      ['id', 'int4', true, false],
      ['name', 'text', false, true],
    ],
  );
});

test('migrations succeed while other schemas are being created and dropped', { skip }, async (t) => {
  let churning = true;
  const churn = (async () => {
    for (let i = 0; churning; i++) {
      const name = `churn_${process.pid}_${i}`;
      await admin(async (c) => {
        await c.query(`create schema ${name}`);
        for (let n = 0; n < 5; n++) await c.query(`create table ${name}.t${n} (id serial primary key, a text, b text)`);
        await c.query(`drop schema ${name} cascade`);
      });
    }
  })();
  const fresh = await Promise.all(Array.from({ length: 6 }, () => freshDatabase()));
  t.after(async () => {
    for (const database of fresh) await database.drop();
  });
  try {
    for (const database of fresh) {
      const handle = openDatabase(database.url, { schema: database.schema });
      try {
        assert.ok((await migrateToLatest(handle.db)).length > 0);
      } finally {
        await handle.close();
      }
    }
  } finally {
    churning = false;
    await churn;
  }
});
