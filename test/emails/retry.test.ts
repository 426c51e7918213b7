// POST /v2/emails/{id}/retry: allowed statuses, 30-day age, purged content, credits, the
// retry response shape, and the new email (source retry, original_id, no email.accepted).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { SendingApp } from '../helpers/sending.ts';
import { isoFromMs, nowMs } from '../../src/platform/clock.ts';
import {
  send,
  setEmail,
  emailRow,
  contentOf,
  credits,
  eventsFor,
  deliverJobs,
  DAY_MS,
  ISO_MICROS,
  startEmailsApp,
} from './email-helpers.ts';

let app: SendingApp;

before(async () => {
  app = await startEmailsApp();
});
after(() => app.close());

const cannotRetry = (message: string) => ({ error: 'Cannot retry email', message });
const PDF = Buffer.from('%PDF-1.4 retry').toString('base64');

test('a bounced email is sent again as a new accepted email with original_id', async () => {
  const sent = await send(app.api, {
    from: 'Acme <hello@acme.test>',
    to: ['Jane <jane@example.org>', 'other@example.org'],
    cc: 'copy@example.org',
    subject: 'Receipt',
    html: '<p>Receipt</p>',
    text: 'Receipt',
    headers: { 'X-Kind': 'receipt' },
    meta: { order: '7' },
    attachments: [{ filename: 'r.pdf', content: PDF, content_type: 'application/pdf' }],
  });
  const id = sent.ids['jane@example.org'];
  await setEmail(app, id, { status: 'bounced', status_detail: '550 5.1.1 no such user' });
  const before = await credits(app);

  const res = await app.api.post(`/v2/emails/${id}/retry`);
  assert.equal(res.status, 200, res.text);
  const retried = await emailRow(app, res.body.id);
  assert.deepEqual(res.body, {
    object: 'email',
    id: retried.id,
    original_id: id,
    token: retried.token,
    message_id: `<${retried.token}@acme.test>`,
    from: 'Acme <hello@acme.test>',
    to: 'jane@example.org',
    subject: 'Receipt',
    status: 'accepted',
    created_at: retried.created_at,
    message: `Email ${id} was queued again as ${retried.id}.`,
  });
  assert.notEqual(retried.id, id);
  assert.match(retried.created_at, ISO_MICROS);
  assert.equal(retried.source, 'retry');
  assert.equal(retried.original_id, id);
  assert.equal(retried.status, 'accepted');
  assert.equal(await credits(app), before - 1, 'one credit');
  assert.equal((await deliverJobs(app, retried.id)).length, 1);
  assert.deepEqual(await eventsFor(app, retried.id), [], 'retries emit no email.accepted');
  assert.equal((await emailRow(app, id)).status, 'bounced', 'the original is unchanged');
  const copies = await app.running.ctx.db.selectFrom('emails').select('to').where('original_id', '=', id).execute();
  assert.deepEqual(
    copies.map((c) => c.to),
    ['jane@example.org'],
    'only the failed recipient',
  );

  const read = (await app.api.get(`/v2/emails/${retried.id}`)).body;
  assert.equal(read.original_id, id);
  assert.equal(read.html, '<p>Receipt</p>');
  assert.equal(read.text, 'Receipt');
  assert.deepEqual(read.meta, { order: '7' });
  assert.equal(read.headers['X-Kind'], 'receipt');
  assert.equal(read.headers.To, 'Jane <jane@example.org>');
  assert.deepEqual(read.cc, []);
  assert.deepEqual(
    read.attachments.map((a: { filename: string }) => a.filename),
    ['r.pdf'],
  );

  // A cc copy is retried to that address alone.
  const ccId = sent.ids['copy@example.org'];
  await setEmail(app, ccId, { status: 'failed' });
  const ccRetry = await app.api.post(`/v2/emails/${ccId}/retry`);
  assert.equal(ccRetry.status, 200, ccRetry.text);
  assert.equal(ccRetry.body.to, 'copy@example.org');
});

test('failed, suppressed and held may be retried; other statuses answer 422', async () => {
  for (const status of ['failed', 'suppressed', 'held']) {
    const sent = await send(app.api, { to: `${status}-ok@example.org` });
    await setEmail(app, sent.id, { status });
    const res = await app.api.post(`/v2/emails/${sent.id}/retry`);
    assert.equal(res.status, 200, `${status}: ${res.text}`);
    assert.equal(res.body.status, 'accepted');
  }
  for (const status of [
    'accepted',
    'scheduled',
    'delivered',
    'loaded',
    'clicked',
    'attempted',
    'rejected',
    'received',
    'complained',
    'canceled',
  ]) {
    const sent = await send(app.api, { to: `${status}-no@example.org` });
    await setEmail(app, sent.id, { status });
    const res = await app.api.post(`/v2/emails/${sent.id}/retry`);
    assert.equal(res.status, 422, status);
    assert.deepEqual(res.body, cannotRetry(`Only bounced, failed, suppressed or held emails can be retried; this email is ${status}.`));
  }
});

