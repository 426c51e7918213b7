// Delivery over SMTP to a loopback sink found through the loopback DNS: MIME, DKIM, VERP,
// outcomes (2xx, 4xx then 2xx, 5xx, retry window), attempts and events.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { eventually } from '../../helpers/app.ts';
import { parseVerpAddress } from '../../../src/mail/verp.ts';
import { isoFromMs, nowMs } from '../../../src/platform/clock.ts';
import { retryDelayMs, retryDeadlineMs } from '../../../src/resources/emails/delivery/worker.ts';

let app: DeliveryApp;

before(async () => {
  app = await startDeliveryApp();
});
after(async () => {
  await app.close();
});

async function send(body: Record<string, unknown>) {
  const res = await app.api.post('/v2/emails', {
    from: 'Acme <hello@acme.test>',
    subject: 'Hello',
    html: '<p>Hi</p>',
    text: 'Hi',
    ...body,
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

function messagesTo(address: string) {
  return app.sink.messages.filter((m) => m.rcptTo.includes(address));
}

test('each recipient gets its own signed message: our Message-ID, To/Cc headers, no Bcc, VERP envelope', async () => {
  const sent = await send({
    to: ['Jane Doe <jane@example.org>', 'joe@example.org'],
    cc: 'carol@example.org',
    bcc: 'secret@example.org',
    headers: { 'X-Campaign': 'spring' },
    attachments: [{ filename: 'hello.txt', content_type: 'text/plain', content: Buffer.from('attached text').toString('base64') }],
  });
  const ids: Record<string, string> = sent.ids;
  assert.equal(Object.keys(ids).length, 4);
  for (const id of Object.values(ids)) await app.waitForStatus(id, 'delivered');

  for (const [address, id] of Object.entries(ids)) {
    const copies = messagesTo(address);
    assert.equal(copies.length, 1, `one message for ${address}`);
    const [message] = copies;
    assert.deepEqual(message.rcptTo, [address]);
    assert.deepEqual(parseVerpAddress(message.mailFrom, app.running.ctx.verpSecret), { id, host: 'postlane.acme.test' });

    const row = await app.email(id);
    const parsed = await app.parse(message.raw);
    assert.equal(parsed.messageId, row.message_id);
    assert.equal(parsed.headers.has('bcc'), false);
    assert.doesNotMatch(message.raw.toString('latin1'), /secret@example\.org/);
    assert.equal((parsed.to as any).text, '"Jane Doe" <jane@example.org>, joe@example.org');
    assert.equal((parsed.cc as any).text, 'carol@example.org');
    assert.equal((parsed.from as any).text, '"Acme" <hello@acme.test>');
    assert.equal(parsed.headers.get('x-campaign'), 'spring');
    assert.equal(parsed.attachments[0].filename, 'hello.txt');
    assert.equal(parsed.attachments[0].content.toString(), 'attached text');
    assert.equal(parsed.text?.trim(), 'Hi');

    const dkim = await app.verifyDkim(message.raw);
    assert.equal(dkim.results.length, 1);
    assert.equal(dkim.results[0].status.result, 'pass', JSON.stringify(dkim.results[0].status));
    assert.equal(dkim.results[0].signingDomain, 'acme.test');
    assert.equal(dkim.results[0].selector, 'postlane');

    assert.ok(row.delivered_at);
    const attempts = await app.attemptsOf(id);
    assert.deepEqual(
      attempts.map((a) => [a.outcome, a.smtp_code, a.mx_host]),
      [['delivered', 250, 'mx.example.org']],
    );
    const events = await app.eventsOf(id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['email.accepted', 'email.delivered'],
    );
    assert.deepEqual(events[1].object, {
      id,
      object: 'email',
      from: 'Acme <hello@acme.test>',
      to: address,
      subject: 'Hello',
      status: 'delivered',
      meta: null,
      updated_at: row.updated_at,
      created_at: row.created_at,
    });
    await eventually(async () => (await app.jobOf(id)) === undefined, 5000);
  }
});

test('a 451 is retried with backoff (attempted + email.attempted) and then delivered', async () => {
  app.sink.addRule({ match: 'greylisted@example.org', reply: { code: 451, message: '4.7.1 Greylisted, try again later' }, times: 1 });
  const { id } = await send({ to: 'greylisted@example.org' });
  const attempted = await app.waitForStatus(id, 'attempted');
  assert.match(attempted.status_detail, /451/);
  const job = await app.jobOf(id);
  // Backoff: the next try is about a minute away, within the window.
  assert.ok(job.run_at > nowMs() + 30_000, `next try at ${isoFromMs(job.run_at)}`);
  const events = await app.eventsOf(id);
  const event = events.find((e) => e.type === 'email.attempted')!;
  assert.equal(event.object.status, 'attempted');
  assert.equal(event.object.smtp_code, 451);
  assert.equal(event.object.enhanced_code, '4.7.1');
  assert.equal(event.object.mx_host, 'mx.example.org');
  assert.equal(event.object.next_attempt_at, isoFromMs(job.run_at));
  assert.equal(messagesTo('greylisted@example.org').length, 0);

  await app.makeDue(id);
  await app.waitForStatus(id, 'delivered');
  assert.equal(messagesTo('greylisted@example.org').length, 1);
  assert.deepEqual(
    (await app.attemptsOf(id)).map((a) => [a.outcome, a.smtp_code, a.enhanced_code]),
    [
      ['temporary', 451, '4.7.1'],
      ['delivered', 250, '2.0.0'],
    ],
  );
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.accepted', 'email.attempted', 'email.delivered'],
  );
});

test('a 550 bounces the email, adds a bounce suppression and emits email.bounced', async () => {
  app.sink.addRule({ match: 'nobody@example.org', reply: { code: 550, message: '5.1.1 <nobody@example.org>: User unknown' } });
  const { id } = await send({ to: 'nobody@example.org' });
  const row = await app.waitForStatus(id, 'bounced');
  assert.match(row.status_detail, /550 5\.1\.1/);
  const suppression = await app.api.get('/v2/suppressions/nobody%40example.org');
  assert.equal(suppression.status, 200, suppression.text);
  assert.equal(suppression.body.type, 'bounce');
  assert.match(suppression.body.reason, /User unknown/);
  const events = await app.eventsOf(id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.accepted', 'email.bounced'],
  );
  assert.equal(events[1].object.status, 'bounced');
  // Automatic suppressions emit no suppression.created.
  const created = await app.running.ctx.db.selectFrom('events').select('data').where('type', '=', 'suppression.created').execute();
  assert.equal(created.filter((e) => JSON.parse(e.data).email === 'nobody@example.org').length, 0);
  assert.deepEqual(
    (await app.attemptsOf(id)).map((a) => [a.outcome, a.smtp_code]),
    [['permanent', 550]],
  );
  await eventually(async () => (await app.jobOf(id)) === undefined, 5000);
});

test('a domain without mail hosts (NXDOMAIN) bounces without any SMTP connection', async () => {
  const { id } = await send({ to: 'someone@nowhere.example' });
  const row = await app.waitForStatus(id, 'bounced');
  assert.match(row.status_detail, /does not exist/);
  assert.deepEqual(
    (await app.attemptsOf(id)).map((a) => [a.outcome, a.smtp_code, a.enhanced_code]),
    [['permanent', null, '5.1.2']],
  );
});

test('temporary failures until the retry window has run out end in failed + email.failed', async () => {
  app.sink.addRule({ match: 'full@example.org', reply: { code: 452, message: '4.2.2 Mailbox full' } });
  const { id } = await send({ to: 'full@example.org' });
  await app.waitForStatus(id, 'attempted');
  // Move the email three days and a bit into the past: its window (72 h) is over.
  await app.running.ctx.db
    .updateTable('emails')
    .set({ created_at: isoFromMs(nowMs() - 73 * 3600_000) })
    .where('id', '=', id)
    .execute();
  await app.makeDue(id);
  const row = await app.waitForStatus(id, 'failed');
  assert.match(row.status_detail, /Not delivered within 72 hours; last answer: mx\.example\.org: 452 4\.2\.2 Mailbox full/);
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.accepted', 'email.attempted', 'email.failed'],
  );
  assert.deepEqual(
    (await app.attemptsOf(id)).map((a) => a.outcome),
    ['temporary', 'temporary'],
  );
  await eventually(async () => (await app.jobOf(id)) === undefined, 5000);
  // A temporary failure never suppresses.
  assert.equal((await app.api.get('/v2/suppressions/full%40example.org')).status, 404);
});

test('a job that comes due before the email is scheduled moves itself to scheduled_at', async () => {
  const at = new Date(Date.now() + 3600_000).toISOString();
  const { id } = await send({ to: 'later-on@example.org', scheduled_at: at });
  await app.makeDue(id);
  const job = await eventually(async () => {
    const j = await app.jobOf(id);
    return j && j.locked_until === null && j.attempts >= 1 && j;
  }, 5000);
  assert.equal(job.run_at, Date.parse(at));
  assert.equal((await app.email(id)).status, 'scheduled');
  assert.equal(messagesTo('later-on@example.org').length, 0);
  // Once the time has come (here: the email says so), it is delivered.
  await app.running.ctx.db
    .updateTable('emails')
    .set({ scheduled_at: isoFromMs(nowMs() - 1000) })
    .where('id', '=', id)
    .execute();
  await app.makeDue(id);
  await app.waitForStatus(id, 'delivered');
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.scheduled', 'email.delivered'],
  );
});

