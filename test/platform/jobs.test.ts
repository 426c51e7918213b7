// The durable queue on the engine under test: delayed jobs, leases that expire (a crashed
// worker's job runs again), retries with backoff, dead jobs, and concurrent claimers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshMigratedDb, eventually } from '../helpers/app.ts';
import type { Db } from '../../src/platform/db/database.ts';
import {
  backoffMs,
  claimDueJobs,
  completeJob,
  enqueueJob,
  failJob,
  jobHandler,
  JobRunner,
  RetryJobAt,
  type Job,
} from '../../src/platform/jobs.ts';
import { nowMs } from '../../src/platform/clock.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
});
after(() => close());

async function jobRow(id: number) {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

test('a job enqueued in a rolled-back transaction does not exist', async () => {
  await assert.rejects(
    db.transaction().execute(async (tx) => {
      await enqueueJob(tx, 'rollback.test', { a: 1 });
      throw new Error('abort');
    }),
  );
  assert.deepEqual(await claimDueJobs(db, 'rollback.test', 10, 1000, 'w'), []);
});

test('delayed jobs are not claimed before their time', async () => {
  const id = await enqueueJob(db, 'delayed.test', { n: 1 }, { runAt: nowMs() + 60_000 });
  assert.deepEqual(await claimDueJobs(db, 'delayed.test', 10, 1000, 'w'), []);
  await db
    .updateTable('jobs')
    .set({ run_at: Math.floor(nowMs()) - 1 })
    .where('id', '=', id)
    .execute();
  const [job] = await claimDueJobs(db, 'delayed.test', 10, 1000, 'w');
  assert.equal(job.id, id);
  assert.deepEqual(job.payload, { n: 1 });
  assert.equal(job.attempts, 1);
});

test('a leased job is invisible to other workers until its lease expires (crash recovery)', async () => {
  const id = await enqueueJob(db, 'lease.test', { x: true });
  const [first] = await claimDueJobs(db, 'lease.test', 10, 60_000, 'worker-a');
  assert.equal(first.id, id);
  assert.deepEqual(await claimDueJobs(db, 'lease.test', 10, 60_000, 'worker-b'), [], 'still leased');

  // worker-a "crashes": it never completes. Once the lease has run out, worker-b gets it.
  await db
    .updateTable('jobs')
    .set({ locked_until: Math.floor(nowMs()) - 1 })
    .where('id', '=', id)
    .execute();
  const [again] = await claimDueJobs(db, 'lease.test', 10, 60_000, 'worker-b');
  assert.equal(again.id, id);
  assert.equal(again.attempts, 2);
  // The crashed worker cannot complete a job it no longer holds.
  assert.equal(await completeJob(db, first, 'worker-a'), false);
  assert.equal(await completeJob(db, again, 'worker-b'), true);
  assert.equal(await jobRow(id), undefined);
});

test('failures retry with backoff, then the job is kept as dead', async () => {
  const id = await enqueueJob(db, 'fail.test', {}, { maxAttempts: 2 });
  const [attempt1] = await claimDueJobs(db, 'fail.test', 1, 60_000, 'w');
  const before = nowMs();
  assert.equal(await failJob(db, attempt1, 'boom 1'), 'retry');
  const row = (await jobRow(id))!;
  assert.ok(row.run_at >= before, 'retried later, not at once');
  assert.equal(row.last_error, 'boom 1');
  assert.equal(row.locked_until, null);

  await db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', id).execute();
  const [attempt2] = await claimDueJobs(db, 'fail.test', 1, 60_000, 'w');
  assert.equal(attempt2.attempts, 2);
  assert.equal(await failJob(db, attempt2, 'boom 2'), 'dead');
  const dead = (await jobRow(id))!;
  assert.ok(dead.dead_at);
  assert.equal(dead.last_error, 'boom 2');
  await db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', id).execute();
  assert.deepEqual(await claimDueJobs(db, 'fail.test', 1, 60_000, 'w'), [], 'dead jobs are never claimed');
});

test('backoff grows exponentially with jitter and a cap', () => {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const full = 1000 * 2 ** (attempt - 1);
    for (let i = 0; i < 20; i++) {
      const delay = backoffMs(attempt);
      assert.ok(delay >= full / 2 && delay <= full, `attempt ${attempt}: ${delay}`);
    }
  }
  assert.ok(backoffMs(40) <= 60 * 60 * 1000);
});

test('concurrent claimers never get the same job', async () => {
  const ids = new Set<number>();
  for (let i = 0; i < 40; i++) ids.add(await enqueueJob(db, 'race.test', { i }));
  const claims = await Promise.all(Array.from({ length: 8 }, (_, w) => claimDueJobs(db, 'race.test', 10, 60_000, `w${w}`)));
  const claimed = claims.flat().map((j) => j.id);
  assert.equal(new Set(claimed).size, claimed.length, 'no job claimed twice');
  assert.equal(claimed.length, 40);
  assert.deepEqual(new Set(claimed), ids);
});

