// The transitions the SMTP listeners call for asynchronous reports: applyBounce (DSN to the
// VERP address) and applyComplaint (ARF), each with its event and suppression, idempotent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { applyBounce, applyComplaint, recordBouncedAtDelivery } from '../../../src/resources/emails/delivery/outcomes.ts';

let app: DeliveryApp;

before(async () => {
  app = await startDeliveryApp();
});
after(async () => {
  await app.close();
});

async function delivered(to: string): Promise<string> {
  const res = await app.api.post('/v2/emails', { from: 'hello@acme.test', to, subject: 'Report', text: 'Hi' });
  assert.equal(res.status, 200, res.text);
  await app.waitForStatus(res.body.id, 'delivered');
  return res.body.id;
}

async function suppressionOf(address: string) {
  const res = await app.api.get(`/v2/suppressions/${encodeURIComponent(address)}`);
  return res.status === 200 ? res.body : null;
}

test('a hard DSN after delivery: delivered → bounced, email.bounced, bounce suppression; once only', async () => {
  const id = await delivered('dsn-hard@example.org');
  const db = app.running.ctx.db;
  assert.equal(
    await applyBounce(db, id, { reason: 'Mailbox does not exist', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 unknown', hard: true }),
    true,
  );
  const row = await app.email(id);
  assert.equal(row.status, 'bounced');
  assert.equal(row.status_detail, '5.1.1 Mailbox does not exist');
  const suppression = await suppressionOf('dsn-hard@example.org');
  assert.equal(suppression.type, 'bounce');
  assert.equal(suppression.reason, '5.1.1 Mailbox does not exist');
  assert.equal(await applyBounce(db, id, { reason: 'again', hard: true }), false);
  const events = await app.eventsOf(id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.accepted', 'email.delivered', 'email.bounced'],
  );
  assert.deepEqual(events[2].object, {
    id,
    object: 'email',
    from: 'hello@acme.test',
    to: 'dsn-hard@example.org',
    subject: 'Report',
    status: 'bounced',
    bounce_reason: 'user_unknown',
    bounce_type: 'hard',
    meta: null,
    updated_at: row.updated_at,
    created_at: row.created_at,
  });
});

test('a DSN about the sender (reputation block) bounces with its reason but never suppresses the recipient', async () => {
  const id = await delivered('dsn-block@example.org');
  const db = app.running.ctx.db;
  assert.equal(
    await applyBounce(db, id, { reason: '550 5.7.1 Service unavailable, Client host blocked using Spamhaus', status: '5.7.1', hard: true }),
    true,
  );
  const row = await app.email(id);
  assert.deepEqual([row.status, row.bounce_reason, row.bounce_type], ['bounced', 'reputation_block', 'soft']);
  assert.equal(await suppressionOf('dsn-block@example.org'), null);
  const email = await app.api.get(`/v2/emails/${id}`);
  assert.deepEqual(email.body.bounce, {
    reason: 'reputation_block',
    type: 'soft',
    description: "Refused because of the sending IP's or domain's reputation or a blocklist.",
  });
  const listed = await app.api.get('/v2/emails?bounce_reason.exact=reputation_block');
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(
    listed.body.data.map((e: { id: string; bounce_reason: string }) => [e.id, e.bounce_reason]),
    [[id, 'reputation_block']],
  );
  const hard = await app.api.get('/v2/emails?bounce_type.exact=hard&bounce_reason.exact=reputation_block');
  assert.deepEqual(hard.body.data, []);
});

test('a soft (not hard) DSN bounces the email without a suppression', async () => {
  const id = await delivered('dsn-soft@example.org');
  assert.equal(await applyBounce(app.running.ctx.db, id, { reason: 'Mailbox full, gave up', status: '4.2.2', hard: false }), true);
  assert.equal((await app.email(id)).status, 'bounced');
  assert.equal(await suppressionOf('dsn-soft@example.org'), null);
});

test('a complaint: complained, email.complained, complaint suppression; once only; also after a bounce', async () => {
  const db = app.running.ctx.db;
  const id = await delivered('fbl@example.org');
  assert.equal(await applyComplaint(db, id, { reason: 'Marked as spam', feedbackType: 'abuse' }), true);
  assert.equal((await app.email(id)).status, 'complained');
  assert.equal((await suppressionOf('fbl@example.org')).type, 'complaint');
  assert.equal(await applyComplaint(db, id, { reason: 'again' }), false);
  // A complaint is final for bounces too (the mail arrived after all).
  assert.equal(await applyBounce(db, id, { reason: 'late', hard: true }), false);
  assert.deepEqual(
    (await app.eventsOf(id)).map((e) => e.type),
    ['email.accepted', 'email.delivered', 'email.complained'],
  );

  const bouncedFirst = await delivered('fbl-after-bounce@example.org');
  await applyBounce(db, bouncedFirst, { reason: 'gone', hard: true });
  assert.equal(await applyComplaint(db, bouncedFirst, { reason: 'spam' }), true);
});

test('reports for unknown, canceled or never-sent emails change nothing', async () => {
  const db = app.running.ctx.db;
  assert.equal(await applyBounce(db, 'em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp', { reason: 'x', hard: true }), false);
  assert.equal(await applyComplaint(db, 'em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp', { reason: 'x' }), false);
  const at = new Date(Date.now() + 3600_000).toISOString();
  const res = await app.api.post('/v2/emails', {
    from: 'hello@acme.test',
    to: 'not-yet@example.org',
    subject: 'Later',
    text: 'Hi',
    scheduled_at: at,
  });
  assert.equal(await applyBounce(db, res.body.id, { reason: 'forged', hard: true }), false);
  assert.equal((await app.email(res.body.id)).status, 'scheduled');
  assert.equal(await suppressionOf('not-yet@example.org'), null);
});

test('a synchronous "user unknown" is read with the command it answered: at RCPT TO the recipient is suppressed, after DATA it is its filter', async () => {
  const db = app.running.ctx.db;
  const at = new Date(Date.now() + 3600_000).toISOString();
  const bounced = async (to: string, command: string) => {
    const res = await app.api.post('/v2/emails', { from: 'hello@acme.test', to, subject: 'Later', text: 'Hi', scheduled_at: at });
    assert.equal(res.status, 200, res.text);
    // As an older caller records it: the reply and the command, no reason of its own.
    const attempt = {
      kind: 'permanent' as const,
      code: 550,
      enhancedCode: null,
      response: '550 User unknown',
      mxHost: 'mx.example.org',
      address: '127.0.0.1',
      command,
    };
    assert.equal(await recordBouncedAtDelivery(db, res.body.id, { ...attempt, attempts: [attempt] }), true);
    return app.email(res.body.id);
  };
  const atRcpt = await bounced('unknown-at-rcpt@example.org', 'RCPT TO');
  assert.deepEqual([atRcpt.bounce_reason, atRcpt.bounce_type], ['user_unknown', 'hard']);
  assert.equal((await suppressionOf('unknown-at-rcpt@example.org')).type, 'bounce');
  const afterData = await bounced('unknown-after-data@example.org', 'DATA');
  assert.deepEqual([afterData.bounce_reason, afterData.bounce_type], ['filtered', 'soft']);
  assert.equal(await suppressionOf('unknown-after-data@example.org'), null);
});
