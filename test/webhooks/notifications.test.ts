// As https://emailit.com/docs/webhooks/retries-and-failures.md says: the workspace's owners (its
// members' account emails) are emailed when a webhook request fails for the 3rd time and when the
// webhook is disabled after 3 days without a success. Real mail to an SMTP sink found through the
// loopback DNS server's MX records.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { startTestApp, eventually } from '../helpers/app.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import { emitEvent } from '../../src/platform/events.ts';
import { resetClock, shiftClock } from '../../src/platform/clock.ts';
import { retryDelayMs } from '../../src/resources/webhooks/policy.ts';
import { NOTIFY_JOB } from '../../src/resources/notifications/service.ts';

after(() => resetClock());

test('owners are emailed when requests fail for the 3rd time and when the webhook is disabled, once each', async (t) => {
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ rules: [] });
  const receiver = await startWebhookReceiver();
  t.after(async () => {
    await receiver.close();
    await sink.close();
    await dns.close();
  });
  dns.set('receiver.test', 'A', ['127.0.0.1']);
  dns.set('owner.test', 'MX', [{ exchange: 'mx.owner.test', priority: 10 }]);
  dns.set('mx.owner.test', 'A', ['127.0.0.1']);
  const app = await startTestApp({
    env: {
      DNS_SERVERS: dns.address,
      MX_PORT: String(sink.port),
      MAIL_HOSTNAME: 'mail.postlane.test',
      ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '50',
    },
    workspace: { name: 'Acme', plan: 'business', members: ['owner@owner.test', 'ops@owner.test'] },
    jobPollMs: 50,
  });
  t.after(() => app.close());

  receiver.setDefault({ status: 500, body: 'down' });
  const created = await app.api.post('/v2/webhooks', { name: 'orders', url: `${receiver.url}/hook`, all_events: true });
  assert.equal(created.status, 201);
  const hookId = created.body.id;
  const emit = (id: string) =>
    app.running.ctx.db
      .transaction()
      .execute((tx) => emitEvent(tx, app.workspace.id, 'email.delivered', { id, object: 'email', status: 'delivered' }));
  const attempts = async () => ((await app.api.get(`/v2/webhooks/${hookId}/requests`)).body.data as any[]).map((r) => r.attempts);
  // Two requests fail side by side: one notice for the run of failures, not one per request.
  await emit('em_1');
  await eventually(async () => (await attempts()).join() === '1');
  await emit('em_2');
  await eventually(async () => (await attempts()).join() === '1,1');
  // Notices are sent before the clock moves on: a jump of hours would expire their jobs' leases.
  const noticesSent = () =>
    eventually(
      async () => (await app.running.ctx.db.selectFrom('jobs').select('id').where('type', '=', NOTIFY_JOB).execute()).length === 0,
    );
  const reach = async (n: number) => {
    shiftClock(retryDelayMs(n - 1)! + 60_000);
    await eventually(async () => (await attempts()).includes(n));
    await noticesSent();
    shiftClock(61_000); // past the pause a failure puts before the webhook's next request
    await eventually(async () => (await attempts()).join() === `${n},${n}`);
    await noticesSent();
  };
  await reach(2);
  assert.equal(sink.messages.length, 0, 'nothing after two failures');
  await reach(3);

  const failing = await sink.waitForMessages(2, 10_000);
  assert.deepEqual(
    failing
      .map((m) => m.rcptTo)
      .flat()
      .sort(),
    ['ops@owner.test', 'owner@owner.test'],
  );
  for (const message of failing) {
    assert.equal(message.mailFrom, '', 'the null envelope sender: a notice never draws a bounce');
    const parsed = await simpleParser(message.raw);
    assert.equal(parsed.subject, 'Webhook "orders" is failing');
    assert.equal(parsed.from?.value[0].address, 'notifications@mail.postlane.test');
    assert.equal(parsed.headers.get('auto-submitted'), 'auto-generated');
    assert.match(parsed.text ?? '', /workspace "Acme"/);
    assert.match(parsed.text ?? '', new RegExp(`${receiver.url}/hook`));
    assert.match(parsed.text ?? '', /failed 3 times; the last answer was: HTTP 500/);
  }

  for (let n = 4; n <= 10; n++) await reach(n);
  // The 11th attempt comes 3 days after the first failure: the webhook is disabled, and the
  // other request, waiting for its own 11th, fails with it.
  shiftClock(retryDelayMs(10)! + 60_000);
  await eventually(async () => (await app.api.get(`/v2/webhooks/${hookId}`)).body.enabled === false);
  const all = await sink.waitForMessages(4, 10_000);
  const disabled = all.slice(2);
  assert.deepEqual(
    disabled
      .map((m) => m.rcptTo)
      .flat()
      .sort(),
    ['ops@owner.test', 'owner@owner.test'],
  );
  for (const message of disabled) {
    const parsed = await simpleParser(message.raw);
    assert.equal(parsed.subject, 'Webhook "orders" was disabled');
    assert.match(parsed.text ?? '', /has succeeded for 3 days, so it was disabled/);
  }
  // Once each: not for the second request's 3rd failure, nor for attempts 4 to 11.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(sink.messages.length, 4);
});
