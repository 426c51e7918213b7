// `postlane delivery …` as an operator runs it: real processes, real database.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { freshDatabase, urlWithSchema } from '../helpers/app.ts';

const root = join(import.meta.dirname, '..', '..');
let env: Record<string, string>;
let drop: () => Promise<void>;

before(async () => {
  const database = await freshDatabase();
  env = { DATABASE_URL: urlWithSchema(database.url, database.schema), DATA_DIR: database.dataDir };
  drop = database.drop;
});
after(() => drop());

function postlane(...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, 'bin', 'postlane.js'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('delivery destinations, hold, holds and release', () => {
  const empty = postlane('delivery', 'destinations', '--json');
  assert.equal(empty.code, 0, empty.stderr);
  assert.deepEqual(JSON.parse(empty.stdout), { data: [] });

  const refused = postlane('delivery', 'hold');
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /needs --destination or --domain/);

  const hold = postlane('delivery', 'hold', '--destination', 'Gmail', '--reason', 'warm-up', '--json');
  assert.equal(hold.code, 0, hold.stderr);
  const created = JSON.parse(hold.stdout);
  assert.deepEqual(
    [created.object, created.workspace_id, created.destination, created.reason],
    ['delivery_hold', null, 'gmail', 'warm-up'],
  );
  assert.deepEqual(
    JSON.parse(postlane('delivery', 'holds', '--json').stdout).data.map((h: { id: string }) => h.id),
    [created.id],
  );

  const released = postlane('delivery', 'release', created.id);
  assert.equal(released.code, 0, released.stderr);
  assert.match(released.stdout, /Released hold_/);
  assert.deepEqual(JSON.parse(postlane('delivery', 'holds', '--json').stdout).data, []);
  assert.equal(postlane('delivery', 'release', created.id).code, 2);
});
