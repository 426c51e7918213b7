// A list survives its worker being killed: SIGKILL of the process verifying it, a new process
// on the same database, and the list resumes where it was and completes. Every address ends
// with one result; an address whose result was recorded before the kill is never asked again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { databaseUrlOf, eventually, freePort, startChildApp, type ChildApp } from '../helpers/app.ts';
import { startVerificationApp, type VerificationApp } from '../email-verifications/helpers.ts';
import { JOB_LEASE_MS } from '../../src/platform/jobs.ts';

let app: VerificationApp;
let child: ChildApp | null = null;

before(async () => {
  // The API runs here; the worker runs in a child process that the test kills.
  app = await startVerificationApp({ roles: ['api'], rcptDelayMs: 20 });
});
after(async () => {
  await child?.kill('SIGKILL');
  await app.close();
});

async function workerEnv(): Promise<Record<string, string>> {
  return {
    DATABASE_URL: await databaseUrlOf(app),
    DATA_DIR: app.config.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
    MX_PORT: String(app.mx.port),
    MAIL_HOSTNAME: 'mail.postlane.test',
    VERIFY_SMTP_TIMEOUT_MS: '2000',
    ALLOW_PRIVATE_URLS: 'true', // the mail servers are on loopback
  };
}

const rows = (listId: string) =>
  app.running.ctx.db
    .selectFrom('email_verifications')
    .select(['email', 'status', 'result', 'updated_at'])
    .where('list_id', '=', listId)
    .orderBy('position')
    .execute();

test('SIGKILL mid-list, restart: the list resumes and completes; each recorded address verified once', async () => {
  const emails = [
    ...Array.from({ length: 120 }, (_, i) => `person${i}@catchall.test`),
    ...Array.from({ length: 30 }, (_, i) => `jane${i}@acme.test`),
  ];
  const created = await app.api.post('/v2/email-verification-lists', { name: 'Survivor', emails });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  app.mx.reset();

  child = await startChildApp(await workerEnv());
  await eventually(async () => (await rows(id)).filter((r) => r.status === 'completed').length >= 20, 30_000, 50);
  await child.kill('SIGKILL');
  child = null;

  const recorded = (await rows(id)).filter((r) => r.status !== 'pending');
  assert.ok(recorded.length >= 20 && recorded.length < emails.length, `${recorded.length} recorded before the kill`);
  const list = await app.api.get(`/v2/email-verification-lists/${id}`);
  assert.equal(list.body.status, 'processing');
  assert.equal(list.body.stats.pending_emails, emails.length, 'stats keep their starting values while processing');
  const askedBefore = app.mx.rcpts.length;

  child = await startChildApp(await workerEnv());
  const done = await eventually(
    async () => {
      const res = await app.api.get(`/v2/email-verification-lists/${id}`);
      return res.body.status === 'completed' && res.body;
    },
    JOB_LEASE_MS + 60_000,
    200,
  );
  assert.equal(done.stats.processed_emails, emails.length);
  assert.equal(done.stats.pending_emails, 0);

  const final = await rows(id);
  assert.deepEqual(
    final.map((r) => r.email),
    emails,
  );
  assert.ok(final.every((r) => r.status === 'completed' && r.result !== null));
  // A result recorded before the kill was kept as it was, and its address never asked again.
  const after = new Map(final.map((r) => [r.email, r]));
  const askedAfter = app.mx.rcpts.slice(askedBefore);
  for (const row of recorded) {
    assert.deepEqual(after.get(row.email), row, row.email);
    assert.ok(!askedAfter.includes(row.email), `${row.email} was verified again`);
  }
  for (const email of emails) assert.ok(app.mx.rcpts.includes(email), `${email} was never asked`);
  const events = await app.running.ctx.db
    .selectFrom('events')
    .select('type')
    .where('workspace_id', '=', app.workspace.id)
    .where('type', 'like', 'email_verification_list.%')
    .execute();
  assert.deepEqual(events.map((e) => e.type).sort(), ['email_verification_list.created', 'email_verification_list.updated']);
});
