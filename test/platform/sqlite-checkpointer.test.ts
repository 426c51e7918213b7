// The server's SQLite WAL is copied into the database file by a background thread, not by
// the commit that happens to cross SQLite's threshold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../src/platform/db/database.ts';
import { eventually } from '../helpers/app.ts';

async function writeMegabytes(backgroundCheckpoints: boolean): Promise<{ path: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-checkpoint-'));
  const path = join(dir, 'db.sqlite');
  const handle = openDatabase(`sqlite:${path}`, { backgroundCheckpoints });
  await sql`create table blobs (id integer primary key, data text not null)`.execute(handle.db);
  // 200 commits of 8 KB: ~1.7 MB in the WAL, below SQLite's default threshold (1,000 pages) and our fallback.
  for (let i = 0; i < 200; i++) await sql`insert into blobs (data) values (${'x'.repeat(8192)})`.execute(handle.db);
  return {
    path,
    async close() {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('with background checkpoints, committed pages reach the database file without a checkpoint in any commit', async () => {
  const db = await writeMegabytes(true);
  try {
    await eventually(async () => statSync(db.path).size > 1_600_000, 5000);
  } finally {
    await db.close();
  }
});

test('without them (CLI commands), SQLite checkpoints only at its own threshold', async () => {
  const db = await writeMegabytes(false);
  try {
    await new Promise((resolve) => setTimeout(resolve, 600));
    // The pages are still in the WAL only.
    assert.ok(statSync(db.path).size < 1_000_000, `database file is ${statSync(db.path).size} bytes`);
    assert.ok(statSync(`${db.path}-wal`).size > 1_600_000);
  } finally {
    await db.close();
  }
});
