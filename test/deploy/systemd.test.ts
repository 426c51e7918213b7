// deploy/postlane.service as systemd reads it: `systemd-analyze verify` accepts it without a
// warning (its paths pointed at this checkout), and it keeps the hardening docs/deploying.md
// promises. Skipped where systemd-analyze is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const unit = readFileSync(join(root, 'deploy', 'postlane.service'), 'utf8');
const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path));

function verify(text: string): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-unit-'));
  try {
    const file = join(dir, 'postlane.service');
    writeFileSync(file, text.replaceAll('/opt/postlane', root));
    const result = spawnSync(analyze!, ['verify', file], { encoding: 'utf8', timeout: 60_000 });
    return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('systemd-analyze verify accepts deploy/postlane.service without a warning', {
  skip: analyze ? false : 'systemd-analyze is not installed here',
}, () => {
  const result = verify(unit);
  assert.equal(result.status, 0, result.output);
  assert.equal(result.output, '', 'no warnings');
  // The check can fail: a unit whose program does not exist is refused.
  const broken = verify(unit.replace('/node_modules/.bin/node', '/no-such-node'));
  assert.notEqual(broken.status, 0, broken.output);
});

test('the unit binds low ports with one capability and keeps the system read-only but for the data directory', () => {
  const directives = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) directives.set(match[1], [...(directives.get(match[1]) ?? []), match[2]]);
  }
  const one = (name: string) => directives.get(name)?.at(-1);
  assert.equal(one('AmbientCapabilities'), 'CAP_NET_BIND_SERVICE');
  assert.equal(one('CapabilityBoundingSet'), 'CAP_NET_BIND_SERVICE');
  assert.equal(one('NoNewPrivileges'), 'yes');
  assert.equal(one('ProtectSystem'), 'strict');
  assert.equal(one('PrivateTmp'), 'yes');
  assert.equal(one('ProtectHome'), 'yes');
  assert.match(one('ReadWritePaths')!, /\/var\/lib\/postlane/);
  assert.match(one('Environment')!, /DATA_DIR=\/var\/lib\/postlane/);
  assert.notEqual(one('User'), 'root');
  assert.match(one('ExecStart')!, /src\/main\.ts serve$/);
  // Longer than the drain's bound (SHUTDOWN_TIMEOUT_MS 10 s plus 5 s of grace), so systemd never kills a draining server.
  assert.ok(Number(one('TimeoutStopSec')) > 15);
});