test('a canceled email is not sent: its job completes without a try', async () => {
  const at = new Date(Date.now() + 3600_000).toISOString();
  const { id } = await send({ to: 'changed-mind@example.org', scheduled_at: at });
  await app.running.ctx.db
    .updateTable('emails')
    .set({ status: 'canceled', scheduled_at: isoFromMs(nowMs() - 1000) })
    .where('id', '=', id)
    .execute();
  await app.makeDue(id);
  await eventually(async () => (await app.jobOf(id)) === undefined, 5000);
  assert.equal((await app.email(id)).status, 'canceled');
  assert.equal((await app.attemptsOf(id)).length, 0);
  assert.equal(messagesTo('changed-mind@example.org').length, 0);
});

test('emails delivered together: each once, with its own detail and one email.delivered, and no job left', async () => {
  const sent = await Promise.all(Array.from({ length: 12 }, (_, i) => send({ to: `together-${i}@example.org` })));
  for (const { id } of sent) await app.waitForStatus(id, 'delivered');
  for (const [i, { id }] of sent.entries()) {
    assert.equal(messagesTo(`together-${i}@example.org`).length, 1);
    const email = await app.email(id);
    assert.match(email.status_detail, /^mx\.example\.org: 250/);
    assert.deepEqual(
      (await app.eventsOf(id)).map((e) => e.type),
      ['email.accepted', 'email.delivered'],
    );
    assert.equal((await app.attemptsOf(id)).length, 1);
    await eventually(async () => (await app.jobOf(id)) === undefined, 5000);
  }
});

