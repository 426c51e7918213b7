// The administration CLI and `serve` as an operator runs them: real processes, real database.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { freshDatabase, startChildApp, freePort, apiClient, urlWithSchema } from './helpers/app.ts';

const root = join(import.meta.dirname, '..');
let env: Record<string, string>;
let drop: () => Promise<void>;

before(async () => {
  const database = await freshDatabase();
  // The CLI reads DATABASE_URL; on PostgreSQL the test schema goes in the connection options.
  const url = urlWithSchema(database.url, database.schema);
  env = { DATABASE_URL: url, DATA_DIR: database.dataDir, SMTP_SUBMISSION_PORT: '0', SMTP_INBOUND_PORT: '0', HTTP_HOST: '127.0.0.1' };
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

test('migrate applies the migrations and is idempotent', () => {
  const first = postlane('migrate');
  assert.equal(first.code, 0, first.stderr);
  const second = postlane('migrate');
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /up to date/);
});

test('serve: the first start creates the default workspace and prints its key once', async () => {
  const port = await freePort();
  const server = await startChildApp({ ...env, HTTP_PORT: String(port) });
  let key: string;
  try {
    const match = /secret_[A-Za-z0-9]{32}/.exec(server.output());
    assert.ok(match, `a key is printed:\n${server.output()}`);
    key = match[0];
    const list = await apiClient(server.url, key).get('/v2/api-keys');
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].scope, 'full');
  } finally {
    await server.kill();
  }
  // SIGTERM is a clean shutdown: everything closed, exit code 0 (a service manager reads it).
  assert.equal(server.process.exitCode, 0, `serve exits 0 on SIGTERM:\n${server.output()}`);
  const again = await startChildApp({ ...env, HTTP_PORT: String(port) });
  try {
    assert.doesNotMatch(again.output(), /secret_/, 'a second start prints no key');
    assert.equal((await apiClient(again.url, key!).get('/v2/api-keys')).status, 200, 'the key survives restarts');
  } finally {
    await again.kill();
  }
});

test('workspace create --json prints the workspace and a working key', async () => {
  const created = postlane(
    'workspace',
    'create',
    '--name',
    'Acme',
    '--plan',
    'pro',
    '--credits',
    '50',
    '--verified',
    '--member',
    'Owner@Acme.test',
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  const out = JSON.parse(created.stdout);
  assert.deepEqual(Object.keys(out), ['workspace', 'api_key']);
  assert.deepEqual(Object.keys(out.workspace), ['id', 'name', 'plan']);
  assert.equal(out.workspace.name, 'Acme');
  assert.equal(out.workspace.plan, 'pro');
  assert.match(out.api_key, /^secret_[A-Za-z0-9]{32}$/);

  const list = JSON.parse(postlane('workspace', 'list', '--json').stdout);
  const acme = list.find((w: { id: string }) => w.id === out.workspace.id);
  assert.equal(acme.credits, 50);
  assert.equal(acme.verified, true);
  assert.deepEqual(acme.members, ['owner@acme.test']);
  assert.equal(acme.send_rate, 2);
  assert.equal(acme.daily_limit, 5000);

  const updated = postlane(
    'workspace',
    'update',
    out.workspace.id,
    '--add-credits',
    '25',
    '--plan',
    'business',
    '--verified',
    'false',
    '--member',
    'second@acme.test',
    '--send-rate',
    '10',
    '--daily-limit',
    '20000',
    '--feature',
    'mjml',
    '--json',
  );
  assert.equal(updated.code, 0, updated.stderr);
  const after = JSON.parse(updated.stdout);
  assert.equal(after.credits, 75);
  assert.equal(after.plan, 'business');
  assert.equal(after.verified, false);
  assert.deepEqual(after.members, ['owner@acme.test', 'second@acme.test']);
  assert.equal(after.send_rate, 10);
  assert.equal(after.daily_limit, 20000);
  assert.deepEqual(after.features, ['mjml']);

  const port = await freePort();
  const server = await startChildApp({ ...env, HTTP_PORT: String(port) });
  try {
    const keys = await apiClient(server.url, out.api_key).get('/v2/api-keys');
    assert.equal(keys.status, 200);
    assert.deepEqual(
      keys.body.data.map((k: { name: string }) => k.name),
      ['Default key'],
    );
  } finally {
    await server.kill();
  }
});

test('CLI errors go to stderr with a non-zero exit', () => {
  const badPlan = postlane('workspace', 'create', '--name', 'x', '--plan', 'gold');
  assert.equal(badPlan.code, 2);
  assert.match(badPlan.stderr, /plan must be one of payg, pro, business, custom/);
  assert.equal(badPlan.stdout, '');
  const noName = postlane('workspace', 'create');
  assert.equal(noName.code, 2);
  assert.match(noName.stderr, /--name is required/);
  const unknown = postlane('workspace', 'update', 'wsp_nope', '--credits', '5');
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /no workspace with id wsp_nope/);
  const badCommand = postlane('frobnicate');
  assert.equal(badCommand.code, 2);
  assert.match(badCommand.stderr, /unknown command "frobnicate"/);
});
