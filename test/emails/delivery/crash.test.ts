// A delivery worker killed mid-delivery (SIGKILL while the next hop is still holding back its
// reply to DATA) loses nothing and duplicates nothing: the next hop, like any MTA, drops a
// message whose transaction never completed, the job runs again once its lease has expired,
// and a job that runs again after a recorded 2xx does not send a second time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStallingMta } from '../../helpers/stalling-mta.ts';
import { eventually, freePort, startChildApp, type ChildApp, databaseUrlOf } from '../../helpers/app.ts';
import { startSendingApp, type SendingApp } from '../../helpers/sending.ts';
import { updateWorkspace } from '../../../src/resources/workspaces/service.ts';
import { enqueueJob } from '../../../src/platform/jobs.ts';
import { nowMs } from '../../../src/platform/clock.ts';
import { DELIVER_LEASE_MS } from '../../../src/resources/emails/service.ts';

let app: SendingApp;
let mta: Awaited<ReturnType<typeof startStallingMta>>;
let child: ChildApp | null = null;

before(async () => {
  mta = await startStallingMta();
  // The API runs here; the worker runs in a child process that the test kills.
  app = await startSendingApp({ roles: ['api'] });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
});
after(async () => {
  await child?.kill('SIGKILL');
  await app.close();
  await mta.close();
});

async function workerEnv(): Promise<Record<string, string>> {
  const databaseUrl = await databaseUrlOf(app);
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: app.config.dataDir, // the encryption key that seals the DKIM keys
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
    MX_PORT: String(mta.port),
    MAIL_HOSTNAME: 'mail.postlane.test',
  };
}

const db = () => app.running.ctx.db;
const deliverJobs = (id: string) =>
  db()
    .selectFrom('jobs')
    .selectAll()
    .where('type', '=', 'email.deliver')
    .where('payload', '=', JSON.stringify({ email_id: id }))
    .execute();
const emailRow = (id: string) => db().selectFrom('emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

test('SIGKILL during DATA, restart: the email is delivered exactly once; a re-run after the 2xx sends nothing', async () => {
  const sent = await app.api.post('/v2/emails', { from: 'hello@acme.test', to: 'crash@example.org', subject: 'Survives', text: 'Hello' });
  assert.equal(sent.status, 200, sent.text);
  const id = sent.body.id as string;

  child = await startChildApp(await workerEnv());
  await eventually(async () => mta.received === 1, 15_000);
  await child.kill('SIGKILL');
  child = null;
  await eventually(async () => mta.openConnections === 0, 10_000);

  // Nothing was recorded: the job is still leased to the dead worker.
  assert.equal((await emailRow(id)).status, 'accepted');
  assert.equal((await db().selectFrom('email_attempts').select('id').where('email_id', '=', id).execute()).length, 0);
  const [leased] = await deliverJobs(id);
  // A short lease, which the dead worker no longer renews.
  assert.ok(leased.locked_until! <= nowMs() + DELIVER_LEASE_MS, 'a short lease');
  mta.release();
  assert.equal(mta.accepted.length, 0, 'the interrupted transaction was dropped');

  // A new worker takes the job over as soon as the dead worker's lease runs out: seconds, not
  // the length of the slowest SMTP exchange.
  child = await startChildApp(await workerEnv());
  await eventually(async () => (await emailRow(id)).status === 'delivered', DELIVER_LEASE_MS + 15_000);
  await eventually(async () => (await deliverJobs(id)).length === 0, 10_000);
  assert.equal(mta.accepted.length, 1);
  assert.deepEqual(mta.accepted[0].rcptTo, ['crash@example.org']);
  assert.deepEqual(
    (await db().selectFrom('email_attempts').select('outcome').where('email_id', '=', id).execute()).map((a) => a.outcome),
    ['delivered'],
  );

  // The job of a worker that died after recording the 2xx but before acknowledging it runs
  // again: it finds the email delivered and sends nothing.
  await enqueueJob(db(), 'email.deliver', { email_id: id });
  await eventually(async () => (await deliverJobs(id)).length === 0, 10_000);
  assert.equal(mta.accepted.length, 1);
  assert.equal(mta.received, 2);
  const events = await db().selectFrom('events').select(['type', 'data']).execute();
  assert.deepEqual(
    events
      .filter((e) => JSON.parse(e.data).id === id)
      .map((e) => e.type)
      .sort(),
    ['email.accepted', 'email.delivered'],
  );
});