test('backoff and window arithmetic', () => {
  assert.equal(
    retryDelayMs(1, () => 0.5),
    60_000,
  );
  assert.equal(
    retryDelayMs(2, () => 0.5),
    120_000,
  );
  assert.equal(
    retryDelayMs(4, () => 0.5),
    480_000,
  );
  assert.equal(
    retryDelayMs(20, () => 0.5),
    3600_000,
  );
  assert.equal(
    retryDelayMs(1, () => 0),
    54_000,
  );
  const created = '2030-01-01T00:00:00.000000Z';
  assert.equal(retryDeadlineMs({ created_at: created, scheduled_at: null }, 72), Date.parse(created) + 72 * 3600_000);
  // A scheduled email's window starts when it is due.
  assert.equal(
    retryDeadlineMs({ created_at: created, scheduled_at: '2030-01-05T00:00:00.000000Z' }, 1),
    Date.parse('2030-01-05T01:00:00Z'),
  );
});

test('an email whose content was purged before it was due fails with email.failed, without a try', async () => {
  const at = new Date(Date.now() + 3600_000).toISOString();
  const { id } = await send({ to: 'too-late@example.org', scheduled_at: at });
  const row = await app.email(id);
  const db = app.running.ctx.db;
  await db
    .updateTable('email_contents')
    .set({ purged_at: isoFromMs(nowMs()) })
    .where('id', '=', row.content_id)
    .execute();
  await db
    .updateTable('emails')
    .set({ scheduled_at: isoFromMs(nowMs() - 1000) })
    .where('id', '=', id)
    .execute();
  await app.makeDue(id);
  const failed = await app.waitForStatus(id, 'failed');
  assert.equal(failed.status_detail, 'The message content is no longer stored');
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.scheduled', 'email.failed'],
  );
  assert.equal((await app.attemptsOf(id)).length, 0);
  assert.equal(messagesTo('too-late@example.org').length, 0);
});
