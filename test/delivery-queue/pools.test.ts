// IP pool assignments (docs/delivery.md, "IP pools"): which pool a delivery leaves from, and
// `postlane pools …` as an operator runs it (real processes, real database).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { freshDatabase, urlWithSchema } from '../helpers/app.ts';
import { resolvePool } from '../../src/resources/delivery-queue/pools.ts';
import { parseIpPools } from '../../src/mail/ip-pools.ts';

const POOLS = {
  tx: { default: true, addresses: [{ address: '127.0.0.2', helo: 'tx.mta.test' }] },
  bulk: { addresses: ['127.0.0.3', '127.0.0.4'] },
};

test('a workspace kind wins over its all, then every workspace kind and all, then the default pool', () => {
  const pools = parseIpPools(JSON.stringify({ ...POOLS, spare: { addresses: ['127.0.0.5'] } }), 'h');
  const row = (workspace_id: string | null, kind: string, pool: string) => ({ workspace_id, kind, pool });
  const rows = [row('ws_a', 'bulk', 'bulk'), row('ws_a', 'all', 'spare'), row(null, 'bulk', 'bulk'), row('ws_c', 'all', 'removed')];
  assert.deepEqual(resolvePool(rows, pools, 'ws_a', 'bulk'), { pool: 'bulk', from: 'workspace' });
  assert.deepEqual(resolvePool(rows, pools, 'ws_a', 'transactional'), { pool: 'spare', from: 'workspace' });
  assert.deepEqual(resolvePool(rows, pools, 'ws_b', 'bulk'), { pool: 'bulk', from: 'server' });
  assert.deepEqual(resolvePool(rows, pools, 'ws_b', 'transactional'), { pool: 'tx', from: 'default' });
  assert.deepEqual(
    resolvePool(rows, pools, 'ws_c', 'transactional'),
    { pool: 'tx', from: 'default' },
    'a pool no longer configured is skipped',
  );
  assert.deepEqual(resolvePool([], parseIpPools('', 'h'), 'ws_a', 'bulk'), { pool: null, from: null }, 'no pools: the OS chooses');
});

const root = join(import.meta.dirname, '..', '..');
let env: Record<string, string>;
let drop: () => Promise<void>;

before(async () => {
  const database = await freshDatabase();
  env = {
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    DATA_DIR: database.dataDir,
    DELIVERY_IP_POOLS: JSON.stringify(POOLS),
  };
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

test('postlane pools lists the pools; pools assign sets every workspace or one', () => {
  const listed = postlane('pools');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^tx \(default\): 127\.0\.0\.2 as tx\.mta\.test$/m);
  assert.match(listed.stdout, /^bulk: 127\.0\.0\.3 as localhost, 127\.0\.0\.4 as localhost$/m);

  const refused = postlane('pools', 'assign', '--bulk', 'nope');
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /No IP pool named "nope"; configured: tx, bulk/);
  assert.equal(postlane('pools', 'assign').code, 2);
  const noWorkspace = postlane('pools', 'assign', '--workspace', 'wsp_missing', '--all', 'tx');
  assert.equal(noWorkspace.code, 2);
  assert.match(noWorkspace.stderr, /no workspace wsp_missing/);

  const every = postlane('pools', 'assign', '--bulk', 'bulk', '--json');
  assert.equal(every.code, 0, every.stderr);
  assert.deepEqual(JSON.parse(every.stdout), { workspace_id: null, all: null, transactional: null, bulk: 'bulk' });

  const view = JSON.parse(postlane('pools', '--json').stdout);
  assert.deepEqual(view.every_workspace, { all: null, transactional: null, bulk: 'bulk' });
  assert.deepEqual(view.effective, { transactional: { pool: 'tx', from: 'default' }, bulk: { pool: 'bulk', from: 'server' } });

  const cleared = postlane('pools', 'assign', '--bulk', 'none', '--json');
  assert.deepEqual(JSON.parse(cleared.stdout).bulk, null);
});
