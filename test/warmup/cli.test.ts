// `postlane delivery warmup …` as an operator runs it: real processes, real database.
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
  env = {
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    DATA_DIR: database.dataDir,
    DELIVERY_WARMUP: JSON.stringify({ slow: { default: [10, 20], gmail: [5] } }),
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

test('delivery warmup start, list and stop', () => {
  const empty = postlane('delivery', 'warmup');
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /Nothing is warming up/);
  assert.equal(postlane('delivery', 'warmup', 'start').code, 2);
  const unknown = postlane('delivery', 'warmup', 'start', '--domain', 'news.example.com', '--schedule', 'fast');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /No schedule named fast/);

  const started = postlane('delivery', 'warmup', 'start', '--domain', 'News.Example.com', '--schedule', 'slow', '--json');
  assert.equal(started.code, 0, started.stderr);
  const view = JSON.parse(started.stdout);
  assert.deepEqual(
    [view.kind, view.subject, view.day, view.days, view.cap, view.next_day_cap],
    ['domain', 'news.example.com', 1, 2, 10, 20],
  );
  const address = postlane('delivery', 'warmup', 'start', '--address', '192.0.2.10');
  assert.equal(address.code, 0, address.stderr);
  assert.match(address.stdout, /Warming up address 192\.0\.2\.10: day 1 of 30, 50 messages per destination today/);
  assert.equal(postlane('delivery', 'warmup', 'start', '--address', '192.0.2.10').code, 2);

  const list = postlane('delivery', 'warmup');
  assert.equal(list.code, 0, list.stderr);
  assert.match(
    list.stdout,
    /domain news\.example\.com {2}day 1 of 2 \(schedule slow\) {2}cap 10\/destination today, 20 tomorrow, 0 deferred/,
  );
  assert.deepEqual(
    JSON.parse(postlane('delivery', 'warmup', '--json').stdout).data.map((w: { subject: string }) => w.subject),
    ['news.example.com', '192.0.2.10'],
  );

  const stopped = postlane('delivery', 'warmup', 'stop', 'news.example.com');
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /Stopped the warm-up of news\.example\.com \(wu_/);
  assert.equal(postlane('delivery', 'warmup', 'stop', 'news.example.com').code, 2);
});
