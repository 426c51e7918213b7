// Hot reads on SQLite share one read transaction within a turn of the event loop
// (src/platform/db/sqlite-adapter.ts). What a caller must still see: its own process's writes
// at once, another process's commits within a millisecond, and reads inside a transaction
// going through that transaction.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/database.ts';
import { preparedQuery } from '../../src/platform/db/prepared.ts';

let dir: string;
let handle: DatabaseHandle;
let other: DatabaseSync; // stands in for a second process (the CLI, a worker process)

const nameOf = preparedQuery((db, p: { id: string }) =>
  db
    .selectFrom('sr_items' as never)
    .select('name' as never)
    .where('id' as never, '=', p.id as never),
);
async function readName(id: string): Promise<string | undefined> {
  const rows = (await nameOf(handle.db, { id })) as Array<{ name: string }>;
  return rows[0]?.name;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'postlane-shared-read-'));
  const path = join(dir, 'db.sqlite');
  handle = openDatabase(`sqlite:${path}`);
  await handle.db.schema
    .createTable('sr_items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .execute();
  other = new DatabaseSync(path);
  other.exec('PRAGMA busy_timeout = 5000');
});

after(async () => {
  other.close();
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a write of this process is seen by the next read in the same turn', async () => {
  assert.equal(await readName('a'), undefined);
  await handle.db
    .insertInto('sr_items' as never)
    .values({ id: 'a', name: 'first' } as never)
    .execute();
  assert.equal(await readName('a'), 'first');
  await handle.db
    .updateTable('sr_items' as never)
    .set({ name: 'second' } as never)
    .where('id' as never, '=', 'a' as never)
    .execute();
  assert.equal(await readName('a'), 'second');
});

test("another connection's commit is seen on the next turn", async () => {
  assert.equal(await readName('b'), undefined);
  other.prepare('insert into sr_items (id, name) values (?, ?)').run('b', 'from elsewhere');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await readName('b'), 'from elsewhere');
});

test("another connection's commit is seen within a millisecond, even in one long turn", async () => {
  assert.equal(await readName('c'), undefined); // opens this turn's read transaction
  other.prepare('insert into sr_items (id, name) values (?, ?)').run('c', 'late');
  const started = performance.now();
  while (performance.now() - started < 2) {
    // a busy turn: no setImmediate runs
  }
  assert.equal(await readName('c'), 'late');
});

test("a transaction's reads see its own writes, and a rolled-back write is never seen", async () => {
  await assert.rejects(
    handle.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('sr_items' as never)
        .values({ id: 'd', name: 'uncommitted' } as never)
        .execute();
      const rows = (await nameOf(tx, { id: 'd' })) as Array<{ name: string }>;
      assert.equal(rows[0]?.name, 'uncommitted');
      throw new Error('roll back');
    }),
    /roll back/,
  );
  assert.equal(await readName('d'), undefined);
});

test('no read transaction is left open after the turn (a full checkpoint completes)', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  other.prepare('insert into sr_items (id, name) values (?, ?)').run('e', 'written');
  assert.equal(await readName('e'), 'written');
  await sleep(5);
  const [result] = other.prepare('PRAGMA wal_checkpoint(TRUNCATE)').all() as Array<{ busy: number }>;
  assert.equal(result.busy, 0, 'a reader still held a snapshot of the WAL');
});
