// Chaos as a test (issue 20): clients send with an Idempotency-Key each, retrying on connection
// errors, while the one Postlane process (API and workers) is killed with SIGKILL at random
// moments and restarted on the same data. Deliveries in flight are cut mid-DATA by the kills
// (the MTA holds its replies until the last restart). Afterwards: every key got exactly one
// email, nothing was accepted twice, no key stayed stuck, and every email reached the MTA
// exactly once (by recipient and Message-ID).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, freePort, startChildApp, type ChildApp, databaseUrlOf } from '../helpers/app.ts';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { startStallingMta, type StallingMta } from '../helpers/stalling-mta.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { DELIVER_LEASE_MS } from '../../src/delivery/worker.ts';

const CLIENTS = 8;
const SENDS_PER_CLIENT = 20;
const KILLS = 3;

let app: SendingApp;
let mta: StallingMta;
let child: ChildApp | null = null;

before(async () => {
  mta = await startStallingMta();
  // This process only prepares the data and reads it back; the server under fire is a child.
  app = await startSendingApp({ roles: ['api'] });
  await app.verifiedDomain('acme.test');
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 10_000, dailyLimit: 1_000_000 });
  app.dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  app.dns.set('mx.example.org', 'A', ['127.0.0.1']);
});
after(async () => {
  await child?.kill('SIGKILL');
  await app.close();
  await mta.close();
});

async function serverEnv(): Promise<Record<string, string>> {
  return {
    DATABASE_URL: await databaseUrlOf(app),
    DATA_DIR: app.config.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(await freePort()),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
    MX_PORT: String(mta.port),
    MAIL_HOSTNAME: 'mail.postlane.test',
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('SIGKILL at random moments while accepting and delivering: nothing lost, nothing twice, no key stuck', { timeout: 170_000 }, async (t) => {
  const env = await serverEnv();
  child = await startChildApp(env);
  let url = child.url;
  let killsDone = false;
  const stats = { retries: 0, conflicts: 0 };

  // One client: its sends in order, each retried with the same key until it gets a 200; it
  // keeps sending until the last kill.
  const client = async (c: number) => {
    const results: Array<{ key: string; to: string; id: string }> = [];
    for (let i = 0; i < SENDS_PER_CLIENT || !killsDone; i++) {
      await sleep(10 + Math.random() * 20);
      const key = `chaos-${c}-${i}`;
      const to = `c${c}-n${i}@example.org`;
      for (let attempt = 0; ; attempt++) {
        assert.ok(attempt < 400, `${key} never got an answer`);
        try {
          const res = await fetch(`${url}/v2/emails`, {
            method: 'POST',
            headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ from: 'hello@acme.test', to, subject: `Chaos ${key}`, text: 'Hello' }),
          });
          const body = (await res.json()) as { id?: string };
          if (res.status === 200) {
            assert.ok(body.id, `${key}: 200 without an id`);
            results.push({ key, to, id: body.id });
            break;
          }
          // 409: the key is held by a request that died with its process (until its lease ends).
          if (res.status === 409) stats.conflicts++;
          else assert.ok([429, 503].includes(res.status), `${key}: ${res.status} ${JSON.stringify(body)}`);
        } catch {
          // The server is down: retry with the same key, as a client should.
        }
        stats.retries++;
        await sleep(50 + Math.random() * 100);
      }
    }
    return results;
  };

  const killer = (async () => {
    for (let k = 0; k < KILLS; k++) {
      await sleep(300 + Math.random() * 700);
      await child!.kill('SIGKILL');
      child = await startChildApp({ ...env, HTTP_PORT: String(await freePort()) });
      url = child.url;
    }
    killsDone = true;
  })();
  const sent = (await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)))).flat();
  await killer;
  // Held deliveries were cut by the kills; from now on the MTA answers.
  mta.release();

  const total = sent.length;
  assert.ok(total >= CLIENTS * SENDS_PER_CLIENT);
  assert.ok(stats.retries > 0, 'the kills landed while clients were sending');
  assert.equal(new Set(sent.map((s) => s.id)).size, total, 'one email per key');
  const db = app.running.ctx.db;
  const rows = await db.selectFrom('emails').select(['id', 'to', 'status', 'message_id']).where('workspace_id', '=', app.workspace.id).execute();
  assert.equal(rows.length, total, 'nothing accepted twice, nothing accepted without an id');
  assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(sent.map((s) => s.id)));
  const stuck = await db.selectFrom('idempotency_keys').select('key').where('workspace_id', '=', app.workspace.id).where('state', '=', 'pending').execute();
  assert.deepEqual(stuck, [], 'no key stuck');

  // Every email delivered, once: deliveries a killed worker held resume when their lease ends.
  await eventually(
    async () => (await db.selectFrom('emails').select('id').where('workspace_id', '=', app.workspace.id).where('status', '<>', 'delivered').execute()).length === 0,
    DELIVER_LEASE_MS + 60_000,
    200,
  );
  const byRecipient = new Map<string, number>();
  const messageIds = new Map<string, number>();
  for (const message of mta.accepted) {
    for (const to of message.rcptTo) byRecipient.set(to, (byRecipient.get(to) ?? 0) + 1);
    const id = /^Message-ID:\s*(\S+)/im.exec(message.raw.toString('utf8'))?.[1] ?? '';
    messageIds.set(id, (messageIds.get(id) ?? 0) + 1);
  }
  assert.equal(byRecipient.size, total, 'every recipient received its email');
  assert.deepEqual([...byRecipient.values()].filter((n) => n !== 1), [], 'no recipient twice');
  assert.deepEqual(new Set(messageIds.keys()), new Set(rows.map((r) => r.message_id)), 'the Message-IDs of the accepted emails');
  assert.deepEqual([...messageIds.values()].filter((n) => n !== 1), [], 'no Message-ID twice');
  t.diagnostic(`${total} sends, ${KILLS} kills, ${stats.retries} retries (${stats.conflicts} answered 409), ${mta.received} DATA received, ${mta.accepted.length} accepted`);
});
