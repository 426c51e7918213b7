// Content retention: the daily purge chain (one live job however often it is started), what a
// purge keeps and drops, and how reads, retry and forward answer afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { eventually } from '../helpers/app.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { isoFromMs, nowMs } from '../../src/platform/clock.ts';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { dialectOf } from '../../src/platform/db/database.ts';
import { ensurePurgeChain, purgeExpiredContent, runPurgeJob, PURGE_JOB } from '../../src/resources/emails/retention.ts';
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
    if (status !== 'scheduled') await app.running.ctx.db.deleteFrom('jobs').where('type', '=', 'email.deliver').where('payload', '=', `{"email_id":"${copy}"}`).execute();
  }
  const content = await contentOf(app, id);
  await app.running.ctx.db.updateTable('email_contents').set({ created_at: isoFromMs(nowMs() - days * DAY_MS) }).where('id', '=', content.id).execute();
  return id;
}

test('one purge chain job exists, however many processes start it', async () => {
  const started = await chainJobs();
  assert.equal(started.length, 1, 'the worker started the chain');
  assert.equal(started[0].payload, '{}');
  await Promise.all(Array.from({ length: 8 }, () => ensurePurgeChain(app.running.ctx.db)));
  const after = await chainJobs();
  assert.deepEqual(after.map((j) => j.id), started.map((j) => j.id));
});

test('processes racing to start the chain on one database make one job', async () => {
  const db = app.running.ctx.db;
  const schema = dialectOf(db) === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0].s : '';
  for (let round = 0; round < 2; round++) {
    await db.deleteFrom('jobs').where('type', '=', PURGE_JOB).execute();
    await raceInProcesses(4, app.config.databaseUrl, schema);
    assert.equal((await chainJobs()).length, 1, `round ${round}`);
  }
});

/** Runs ensurePurgeChain twice in each of `n` node processes, released together. */
async function raceInProcesses(n: number, url: string, schema: string): Promise<void> {
  const root = join(import.meta.dirname, '..', '..');
  const code = `
    import { openDatabase } from ${JSON.stringify(pathToFileURL(join(root, 'src/platform/db/database.ts')).href)};
    import { ensurePurgeChain } from ${JSON.stringify(pathToFileURL(join(root, 'src/resources/emails/retention.ts')).href)};
    const handle = openDatabase(process.env.RACE_DB_URL, { schema: process.env.RACE_DB_SCHEMA || undefined, poolSize: 2 });
    await handle.db.selectFrom('jobs').select('id').limit(1).execute();
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      // Due in an hour: the app's own worker must not run (and hand over) the job mid-count.
      const later = Date.now() + 3_600_000;
      await Promise.all([ensurePurgeChain(handle.db, later), ensurePurgeChain(handle.db, later)]);
      await handle.close();
      process.exit(0);
    });`;
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, RACE_DB_URL: url, RACE_DB_SCHEMA: schema }, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const exits = children.map((child) => {
    let errors = '';
    child.stderr!.on('data', (d) => (errors += d));
    return new Promise<void>((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`race process exited ${code}: ${errors}`)))));
  });
  await Promise.all(children.map((child) => new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()))));
  for (const child of children) child.stdin!.write('go\n');
  await Promise.all(exits);
}

test('the daily job purges content past CONTENT_RETENTION_DAYS and hands over to one successor', async () => {
  assert.equal(app.config.contentRetentionDays, 30);
  const old = await storedEmail('old@example.org', 31);
  const recent = await storedEmail('recent@example.org', 29);
  const pending = await storedEmail('pending@example.org', 45, 'scheduled');

  const [chain] = await chainJobs();
  await app.running.ctx.db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', chain.id).execute();
  await eventually(async () => {
    const jobs = await chainJobs();
    assert.equal(jobs.length, 1);
    assert.notEqual(jobs[0].id, chain.id, 'the successor replaced the job that ran');
    return true;
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
  assert.deepEqual([retry.status, retry.body], [422, { error: 'Cannot retry email', message: 'The content of this email was purged after the retention period; it cannot be sent again.' }]);
  const forward = await app.api.post(`/v2/emails/${old}/forward`, { to: 'boss@example.org' });
  assert.deepEqual([forward.status, forward.body], [422, { error: 'Cannot forward email', message: 'The content of this email was purged after the retention period; it cannot be forwarded.' }]);
});

test('the retention period is a parameter; purging is idempotent', async () => {
  const id = await storedEmail('six-days@example.org', 6);
  const db = app.running.ctx.db;
  assert.equal((await purgeExpiredContent(db, 30)).purged, 0);
  assert.equal((await contentOf(app, id)).purged_at, null);
  const first = await purgeExpiredContent(db, 5);
  assert.ok(first.purged >= 1, 'this one (and the previous test\'s younger ones)');
  assert.equal(first.more, false);
  const purgedAt = (await contentOf(app, id)).purged_at;
  assert.ok(purgedAt);
  assert.equal((await purgeExpiredContent(db, 5)).purged, 0, 'nothing twice');
  assert.equal((await contentOf(app, id)).purged_at, purgedAt);
});

test('a chain job run twice (a crash after its hand-over) leaves one successor', async () => {
  const [current] = await chainJobs();
  const job = { id: Number(current.id), type: PURGE_JOB, payload: {}, attempts: 1, maxAttempts: 1_000_000 };
  await runPurgeJob(app.running.ctx, job);
  await runPurgeJob(app.running.ctx, job);
  const jobs = await chainJobs();
  assert.equal(jobs.length, 2, 'the running job and exactly one successor');
  await app.running.ctx.db.deleteFrom('jobs').where('id', '=', current.id).execute();
  assert.equal((await chainJobs()).length, 1);
  // And a chain whose job vanished is started again by the next process start.
  await app.running.ctx.db.deleteFrom('jobs').where('type', '=', PURGE_JOB).execute();
  await ensurePurgeChain(app.running.ctx.db);
  assert.equal((await chainJobs()).length, 1);
});
