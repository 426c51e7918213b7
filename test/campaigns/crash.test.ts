// The fan-out is exactly once under SIGKILL: a campaign to 5,000 recipients sends from a child
// server that is killed several times while it turns recipients into emails. The next hop holds
// back its reply to DATA until the last restart (like any MTA, it keeps nothing from a
// transaction cut off mid-way), so every recipient must end up with exactly one message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStallingMta, type StallingMta } from '../helpers/stalling-mta.ts';
import { databaseUrlOf, eventually, freePort, startChildApp, type ChildApp } from '../helpers/app.ts';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { DELIVER_LEASE_MS } from '../../src/resources/emails/service.ts';
import { audience, CONTENT } from './helpers.ts';
import { seedAudience } from './seed.ts';

const RECIPIENTS = 5000;
let app: SendingApp;
let mta: StallingMta;
let child: ChildApp | null = null;

before(async () => {
  mta = await startStallingMta();
  app = await startSendingApp({ roles: ['api'], workspace: { credits: 1_000_000 } });
  await app.verifiedDomain('acme.test');
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
});
after(async () => {
  await child?.kill('SIGKILL');
  await app.close();
  await mta.close();
});

test(`SIGKILL several times while a ${RECIPIENTS}-recipient campaign fans out: each recipient gets exactly one message`, {
  timeout: 240_000,
}, async (t) => {
  const api = app.api;
  const db = app.running.ctx.db;
  const list = await audience(api, 'Everyone');
  await seedAudience(db, app.workspace.id, list, RECIPIENTS, 'crash');
  const created = await api.post('/v2/campaigns', { name: 'Crash', from_email: 'news@acme.test', ...CONTENT });
  await api.post(`/v2/campaigns/${created.body.id}`, { recipients: [{ audience_id: list }] });
  const id = created.body.id as string;

  const env = {
    DATABASE_URL: await databaseUrlOf(app),
    DATA_DIR: app.config.dataDir,
    HTTP_HOST: '127.0.0.1',
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
    MX_PORT: String(mta.port),
    MAIL_HOSTNAME: 'mail.postlane.test',
    // Small batches with a pause between them, so the kills land in the middle of the fan-out.
    POSTLANE_CAMPAIGN_BATCH: '100',
    POSTLANE_CAMPAIGN_BATCH_DELAY_MS: '30',
    // The MTA holds every delivery until the end: let the fan-out run ahead of them.
    POSTLANE_CAMPAIGN_MAX_QUEUED: '100000',
  };
  child = await startChildApp({ ...env, HTTP_PORT: String(await freePort()) });
  assert.equal((await api.post(`/v2/campaigns/${id}/send`)).status, 200);

  const queued = async () =>
    Number(
      (
        await db
          .selectFrom('campaign_recipients')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('campaign_id', '=', id)
          .where('status', '=', 'queued')
          .executeTakeFirst()
      )?.n ?? 0,
    );
  const progress: number[] = [];
  for (let kill = 0; kill < 3; kill++) {
    // Kill once the fan-out has moved on since the last restart, at a random moment.
    const from = await queued();
    await eventually(async () => (await queued()) > from, 60_000, 20);
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 400));
    progress.push(await queued());
    await child.kill('SIGKILL');
    child = await startChildApp({ ...env, HTTP_PORT: String(await freePort()) });
  }
  t.diagnostic(`recipients queued at each kill: ${progress.join(', ')}`);
  assert.ok(progress[progress.length - 1] < RECIPIENTS, 'the last kill landed before the fan-out finished');

  const done = await eventually(
    async () => {
      const res = await api.get(`/v2/campaigns/${id}`);
      return res.body.status === 'sent' && res.body;
    },
    120_000,
    200,
  );
  assert.ok(done.sent_at);
  mta.release();
  const undelivered = async () =>
    Number(
      (
        await db
          .selectFrom('emails')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('source', '=', 'campaign')
          .where('status', '<>', 'delivered')
          .executeTakeFirst()
      )?.n ?? 0,
    );
  await eventually(async () => (await undelivered()) === 0, DELIVER_LEASE_MS + 90_000, 500);

  const emails = await db.selectFrom('emails').select(['to']).where('source', '=', 'campaign').execute();
  assert.equal(emails.length, RECIPIENTS, 'one email per recipient, none twice');
  assert.equal(new Set(emails.map((e) => e.to)).size, RECIPIENTS);
  const perRecipient = new Map<string, number>();
  for (const message of mta.accepted) for (const rcpt of message.rcptTo) perRecipient.set(rcpt, (perRecipient.get(rcpt) ?? 0) + 1);
  assert.equal(perRecipient.size, RECIPIENTS, 'every recipient received the campaign');
  assert.deepEqual(
    [...perRecipient.values()].filter((n) => n !== 1),
    [],
    'nobody received it twice',
  );
  const report = (await api.get(`/v2/campaigns/${id}/report`)).body;
  assert.equal(report.sent, RECIPIENTS);
  assert.equal(report.delivered, RECIPIENTS);
  const credits = Number(
    (await db.selectFrom('workspaces').select('credits').where('id', '=', app.workspace.id).executeTakeFirstOrThrow()).credits,
  );
  assert.equal(credits, 1_000_000 - 2 * RECIPIENTS, 'credits charged once per email');
});
