// Job keys on the engine under test: a keyed enqueue is idempotent (a waiting job is left as it
// is, a running one runs once more after it), and a feature finds, cancels and reschedules its
// job by key, never touching one a worker is running.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshMigratedDb } from '../helpers/app.ts';
import type { Db } from '../../src/platform/db/database.ts';
import {
  cancelByKey,
  claimDueJobs,
  completeJobs,
  dueJobsExceed,
  enqueueJob,
  failJob,
  findByKey,
  rescheduleByKey,
} from '../../src/platform/jobs.ts';
import { nowMs } from '../../src/platform/clock.ts';

let db: Db;
let close: () => Promise<void>;
before(async () => {
  ({ db, close } = await freshMigratedDb());
});
after(() => close());

const rows = (type: string) => db.selectFrom('jobs').selectAll().where('type', '=', type).orderBy('id').execute();

test('a second keyed enqueue while the job waits changes nothing', async () => {
  const later = Math.floor(nowMs()) + 60_000;
  const id = await enqueueJob(db, 'key.waiting', { n: 1 }, { key: 'a', runAt: later });
  assert.equal(typeof id, 'number');
  assert.equal(await enqueueJob(db, 'key.waiting', { n: 2 }, { key: 'a', runAt: later + 5_000 }), null);
  const [row, ...more] = await rows('key.waiting');
  assert.equal(more.length, 0, 'one job');
  assert.equal(row.payload, '{"n":1}');
  assert.equal(Number(row.run_at), later);
  // Another key, or another type with the same key, is another job.
  await enqueueJob(db, 'key.waiting', { n: 3 }, { key: 'b' });
  await enqueueJob(db, 'key.other', { n: 4 }, { key: 'a' });
  assert.equal((await rows('key.waiting')).length, 2);
  assert.equal((await rows('key.other')).length, 1);
});

test('findByKey finds the live job and says whether it is running', async () => {
  await enqueueJob(db, 'key.find', { email_id: 'em_1' }, { key: 'em_1' });
  const waiting = await findByKey(db, 'key.find', 'em_1');
  assert.deepEqual(
    { ...waiting, id: 0, runAt: 0 },
    { id: 0, type: 'key.find', key: 'em_1', payload: { email_id: 'em_1' }, runAt: 0, attempts: 0, running: false },
  );
  const [claimed] = await claimDueJobs(db, 'key.find', 1, 60_000, 'w');
  assert.equal(claimed.key, 'em_1');
  assert.equal((await findByKey(db, 'key.find', 'em_1'))!.running, true);
  assert.equal(await findByKey(db, 'key.find', 'nobody'), null);
});

test('a keyed enqueue while the job runs makes it run once more after it finishes', async () => {
  await enqueueJob(db, 'key.rerun', { campaign_id: 'c1' }, { key: 'c1' });
  const [running] = await claimDueJobs(db, 'key.rerun', 1, 60_000, 'w');
  const soon = Math.floor(nowMs()) + 1_000;
  // Twice: the first request's time holds, and still one job.
  await enqueueJob(db, 'key.rerun', { campaign_id: 'c1' }, { key: 'c1', runAt: soon });
  await enqueueJob(db, 'key.rerun', { campaign_id: 'c1' }, { key: 'c1', runAt: soon + 9_000 });
  assert.equal((await rows('key.rerun')).length, 1);

  assert.equal(await completeJobs(db, [running.id], 'w'), 1);
  const [again, ...more] = await rows('key.rerun');
  assert.equal(more.length, 0);
  assert.equal(again.id, running.id, 'the same job, put back');
  assert.equal(Number(again.run_at), soon);
  assert.equal(again.locked_by, null);
  assert.equal(again.attempts, 0);
  assert.equal(again.rerun_at, null);

  // Its next run, with no request meanwhile, finishes it for good.
  await db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', again.id).execute();
  const [second] = await claimDueJobs(db, 'key.rerun', 1, 60_000, 'w');
  assert.equal(await completeJobs(db, [second.id], 'w'), 1);
  assert.deepEqual(await rows('key.rerun'), []);
});

test('a failed run that was asked to run again is simply retried', async () => {
  await enqueueJob(db, 'key.failrerun', {}, { key: 'k' });
  const [running] = await claimDueJobs(db, 'key.failrerun', 1, 60_000, 'w');
  await enqueueJob(db, 'key.failrerun', {}, { key: 'k', runAt: nowMs() + 5_000 });
  assert.equal(await failJob(db, running, 'boom', nowMs() + 60_000), 'retry');
  const [row] = await rows('key.failrerun');
  assert.equal(row.rerun_at, null);
  assert.equal(row.locked_by, null);
});

