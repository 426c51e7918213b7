// Content retention: the daily purge (a recurring job: one instance however often workers
// start), what a purge keeps and drops, and how reads, retry and forward answer afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { eventually } from '../helpers/app.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { isoFromMs, nowMs } from '../../src/platform/clock.ts';
import { JobRunner } from '../../src/platform/jobs.ts';
import { purgeExpiredContent, purgeJob, PURGE_JOB } from '../../src/resources/emails/retention.ts';
import { send, setEmail, contentOf, deliverJobs, DAY_MS } from './email-helpers.ts';

let app: SendingApp;

before(async () => {
  app = await startSendingApp();
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
});
after(() => app.close());

const PDF = Buffer.from('%PDF-1.4 retained').toString('base64');

const chainJobs = () =>
  app.running.ctx.db.selectFrom('jobs').selectAll().where('type', '=', PURGE_JOB).where('dead_at', 'is', null).execute();

/** An email in a final state whose content was stored `days` ago. Sent scheduled far ahead so
 *  no delivery worker touches it; the state is then set as delivery would leave it. */
async function storedEmail(to: string, days: number, status = 'delivered') {
  const sent = await send(app.api, {
    to,
    cc: 'cc@example.org',
    reply_to: 'support@acme.test',
    html: '<p>secret</p>',
    text: 'secret',
    headers: { 'X-Secret': '1' },
    attachments: [{ filename: 'a.pdf', content: PDF, content_type: 'application/pdf' }],
    scheduled_at: isoFromMs(nowMs() + 30 * DAY_MS),
  });
  const id = sent.ids[to];
  const ids = Object.values(sent.ids as Record<string, string>);
  for (const copy of ids) {
    await setEmail(app, copy, { status, scheduled_at: null });
    if (status !== 'scheduled')
      await app.running.ctx.db.deleteFrom('jobs').where('type', '=', 'email.deliver').where('key', '=', copy).execute();
  }
  const content = await contentOf(app, id);
  await app.running.ctx.db
    .updateTable('email_contents')
    .set({ created_at: isoFromMs(nowMs() - days * DAY_MS) })
    .where('id', '=', content.id)
    .execute();
  return id;
}

/** Starts and stops `n` more job runners with the purge job, as worker processes starting would. */
async function startWorkers(n: number): Promise<void> {
  const runners = Array.from({ length: n }, () => new JobRunner(app.running.ctx.db, { handlers: [purgeJob(app.running.ctx)] }));
  await Promise.all(runners.map((runner) => runner.start()));
  await Promise.all(runners.map((runner) => runner.stop()));
}

test('one purge job exists, however many workers start', async () => {
  const started = await chainJobs();
  assert.equal(started.length, 1, 'the worker made it');
  assert.equal(started[0].key, PURGE_JOB);
  await startWorkers(8);
  const after = await chainJobs();
  assert.deepEqual(
    after.map((j) => j.id),
    started.map((j) => j.id),
  );
});

test('the daily job purges content past CONTENT_RETENTION_DAYS and is due again a day later', async () => {
  assert.equal(app.config.contentRetentionDays, 30);
  const old = await storedEmail('old@example.org', 31);
  const recent = await storedEmail('recent@example.org', 29);
  const pending = await storedEmail('pending@example.org', 45, 'scheduled');

  const [chain] = await chainJobs();
  await app.running.ctx.db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', chain.id).execute();
  await eventually(async () => {
    const jobs = await chainJobs();
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0].id, chain.id, 'the same instance');
    return jobs[0].locked_by === null && Number(jobs[0].run_at) > nowMs();
  }, 10_000);
  const [next] = await chainJobs();
  assert.ok(Math.abs(Number(next.run_at) - (nowMs() + DAY_MS)) < 60_000, 'the next run is a day later');

  const purged = await contentOf(app, old);
  assert.ok(purged.purged_at);
  assert.equal(purged.raw, null);
  assert.deepEqual(JSON.parse(purged.message), {
    from: { address: 'hello@acme.test', name: 'Acme' },
    to: [{ address: 'old@example.org', name: '' }],
    cc: [{ address: 'cc@example.org', name: '' }],
    bcc: [],
    reply_to: [{ address: 'support@acme.test', name: '' }],
    subject: 'Hello',
    html: null,
    text: null,
    headers: {},
    attachments: [],
  });
  assert.equal((await contentOf(app, recent)).purged_at, null, 'younger than the retention period');
  assert.equal((await contentOf(app, pending)).purged_at, null, 'an email still waiting to go keeps its content');
  assert.equal((await deliverJobs(app, pending)).length, 1);

  // Reads show the content as null; the metadata stays.
  const email = (await app.api.get(`/v2/emails/${old}`)).body;
  assert.equal(email.status, 'delivered');
  assert.equal(email.subject, 'Hello');
  assert.equal(email.purged_at, purged.purged_at);
  for (const field of ['html', 'text', 'attachments', 'headers', 'cc', 'reply_to']) assert.equal(email[field], null, field);
  assert.deepEqual((await app.api.get(`/v2/emails/${old}/body`)).body, { text: null, html: null });
  assert.deepEqual((await app.api.get(`/v2/emails/${old}/attachments`)).body, { data: null });
  const meta = (await app.api.get(`/v2/emails/${old}/meta`)).body;
  assert.equal(meta.headers, null);
  assert.equal(meta.attachments, null);
  const raw = await app.api.get(`/v2/emails/${old}/raw`);
  assert.equal(raw.status, 200);
  assert.equal(raw.body.raw, null);
  assert.equal((await app.api.get(`/v2/emails/${recent}/body`)).body.html, '<p>secret</p>');

  // Retry and forward answer 422.
  await setEmail(app, old, { status: 'bounced' });
  const retry = await app.api.post(`/v2/emails/${old}/retry`);
  assert.deepEqual(
    [retry.status, retry.body],
    [
      422,
      { error: 'Cannot retry email', message: 'The content of this email was purged after the retention period; it cannot be sent again.' },
    ],
  );
  const forward = await app.api.post(`/v2/emails/${old}/forward`, { to: 'boss@example.org' });
  assert.deepEqual(
    [forward.status, forward.body],
    [
      422,
      {
        error: 'Cannot forward email',
        message: 'The content of this email was purged after the retention period; it cannot be forwarded.',
      },
    ],
  );
});

test('the retention period is a parameter; purging is idempotent', async () => {
  const id = await storedEmail('six-days@example.org', 6);
  const db = app.running.ctx.db;
  assert.equal((await purgeExpiredContent(db, 30)).purged, 0);
  assert.equal((await contentOf(app, id)).purged_at, null);
  const first = await purgeExpiredContent(db, 5);
  assert.ok(first.purged >= 1, "this one (and the previous test's younger ones)");
  assert.equal(first.more, false);
  const purgedAt = (await contentOf(app, id)).purged_at;
  assert.ok(purgedAt);
  assert.equal((await purgeExpiredContent(db, 5)).purged, 0, 'nothing twice');
  assert.equal((await contentOf(app, id)).purged_at, purgedAt);
});

test('a purge job that vanished is made again when a worker starts', async () => {
  await app.running.ctx.db.deleteFrom('jobs').where('type', '=', PURGE_JOB).execute();
  await startWorkers(2);
  assert.equal((await chainJobs()).length, 1);
});