test('the runner runs handlers, retries failures, honours RetryJobAt and recovers leased jobs', async () => {
  const seen: number[] = [];
  let failOnce = true;
  const handler = jobHandler(
    'runner.test',
    async (job: Job) => {
      if (job.payload.n === 2 && failOnce) {
        failOnce = false;
        throw new Error('transient');
      }
      if (job.payload.n === 3 && job.attempts === 1) throw new RetryJobAt(nowMs() + 10, 'later, please');
      seen.push(job.payload.n);
    },
    { concurrency: 2, leaseMs: 30_000 },
  );

  // A job a crashed worker had leased (lease already run out) is picked up too.
  const orphan = await enqueueJob(db, 'runner.test', { n: 4 });
  await claimDueJobs(db, 'runner.test', 1, 1, 'dead-worker');
  await new Promise((r) => setTimeout(r, 5));
  assert.ok((await jobRow(orphan))!.locked_by === 'dead-worker');

  const runner = new JobRunner(db, { pollMs: 20, handlers: [handler] });
  await runner.start();
  try {
    for (const n of [1, 2, 3]) await enqueueJob(db, 'runner.test', { n });
    // The transient failure is retried after its backoff (about a second).
    await eventually(async () => seen.length === 4, 10_000);
    assert.deepEqual([...seen].sort(), [1, 2, 3, 4]);
    // A job is removed right after its handler returns.
    await eventually(
      async () => (await db.selectFrom('jobs').select('id').where('type', '=', 'runner.test').execute()).length === 0,
      5_000,
    );
  } finally {
    await runner.stop();
  }
});

test("a running job's lease is renewed, so a second worker never takes over a live worker's long job", async () => {
  const runs: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handler = jobHandler(
    'renew.test',
    async (job: Job) => {
      runs.push(`start ${job.attempts}`);
      await released; // a long SMTP exchange, many times the lease
      runs.push('end');
    },
    { concurrency: 1, leaseMs: 300 },
  );
  const id = await enqueueJob(db, 'renew.test', {});
  const live = new JobRunner(db, { pollMs: 20, handlers: [handler] });
  await live.start();
  try {
    await eventually(async () => runs.length === 1);
    const firstLease = Number((await jobRow(id))!.locked_until);
    // Several leases later the job is still the live worker's, its lease moved forward.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.deepEqual(await claimDueJobs(db, 'renew.test', 10, 300, 'other-worker'), [], 'not taken over');
    assert.ok(Number((await jobRow(id))!.locked_until) > firstLease, 'renewed');
    release();
    await eventually(async () => (await jobRow(id)) === undefined);
    assert.deepEqual(runs, ['start 1', 'end'], 'ran once');
  } finally {
    release();
    await live.stop();
  }
});

test("a dead worker's job runs again as soon as its lease runs out", async () => {
  const id = await enqueueJob(db, 'takeover.test', { n: 1 });
  // The dead worker claimed it with a short lease and never renews it.
  const [claimed] = await claimDueJobs(db, 'takeover.test', 1, 200, 'dead-worker');
  assert.equal(claimed.id, id);
  assert.deepEqual(await claimDueJobs(db, 'takeover.test', 1, 200, 'second-worker'), [], 'held while its lease lasts');
  await new Promise((resolve) => setTimeout(resolve, 250));
  const [again] = await claimDueJobs(db, 'takeover.test', 1, 200, 'second-worker');
  assert.equal(again.id, id);
  assert.equal(again.attempts, 2);
});

test('an idle runner takes a job another process enqueued within about one poll interval', async () => {
  const seen: number[] = [];
  const runner = new JobRunner(db, { pollMs: 200, handlers: [jobHandler('due.test', async (job) => void seen.push(job.payload.n))] });
  await runner.start();
  try {
    await new Promise((r) => setTimeout(r, 300)); // idle: its loop waits for the due check
    // Written straight to the table, as another process's enqueue: no signal in this one.
    await db
      .insertInto('jobs')
      .values({
        type: 'due.test',
        payload: '{"n":1}',
        run_at: Math.floor(nowMs()),
        attempts: 0,
        max_attempts: 3,
        created_at: new Date().toISOString(),
      })
      .execute();
    const started = Date.now();
    await eventually(async () => seen.length === 1, 5_000);
    // The loop's own fallback poll is 20 intervals (4 s); the shared due check finds it first.
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
  } finally {
    await runner.stop();
  }
});