test('cancelByKey removes a waiting job, leaves a running one, and says which', async () => {
  await enqueueJob(db, 'key.cancel', {}, { key: 'waiting' });
  assert.equal(await cancelByKey(db, 'key.cancel', 'waiting'), 'canceled');
  assert.equal(await findByKey(db, 'key.cancel', 'waiting'), null);
  assert.equal(await cancelByKey(db, 'key.cancel', 'waiting'), 'absent');

  await enqueueJob(db, 'key.cancel', {}, { key: 'running' });
  const [running] = await claimDueJobs(db, 'key.cancel', 1, 60_000, 'w');
  assert.equal(await cancelByKey(db, 'key.cancel', 'running'), 'running');
  assert.ok(await findByKey(db, 'key.cancel', 'running'), 'still there');
  // A lease that ran out (its worker died) no longer protects it.
  await db
    .updateTable('jobs')
    .set({ locked_until: Math.floor(nowMs()) - 1 })
    .where('id', '=', running.id)
    .execute();
  assert.equal(await cancelByKey(db, 'key.cancel', 'running'), 'canceled');
});

test('cancelByKey in a rolled-back transaction leaves the job', async () => {
  await enqueueJob(db, 'key.rollback', {}, { key: 'k' });
  await assert.rejects(
    db.transaction().execute(async (tx) => {
      assert.equal(await cancelByKey(tx, 'key.rollback', 'k'), 'canceled');
      throw new Error('abort');
    }),
  );
  assert.ok(await findByKey(db, 'key.rollback', 'k'));
});

test('rescheduleByKey moves a waiting job, not a running one', async () => {
  await enqueueJob(db, 'key.move', {}, { key: 'k', runAt: nowMs() + 60_000 });
  const at = Math.floor(nowMs()) + 3_600_000;
  assert.equal(await rescheduleByKey(db, 'key.move', 'k', at), 'rescheduled');
  assert.equal((await findByKey(db, 'key.move', 'k'))!.runAt, at);
  assert.equal(await rescheduleByKey(db, 'key.move', 'missing', at), 'absent');

  await enqueueJob(db, 'key.move', {}, { key: 'now' });
  await claimDueJobs(db, 'key.move', 1, 60_000, 'w');
  assert.equal(await rescheduleByKey(db, 'key.move', 'now', at), 'running');
});

test('a dead job frees its key', async () => {
  await enqueueJob(db, 'key.dead', {}, { key: 'k', maxAttempts: 1 });
  const [job] = await claimDueJobs(db, 'key.dead', 1, 60_000, 'w');
  assert.equal(await failJob(db, job, 'gone'), 'dead');
  assert.equal(await findByKey(db, 'key.dead', 'k'), null);
  assert.equal(typeof (await enqueueJob(db, 'key.dead', {}, { key: 'k' })), 'number');
});

test('dueJobsExceed counts only due, live jobs', async () => {
  for (let i = 0; i < 3; i++) await enqueueJob(db, 'key.backlog', { i });
  await enqueueJob(db, 'key.backlog', { later: true }, { runAt: nowMs() + 60_000 });
  assert.equal(await dueJobsExceed(db, 'key.backlog', 2), true);
  assert.equal(await dueJobsExceed(db, 'key.backlog', 3), false);
});

test('migration 0029 keys the jobs of an older database: deliveries by email, recurring chains by name', async () => {
  const { db: old, close: closeOld } = await freshMigratedDb();
  try {
    const migration = await import('../../src/platform/db/migrations/0029_job_keys.ts');
    await migration.down(old);
    const job = (type: string, payload: string, extra: { dead_at?: string } = {}) =>
      old
        .insertInto('jobs')
        .values({ type, payload, run_at: 0, attempts: 0, max_attempts: 5, created_at: new Date().toISOString(), ...extra } as never)
        .execute();
    await job('email.deliver', '{"email_id":"em_a"}');
    await job('email.deliver', '{"email_id":"em_a","traceparent":"00-x"}'); // a second one for the same email
    await job('email.deliver', '{"email_id":"em_b","traceparent":"00-y"}');
    await job('email.deliver', '{"email_id":"em_c"}', { dead_at: new Date().toISOString() });
    await job('emails.purge-content', '{}');
    await job('emails.purge-content', '{}'); // a forked chain
    await job('domains.recheck', '{}');
    await job('webhooks.other', '{}');
    await migration.up(old);

    const rows = await old.selectFrom('jobs').select(['id', 'type', 'key', 'payload']).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.type, r.key]),
      [
        ['email.deliver', 'em_a'],
        ['email.deliver', null],
        ['email.deliver', 'em_b'],
        ['email.deliver', null],
        ['emails.purge-content', 'emails.purge-content'],
        ['domains.recheck', 'domains.recheck'],
        ['webhooks.other', null],
      ],
    );
    assert.equal(await cancelByKey(old, 'email.deliver', 'em_b'), 'canceled');
  } finally {
    await closeOld();
  }
});