test('emails older than 30 days and purged content are refused', async () => {
  const old = await send(app.api, { to: 'old@example.org' });
  await setEmail(app, old.id, { status: 'bounced', created_at: isoFromMs(nowMs() - 31 * DAY_MS) });
  const tooOld = await app.api.post(`/v2/emails/${old.id}/retry`);
  assert.equal(tooOld.status, 422);
  assert.deepEqual(tooOld.body, cannotRetry('Only emails younger than 30 days can be retried.'));

  const purged = await send(app.api, { to: 'purged@example.org' });
  await setEmail(app, purged.id, { status: 'failed' });
  const content = await contentOf(app, purged.id);
  await app.running.ctx.db
    .updateTable('email_contents')
    .set({ purged_at: isoFromMs(nowMs()) })
    .where('id', '=', content.id)
    .execute();
  const gone = await app.api.post(`/v2/emails/${purged.id}/retry`);
  assert.equal(gone.status, 422);
  assert.deepEqual(gone.body, cannotRetry('The content of this email was purged after the retention period; it cannot be sent again.'));
});

test('a suppressed email is retried despite its suppression, which stays for every other send', async () => {
  assert.equal((await app.api.post('/v2/suppressions', { email: 'blocked@example.org' })).status, 201);
  const blocked = await send(app.api, { to: 'blocked@example.org' });
  assert.equal(blocked.status, 'suppressed');
  const before = await credits(app);
  const retried = await app.api.post(`/v2/emails/${blocked.id}/retry`);
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.status, 'accepted');
  assert.equal(retried.body.original_id, blocked.id);
  assert.equal((await emailRow(app, retried.body.id)).status, 'accepted');
  assert.equal((await deliverJobs(app, retried.body.id)).length, 1, 'queued for delivery');
  assert.equal(await credits(app), before - 1, 'one credit');
  assert.equal((await app.api.get('/v2/suppressions/blocked%40example.org')).status, 200, 'the suppression stays');
  const again = await send(app.api, { to: 'blocked@example.org' });
  assert.equal(again.status, 'suppressed', 'a new send is still suppressed');
});

test('a suppressed email answers 402 when no credit is left, and stays suppressed', async () => {
  const { api } = await app.newWorkspace({ credits: 0 });
  await app.verifiedDomain('broke.test', api);
  assert.equal((await api.post('/v2/suppressions', { email: 'held-back@example.org' })).status, 201);
  const blocked = await send(api, { from: 'a@broke.test', to: 'held-back@example.org' });
  assert.equal(blocked.status, 'suppressed', 'a suppressed send costs nothing');
  const res = await api.post(`/v2/emails/${blocked.id}/retry`);
  assert.equal(res.status, 402);
  assert.deepEqual(res.body, { error: 'Insufficient credits', message: 'This request needs 1 credit but the workspace has 0 available.' });
  assert.equal((await emailRow(app, blocked.id)).status, 'suppressed');
});

test('402 with required and available credits, nothing stored; 404; full key only', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 1 });
  await app.verifiedDomain('poor.test', api);
  const sent = await send(api, { from: 'a@poor.test', to: 'x@example.org' });
  await setEmail(app, sent.id, { status: 'bounced' });
  const res = await api.post(`/v2/emails/${sent.id}/retry`);
  assert.equal(res.status, 402);
  assert.deepEqual(res.body, { error: 'Insufficient credits', message: 'This request needs 1 credit but the workspace has 0 available.' });
  const rows = await app.running.ctx.db.selectFrom('emails').select('id').where('workspace_id', '=', workspace.id).execute();
  assert.equal(rows.length, 1, 'no new email');

  const unknown = await app.api.post('/v2/emails/em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp/retry');
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, {
    error: 'Email not found',
    message: 'No email with id em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp exists in this workspace.',
  });
  const theirs = await app.api.post(`/v2/emails/${sent.id}/retry`);
  assert.equal(theirs.status, 404, "another workspace's email");

  const sending = (await api.post('/v2/api-keys', { name: 'sender', scope: 'sending' })).body;
  const forbidden = await app.as(sending.key).post(`/v2/emails/${sent.id}/retry`);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.body.error, 'Forbidden');
});
