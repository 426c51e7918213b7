// Rescheduling (POST /v2/emails/{id}) and canceling (POST /v2/emails/{id}/cancel): the
// 3-minute rule, the deliver job moved or removed with the email, email.canceled.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { SendingApp } from '../helpers/sending.ts';
import { isoFromMs, nowMs } from '../../src/platform/clock.ts';
import { send, setEmail, emailRow, eventsFor, deliverJobs, startEmailsApp } from './email-helpers.ts';

let app: SendingApp;

before(async () => {
  app = await startEmailsApp();
});
after(() => app.close());

const MINUTE = 60_000;
const inMinutes = (n: number) => isoFromMs(nowMs() + n * MINUTE);
const notFound = (id: string) => ({ error: 'Email not found', message: `No email with id ${id} exists in this workspace.` });
const cannotReschedule = (message: string) => ({ error: 'Cannot reschedule email', message });
const cannotCancel = (message: string) => ({ error: 'Cannot cancel email', message });
const BAD_TIME =
  'scheduled_at must be at least 3 minutes in the future: an ISO 8601 date-time with a time zone, or English such as "tomorrow at 9am" (UTC).';

test('reschedule moves the email and its deliver job; ISO 8601 or English', async () => {
  const sent = await send(app.api, { to: ['a@example.org', 'b@example.org'], scheduled_at: inMinutes(60) });
  const id = sent.ids['a@example.org'];
  const other = sent.ids['b@example.org'];
  const otherJobBefore = (await deliverJobs(app, other))[0].run_at;

  const target = new Date(Math.floor(nowMs() / 1000) * 1000 + 2 * 60 * MINUTE);
  const res = await app.api.post(`/v2/emails/${id}`, { scheduled_at: target.toISOString().replace('.000Z', '+00:00') });
  assert.equal(res.status, 200, res.text);
  const expectedAt = isoFromMs(target.getTime());
  assert.equal(res.body.id, id);
  assert.equal(res.body.object, 'email');
  assert.equal(res.body.status, 'scheduled');
  assert.equal(res.body.scheduled_at, expectedAt);
  assert.equal(res.body.message, `Email rescheduled to ${expectedAt}.`);
  const row = await emailRow(app, id);
  assert.equal(row.scheduled_at, expectedAt);
  assert.equal(res.body.updated_at, row.updated_at);
  assert.ok(row.updated_at > row.created_at);
  const jobs = await deliverJobs(app, id);
  assert.equal(jobs.length, 1);
  assert.equal(Number(jobs[0].run_at), target.getTime());
  assert.equal(jobs[0].payload, `{"email_id":"${id}"}`);
  assert.equal((await deliverJobs(app, other))[0].run_at, otherJobBefore, 'the other copy keeps its time');

  const english = await app.api.post(`/v2/emails/${id}`, { scheduled_at: 'in 3 days' });
  assert.equal(english.status, 200, english.text);
  const at = Date.parse(english.body.scheduled_at);
  assert.ok(Math.abs(at - (nowMs() + 3 * 1440 * MINUTE)) < MINUTE, english.body.scheduled_at);
  assert.equal(Number((await deliverJobs(app, id))[0].run_at), Math.floor(at));
  assert.deepEqual(await eventsFor(app, id).then((events) => events.map((e) => e.type)), ['email.scheduled']);
});

test('reschedule refuses emails not scheduled, inside the last 3 minutes, and new times under 3 minutes away', async () => {
  const accepted = await send(app.api, { to: 'now@example.org' });
  const res = await app.api.post(`/v2/emails/${accepted.id}`, { scheduled_at: inMinutes(60) });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body, cannotReschedule('Only scheduled emails can be rescheduled; this email is accepted.'));

  const soon = await send(app.api, { to: 'soon@example.org', scheduled_at: inMinutes(2) });
  const tooLate = await app.api.post(`/v2/emails/${soon.id}`, { scheduled_at: inMinutes(60) });
  assert.equal(tooLate.status, 422);
  assert.deepEqual(tooLate.body, cannotReschedule('This email is due in less than 3 minutes; it can no longer be rescheduled.'));

  const later = await send(app.api, { to: 'later@example.org', scheduled_at: inMinutes(60) });
  for (const value of [inMinutes(2), inMinutes(-10), 'not a date at all', '1893456000', '']) {
    const r = await app.api.post(`/v2/emails/${later.id}`, { scheduled_at: value });
    assert.equal(r.status, 422, value);
    assert.deepEqual(r.body, cannotReschedule(BAD_TIME));
  }
  assert.equal((await emailRow(app, later.id)).scheduled_at, later.scheduled_at, 'unchanged');

  const missing = await app.api.post(`/v2/emails/${later.id}`, {});
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'Bad Request');
  const wrongType = await app.api.post(`/v2/emails/${later.id}`, { scheduled_at: 1893456000 });
  assert.equal(wrongType.status, 400);

  const unknown = await app.api.post('/v2/emails/em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp', { scheduled_at: inMinutes(60) });
  assert.deepEqual([unknown.status, unknown.body], [404, notFound('em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp')]);
  const sending = (await app.api.post('/v2/api-keys', { name: 'sender-reschedule', scope: 'sending' })).body;
  const forbidden = await app.as(sending.key).post(`/v2/emails/${later.id}`, { scheduled_at: inMinutes(60) });
  assert.equal(forbidden.status, 403);
});

