// `postlane serve` restarts itself with its memory settings (src/main.ts): the V8 flags and
// glibc malloc variables, each unless the operator chose a value of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { freePort, freshDatabase, startChildApp, urlWithSchema } from './helpers/app.ts';

const onLinux = existsSync('/proc/self/environ');

// The runner's own environment is passed on: these tests assume it sets none of these variables.
async function servedWith(env: Record<string, string>): Promise<{ argv: string[]; env: Map<string, string> }> {
  const database = await freshDatabase();
  const child = await startChildApp({
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    DATA_DIR: database.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: String(await freePort()),
    SMTP_INBOUND_PORT: '0',
    ...env,
  });
  try {
    // The same pid: process.execve replaced the program, so /proc shows what the server runs with.
    const argv = readFileSync(`/proc/${child.process.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const pairs = readFileSync(`/proc/${child.process.pid}/environ`, 'utf8').split('\0').filter(Boolean);
    return { argv, env: new Map(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])) };
  } finally {
    await child.kill();
    await database.drop();
  }
}

test('a server runs with its V8 flags and malloc settings', { skip: !onLinux && 'reads /proc' }, async () => {
  const served = await servedWith({});
  for (const flag of ['--max-semi-space-size=4', '--heap-growing-percent=25', '--memory-saver-mode'])
    assert.ok(served.argv.includes(flag), `${flag} in ${served.argv.join(' ')}`);
  assert.equal(served.env.get('MALLOC_ARENA_MAX'), '2');
  assert.equal(served.env.get('MALLOC_MMAP_THRESHOLD_'), '16384');
  assert.equal(served.env.get('MALLOC_TRIM_THRESHOLD_'), '8388608');
});

test("the operator's own flags and malloc settings win", { skip: !onLinux && 'reads /proc' }, async () => {
  // NODE_OPTIONS takes only a few V8 flags; the young generation's size is one of them.
  const served = await servedWith({ NODE_OPTIONS: '--max-semi-space-size=16', MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536' });
  assert.ok(!served.argv.some((arg) => arg.startsWith('--max-semi-space-size')), served.argv.join(' '));
  assert.ok(served.argv.includes('--memory-saver-mode'), 'the flags the operator left alone are still added');
  assert.equal(served.env.get('MALLOC_ARENA_MAX'), '4');
  assert.equal(served.env.get('MALLOC_MMAP_THRESHOLD_'), '65536');
});
