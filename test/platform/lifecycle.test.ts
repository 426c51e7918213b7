// Readiness and a clean SIGTERM, as an orchestrator sees them: /readyz per role, and a server
// stopped under send load exits 0 within its bound, loses nothing it accepted, and leaves no
// job leased (the deliveries it was still running are handed back and done by the next start).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStallingMta } from '../helpers/stalling-mta.ts';
import { apiClient, databaseUrlOf, eventually, freePort, startChildApp, startTestApp } from '../helpers/app.ts';
import { startSendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

test('/readyz: ready with database, migrations and workers; workers not in the role of an api-only process', async (t) => {
  const full = await startTestApp();
  t.after(() => full.close());
  const ready = await apiClient(full.url, null).get('/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready', checks: { database: 'ok', migrations: 'ok', workers: 'ok' } });
  assert.deepEqual((await apiClient(full.url, null).get('/healthz')).body, { status: 'ok' });

  const api = await startTestApp({ roles: ['api'] });
  t.after(() => api.close());
  const apiOnly = await apiClient(api.url, null).get('/readyz');
  assert.equal(apiOnly.status, 200);
  assert.equal(apiOnly.body.checks.workers, 'not_in_role');
});

test('SIGTERM under send load: exit 0 within the bound, every accepted email kept, no lease left behind', async (t) => {
  const mta = await startStallingMta();
  const app = await startSendingApp({ roles: ['api'] });
  t.after(async () => {
    await app.close();
    await mta.close();
  });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 10_000, dailyLimit: 1_000_000, credits: 100_000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
  const shutdownMs = 1500;
  const env = async () => ({
    DATABASE_URL: await databaseUrlOf(app),
    DATA_DIR: app.config.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
    MX_PORT: String(mta.port),
    MAIL_HOSTNAME: 'mail.postlane.test',
    DOCTOR_AT_START: 'false',
    SHUTDOWN_TIMEOUT_MS: String(shutdownMs),
  });
  const child = await startChildApp(await env());
  const api = apiClient(child.url, app.key);

  // Eight senders until the server stops answering; the MTA holds every DATA reply, so
  // deliveries are in flight when the signal comes.
  const accepted: string[] = [];
  let stop = false;
  const sender = async (n: number) => {
    for (let i = 0; !stop; i++) {
      try {
        const response = await api.post('/v2/emails', {
          from: 'hello@acme.test',
          to: `r${n}-${i}@example.org`,
          subject: 'Load',
          text: 'Hello',
        });
        if (response.status === 200) accepted.push(response.body.id);
      } catch {
        return; // the server closed: no answer, so nothing was acknowledged
      }
    }
  };
  const senders = Array.from({ length: 8 }, (_, n) => sender(n));
  await eventually(async () => mta.received >= 1 && accepted.length >= 20, 30_000);
  const signalledAt = Date.now();
  const exited = new Promise<number | null>((resolve) => child.process.once('exit', (code) => resolve(code)));
  child.process.kill('SIGTERM');
  const code = await exited;
  const tookMs = Date.now() - signalledAt;
  stop = true;
  await Promise.all(senders);
  assert.equal(code, 0, `exit status 0:\n${child.output()}`);
  assert.ok(tookMs < shutdownMs + 5000, `exited within the bound (${tookMs} ms)`);
  assert.match(child.output(), /handed back/, 'the deliveries still running were handed back');

  const db = app.running.ctx.db;
  const stored = await db.selectFrom('emails').select(['id', 'status']).where('id', 'in', accepted).execute();
  assert.equal(stored.length, accepted.length, 'every accepted email is stored');
  const leased = await db.selectFrom('jobs').select(['id', 'type', 'locked_by']).where('locked_by', 'is not', null).execute();
  assert.deepEqual(leased, [], 'no job lease left behind');

  // The next start takes the handed-back jobs at once (no lease to wait out) and delivers everything.
  mta.release();
  const next = await startChildApp(await env());
  t.after(() => next.kill());
  await eventually(
    async () => {
      const pending = await db.selectFrom('emails').select('id').where('id', 'in', accepted).where('status', '!=', 'delivered').execute();
      return pending.length === 0;
    },
    60_000,
    200,
  );
  const delivered = new Set(mta.accepted.flatMap((message) => message.rcptTo));
  assert.ok(delivered.size >= accepted.length, `the MTA has every accepted recipient (${delivered.size} of ${accepted.length})`);
});
