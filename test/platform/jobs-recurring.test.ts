// Recurring jobs on the engine under test: declared once, one instance however many processes
// start, the same row made due again after each run, and a process killed between a run and
// its re-scheduling leaves one instance that runs that period again (never a second chain).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { eventually, freshDatabase } from '../helpers/app.ts';
import { openDatabase, type Db } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { JobRunner } from '../../src/platform/jobs.ts';
import { nextDailyAt, recurringJob } from '../../src/platform/recurring-jobs.ts';
import { nowMs } from '../../src/platform/clock.ts';

const HOUR = 3_600_000;
let db: Db;
let database: Awaited<ReturnType<typeof freshDatabase>>;
let closeDb: () => Promise<void>;
before(async () => {
  database = await freshDatabase();
  const handle = openDatabase(database.url, { schema: database.schema });
  await migrateToLatest(handle.db);
  db = handle.db;
  closeDb = async () => {
    await handle.close();
    await database.drop();
  };
});
after(() => closeDb());

const instances = (name: string) => db.selectFrom('jobs').selectAll().where('type', '=', name).where('dead_at', 'is', null).execute();

test('nextDailyAt is the next HH:MM UTC strictly after the time', () => {
  const day = Date.UTC(2026, 5, 1);
  assert.equal(nextDailyAt('00:00', day), day + 24 * HOUR);
  assert.equal(nextDailyAt('00:00', day - 1), day);
  assert.equal(nextDailyAt('09:30', day + HOUR), day + 9.5 * HOUR);
  assert.equal(nextDailyAt('09:30', day + 10 * HOUR), day + 33.5 * HOUR);
  assert.throws(() => nextDailyAt('25:00', day));
  assert.throws(() => recurringJob({ name: 'neither', run: async () => {} }));
});

test('runners starting together make one instance, keyed by its name', async () => {
  const job = recurringJob({ name: 'recurring.start', dailyAt: '00:00', run: async () => {} });
  const runners = Array.from({ length: 6 }, () => new JobRunner(db, { pollMs: 50, handlers: [job] }));
  await Promise.all(runners.map((runner) => runner.start()));
  await Promise.all(runners.map((runner) => runner.stop()));
  const rows = await instances('recurring.start');
  assert.equal(rows.length, 1);
  assert.equal(rows[0].key, 'recurring.start');
  assert.equal(Number(rows[0].run_at), nextDailyAt('00:00', nowMs()), 'due at the next midnight');
});

test("a run makes the same row due again: every, or the run's own next time", async () => {
  const runs: number[] = [];
  let override: number | undefined;
  const job = recurringJob({
    name: 'recurring.every',
    every: HOUR,
    async run(current) {
      runs.push(current.id);
      if (override !== undefined) return { nextRunAt: override };
    },
  });
  const runner = new JobRunner(db, { pollMs: 20, handlers: [job] });
  await runner.start();
  try {
    await eventually(async () => runs.length === 1);
    let [row, ...more] = [] as Awaited<ReturnType<typeof instances>>;
    await eventually(async () => {
      [row, ...more] = await instances('recurring.every');
      return row.locked_by === null;
    });
    assert.equal(more.length, 0);
    assert.equal(row.id, runs[0], 'the same row');
    assert.ok(Math.abs(Number(row.run_at) - (nowMs() + HOUR)) < 60_000, 'due an hour later');
    assert.equal(row.attempts, 0);

    override = Math.floor(nowMs()) + 5 * HOUR;
    await db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', row.id).execute();
    await eventually(async () => runs.length === 2);
    await eventually(async () => Number((await instances('recurring.every'))[0].run_at) === override);
    assert.equal((await instances('recurring.every')).length, 1);
  } finally {
    await runner.stop();
  }
});

test('a failing run is retried, and the instance stays one', async () => {
  let calls = 0;
  const job = recurringJob({
    name: 'recurring.fail',
    every: HOUR,
    async run() {
      if (++calls === 1) throw new Error('transient');
    },
  });
  const runner = new JobRunner(db, { pollMs: 20, handlers: [job] });
  await runner.start();
  try {
    await eventually(async () => calls === 2, 10_000); // after its backoff (about a second)
    await eventually(async () => (await instances('recurring.fail'))[0].locked_by === null);
    const rows = await instances('recurring.fail');
    assert.equal(rows.length, 1);
    assert.ok(Number(rows[0].run_at) > nowMs() + HOUR - 60_000);
  } finally {
    await runner.stop();
  }
});

/** A worker process that runs `name` (lease 300 ms), writes a line, and is killed (SIGKILL)
 *  before the run returns: between the run and its re-scheduling. */
async function runAndDie(name: string, marks: string): Promise<NodeJS.Signals | null> {
  const root = join(import.meta.dirname, '..', '..');
  const href = (path: string) => JSON.stringify(pathToFileURL(join(root, path)).href);
  const code = `
    import { appendFileSync } from 'node:fs';
    import { openDatabase } from ${href('src/platform/db/database.ts')};
    import { JobRunner } from ${href('src/platform/jobs.ts')};
    import { recurringJob } from ${href('src/platform/recurring-jobs.ts')};
    const handle = openDatabase(process.env.CRASH_DB_URL, { schema: process.env.CRASH_DB_SCHEMA || undefined, poolSize: 2 });
    const job = recurringJob({ name: ${JSON.stringify(name)}, every: 3_600_000, leaseMs: 300, async run() {
      appendFileSync(process.env.CRASH_MARKS, 'ran\\n');
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => {});
    } });
    await new JobRunner(handle.db, { pollMs: 20, handlers: [job] }).start();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, CRASH_DB_URL: database.url, CRASH_DB_SCHEMA: database.schema ?? '', CRASH_MARKS: marks },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (d) => (errors += d));
  return new Promise((resolve, reject) =>
    child.once('exit', (code, signal) => (signal ? resolve(signal) : reject(new Error(`exited ${code}: ${errors}`)))),
  );
}

test('a process killed between a run and its re-scheduling leaves one instance, which runs again', async () => {
  const name = 'recurring.crash';
  const marks = join(database.dataDir, 'crash-marks');
  assert.equal(await runAndDie(name, marks), 'SIGKILL');
  assert.equal(readFileSync(marks, 'utf8'), 'ran\n');
  const [left, ...more] = await instances(name);
  assert.equal(more.length, 0);
  assert.notEqual(left.locked_by, null, 'still held by the killed worker');
  assert.ok(Number(left.run_at) <= nowMs(), 'not re-scheduled');

  // Two processes restart: both ensure the instance, one of them runs the killed period again.
  const runs: string[] = [];
  const job = (who: string) => recurringJob({ name, every: HOUR, run: async () => void runs.push(who) });
  const restarted = [new JobRunner(db, { pollMs: 20, handlers: [job('a')] }), new JobRunner(db, { pollMs: 20, handlers: [job('b')] })];
  await Promise.all(restarted.map((runner) => runner.start()));
  try {
    await eventually(async () => runs.length === 1 && (await instances(name))[0].locked_by === null, 10_000);
    const rows = await instances(name);
    assert.equal(rows.length, 1, 'one chain');
    assert.equal(rows[0].id, left.id);
    assert.ok(Math.abs(Number(rows[0].run_at) - (nowMs() + HOUR)) < 60_000, 'next period');
    assert.equal(runs.length, 1, 'the period ran once more, once');
  } finally {
    await Promise.all(restarted.map((runner) => runner.stop()));
  }
});
