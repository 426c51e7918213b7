// The send path's guarantees under concurrency, over HTTP, on both dialects: concurrent
// senders never overspend credits, and the sending limits are shared by every server process
// on one database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { databaseUrlOf, freePort, startChildApp, type ChildApp } from '../helpers/app.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { credits } from './email-helpers.ts';

let app: SendingApp;
before(async () => {
  app = await startSendingApp({ roles: ['api'] });
  await app.verifiedDomain('acme.test');
});
after(() => app.close());

const body = (to: string) => JSON.stringify({ from: 'hello@acme.test', to, subject: 'Hello', text: 'Hi' });

async function post(url: string, to: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/v2/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' },
    body: body(to),
  });
  return { status: res.status, body: await res.json() };
}

test('20 concurrent senders with credits for exactly 1,000 recipients: 1,000 accepted, the rest refused with 402', async () => {
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { credits: 1000, sendRate: 1_000_000, dailyLimit: 1_000_000 });
  const statuses = new Map<number, number>();
  const accepted: string[] = [];
  await Promise.all(
    Array.from({ length: 20 }, async (_, sender) => {
      // Each sender sends until it is refused twice (a refusal is final once the balance is 0).
      for (let i = 0, refused = 0; refused < 2; i++) {
        const res = await post(app.url, `s${sender}-${i}@example.org`);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 200) accepted.push(res.body.id);
        else {
          assert.equal(res.status, 402, JSON.stringify(res.body));
          assert.equal(res.body.error, 'Insufficient credits');
          refused++;
        }
      }
    }),
  );
  assert.equal(accepted.length, 1000);
  assert.equal(new Set(accepted).size, 1000);
  assert.equal(statuses.get(402), 40);
  assert.equal(await credits(app), 0);
  const stored = await app.running.ctx.db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', app.workspace.id)
    .executeTakeFirstOrThrow();
  assert.equal(Number(stored.n), 1000);
});

test('two server processes on one database share the per-second and daily limits', async () => {
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { credits: 1000, sendRate: 2, dailyLimit: 1_000_000 });
  const env = {
    DATABASE_URL: await databaseUrlOf(app),
    DATA_DIR: app.config.dataDir,
    HTTP_HOST: '127.0.0.1',
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DNS_SERVERS: app.dns.address,
  };
  const children: ChildApp[] = [];
  try {
    for (let n = 0; n < 2; n++)
      children.push(await startChildApp({ ...env, HTTP_PORT: String(await freePort()) }, ['serve', '--role', 'api']));
    const [a, b] = children;
    // Within one second: A and B take the two sends of the window, then both refuse. A round
    // that a slow machine stretches past the second is repeated in a fresh one.
    let round: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const started = Date.now();
      round = [];
      for (const [i, url] of [a.url, b.url, a.url, b.url].entries())
        round.push((await post(url, `limit-${attempt}-${i}@example.org`)).status);
      if (Date.now() - started < 900) break;
    }
    assert.deepEqual(round, [200, 200, 429, 429]);

    await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1_000_000, dailyLimit: 1 });
    const today = await post(b.url, 'daily@example.org');
    assert.equal(today.status, 429);
    assert.equal(today.body.error, 'Daily limit exceeded');
  } finally {
    for (const child of children) await child.kill();
  }
});
