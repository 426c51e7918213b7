// `postlane backup` while sends are being accepted, then `postlane restore`: every email
// accepted before the backup began is in the restored database (SQLite through its online
// backup API; PostgreSQL through pg_dump and pg_restore).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { DatabaseSync } from 'node:sqlite';
import { databaseUrlOf, freePort, startChildApp, usingPostgres } from '../helpers/app.ts';
import { startSendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

const root = join(import.meta.dirname, '..', '..');

function postlane(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'bin', 'postlane.js'), ...args],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

test('a backup taken while sends are accepted restores with every email accepted before it', async (t) => {
  const app = await startSendingApp({ roles: ['api'] });
  let closed = false;
  t.after(async () => {
    if (!closed) await app.close();
  });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 10_000, dailyLimit: 1_000_000, credits: 1_000_000 });
  const accepted: string[] = [];
  let stop = false;
  const sender = async (n: number) => {
    for (let i = 0; !stop; i++) {
      const response = await app.api.post('/v2/emails', {
        from: 'hello@acme.test',
        to: `r${n}-${i}@example.org`,
        subject: 'Backup',
        text: 'Hello',
      });
      assert.equal(response.status, 200, response.text);
      accepted.push(response.body.id);
    }
  };
  const senders = [sender(0), sender(1), sender(2), sender(3)];
  while (accepted.length < 50) await new Promise((r) => setTimeout(r, 20));

  const env = { DATABASE_URL: await databaseUrlOf(app), DATA_DIR: app.config.dataDir };
  const backupDir = mkdtempSync(join(tmpdir(), 'postlane-backup-'));
  t.after(() => rmSync(backupDir, { recursive: true, force: true }));
  const file = join(backupDir, usingPostgres ? 'backup.dump' : 'backup.db');
  const before = [...accepted];
  const backup = await postlane(env, 'backup', '--out', file, '--json');
  const during = accepted.length - before.length;
  stop = true;
  await Promise.all(senders);
  assert.equal(backup.code, 0, backup.stderr);
  assert.equal(JSON.parse(backup.stdout).file, file);
  assert.ok(during > 0, 'sends were accepted while the backup ran');

  if (!usingPostgres) {
    const restoredPath = join(app.config.dataDir, 'restored.db');
    const restore = await postlane({ ...env, DATABASE_URL: `sqlite:${restoredPath}` }, 'restore', file);
    assert.equal(restore.code, 0, restore.stderr);
    const restored = new DatabaseSync(restoredPath, { readOnly: true });
    const ids = new Set((restored.prepare('select id from emails').all() as Array<{ id: string }>).map((row) => row.id));
    restored.close();
    assert.deepEqual(
      before.filter((id) => !ids.has(id)),
      [],
      'every email accepted before the backup is restored',
    );
    // A server on the restored database serves them.
    const port = await freePort();
    const server = await startChildApp(
      {
        ...env,
        DATABASE_URL: `sqlite:${restoredPath}`,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        SMTP_SUBMISSION_PORT: '0',
        SMTP_INBOUND_PORT: '0',
        DOCTOR_AT_START: 'false',
      },
      ['serve', '--role', 'api'],
    );
    try {
      const response = await fetch(`${server.url}/v2/emails/${before[0]}`, { headers: { authorization: `Bearer ${app.key}` } });
      assert.equal(response.status, 200);
    } finally {
      await server.kill();
    }
    // Not a backup: refused, the database untouched.
    const bogus = await postlane({ ...env, DATABASE_URL: `sqlite:${restoredPath}` }, 'restore', join(root, 'package.json'));
    assert.equal(bogus.code, 2);
    assert.match(bogus.stderr, /cannot be restored|not a Postlane database|damaged/);
    return;
  }

  // PostgreSQL: the schema is dropped with the app, then restored from the dump.
  const schema = /search_path=(\w+)/.exec(decodeURIComponent(env.DATABASE_URL))![1];
  await app.close();
  closed = true;
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  t.after(async () => {
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  });
  const gone = await client.query(`select 1 from information_schema.schemata where schema_name = $1`, [schema]);
  assert.equal(gone.rowCount, 0, 'the schema is gone');
  const restore = await postlane(env, 'restore', file);
  assert.equal(restore.code, 0, restore.stderr);
  const { rows } = await client.query(`select id from ${schema}.emails`);
  const ids = new Set(rows.map((row: { id: string }) => row.id));
  assert.deepEqual(
    before.filter((id) => !ids.has(id)),
    [],
    'every email accepted before the backup is restored',
  );
});