test('cancel a scheduled email: status canceled, email.canceled, deliver job removed', async () => {
  const sent = await send(app.api, { to: 'cancel-me@example.org', scheduled_at: inMinutes(30), meta: { a: 'b' } });
  assert.equal((await deliverJobs(app, sent.id)).length, 1);
  const res = await app.api.post(`/v2/emails/${sent.id}/cancel`);
  assert.equal(res.status, 200, res.text);
  const row = await emailRow(app, sent.id);
  assert.equal(row.status, 'canceled');
  assert.deepEqual(res.body, {
    object: 'email',
    id: sent.id,
    type: 'outbound',
    token: sent.token,
    message_id: sent.message_id,
    from: sent.from,
    to: 'cancel-me@example.org',
    subject: 'Hello',
    status: 'canceled',
    scheduled_at: sent.scheduled_at,
    created_at: sent.created_at,
    updated_at: row.updated_at,
    delivered_at: null,
    size: Number(row.size),
    tracking: { loads: false, clicks: false },
    meta: { a: 'b' },
    original_id: null,
    message: 'Email canceled.',
  });
  assert.deepEqual(await deliverJobs(app, sent.id), []);
  const events = await eventsFor(app, sent.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.scheduled', 'email.canceled'],
  );
  assert.deepEqual(events[1].object, {
    id: sent.id,
    object: 'email',
    from: sent.from,
    to: 'cancel-me@example.org',
    subject: 'Hello',
    status: 'canceled',
    meta: { a: 'b' },
    updated_at: row.updated_at,
    created_at: sent.created_at,
  });
  assert.deepEqual((await app.api.get(`/v2/email/${sent.id}`)).body, { status: 'canceled' });

  const again = await app.api.post(`/v2/emails/${sent.id}/cancel`);
  assert.equal(again.status, 422);
  assert.deepEqual(
    again.body,
    cannotCancel('Only scheduled, accepted or attempted emails that are not yet delivered can be canceled; this email is canceled.'),
  );
});

test('cancel works for accepted and attempted emails, not once delivered, started, or due within 3 minutes', async () => {
  const accepted = await send(app.api, { to: 'queued@example.org' });
  const ok = await app.api.post(`/v2/emails/${accepted.id}/cancel`);
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.status, 'canceled');
  assert.deepEqual(await deliverJobs(app, accepted.id), []);

  const attempted = await send(app.api, { to: 'retrying@example.org' });
  await setEmail(app, attempted.id, { status: 'attempted' });
  const ok2 = await app.api.post(`/v2/emails/${attempted.id}/cancel`);
  assert.equal(ok2.status, 200, ok2.text);
  assert.equal((await emailRow(app, attempted.id)).status, 'canceled');

  for (const status of ['delivered', 'bounced', 'failed', 'suppressed']) {
    const sent = await send(app.api, { to: `${status}@example.org` });
    await setEmail(app, sent.id, { status });
    const r = await app.api.post(`/v2/emails/${sent.id}/cancel`);
    assert.equal(r.status, 422, status);
    assert.deepEqual(
      r.body,
      cannotCancel(`Only scheduled, accepted or attempted emails that are not yet delivered can be canceled; this email is ${status}.`),
    );
  }

  const soon = await send(app.api, { to: 'due-soon@example.org', scheduled_at: inMinutes(2) });
  const late = await app.api.post(`/v2/emails/${soon.id}/cancel`);
  assert.equal(late.status, 422);
  assert.deepEqual(late.body, cannotCancel('This email is due in less than 3 minutes; it can no longer be canceled.'));

  // A worker holds the deliver job's lease: delivery has started.
  const busy = await send(app.api, { to: 'in-flight@example.org' });
  await app.running.ctx.db
    .updateTable('jobs')
    .set({ locked_until: Math.floor(nowMs() + MINUTE), locked_by: 'worker-1' })
    .where('type', '=', 'email.deliver')
    .where('payload', '=', `{"email_id":"${busy.id}"}`)
    .execute();
  const started = await app.api.post(`/v2/emails/${busy.id}/cancel`);
  assert.equal(started.status, 422);
  assert.deepEqual(started.body, cannotCancel('Delivery of this email has already started; it can no longer be canceled.'));
  assert.equal((await emailRow(app, busy.id)).status, 'accepted');
  assert.equal((await deliverJobs(app, busy.id)).length, 1);
  assert.deepEqual(
    (await eventsFor(app, busy.id)).map((e) => e.type),
    ['email.accepted'],
  );

  const unknown = await app.api.post('/v2/emails/em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp/cancel');
  assert.deepEqual([unknown.status, unknown.body], [404, notFound('em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp')]);
  const sending = (await app.api.post('/v2/api-keys', { name: 'sender-cancel', scope: 'sending' })).body;
  assert.equal((await app.as(sending.key).post(`/v2/emails/${busy.id}/cancel`)).status, 403);
});
