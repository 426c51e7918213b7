// POST /v2/emails/{id}/forward: the forwarded block and notes, unchanged resends, sending
// rules, validation, inbound and purged refusals, the hourly limit and Idempotency-Key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { SendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { nowIso } from '../../src/platform/clock.ts';
import { send, emailRow, contentOf, credits, eventsFor, deliverJobs, insertInbound, startEmailsApp } from './email-helpers.ts';
import type { ApiClient } from '../helpers/app.ts';

let app: SendingApp;

before(async () => {
  app = await startEmailsApp('other.test');
});
after(() => app.close());

const PDF = Buffer.from('%PDF-1.4 forward').toString('base64');

/** A fresh workspace (the forward limit is per workspace: 3 an hour). */
async function workspace(name: string, input: { credits?: number } = {}) {
  const ws = await app.newWorkspace(input);
  await app.verifiedDomain(name, ws.api);
  await updateWorkspace(app.running.ctx.db, ws.workspace.id, { sendRate: 1000 });
  return ws;
}

/** Forgets a workspace's forwards of the last hour (these tests forward more than 3 times). */
async function resetForwardLimit(workspaceId: string) {
  await app.running.ctx.db.deleteFrom('forward_counts').where('workspace_id', '=', workspaceId).execute();
}

async function original(api: ApiClient, from = 'Acme <hello@acme.test>') {
  return send(api, {
    from,
    to: 'Jane <jane@example.org>',
    reply_to: 'support@' + from.replace(/.*@|>/g, ''),
    subject: 'Order <7>',
    html: '<p>Your order</p>',
    text: 'Your order',
    headers: { 'X-Order': '7' },
    attachments: [{ filename: 'order.pdf', content: PDF, content_type: 'application/pdf' }],
  });
}

test('forward with the forwarded-message block: Fwd: subject, note, original content and attachments', async () => {
  const { api, workspace: ws } = await workspace('fwd.test');
  const sent = await original(api, 'Shop <shop@fwd.test>');
  const before = await credits(app, ws.id);
  const res = await api.post(`/v2/emails/${sent.id}/forward`, {
    to: ['boss@example.org', 'Ops <ops@example.org>'],
    include_headers: true,
    comment: 'Please check <this>\nthanks',
  });
  assert.equal(res.status, 200, res.text);
  const body = res.body;
  const ids = body.ids as Record<string, string>;
  assert.deepEqual(
    Object.keys(body).sort(),
    [
      'object',
      'id',
      'ids',
      'token',
      'message_id',
      'from',
      'to',
      'subject',
      'status',
      'scheduled_at',
      'created_at',
      'tracking',
      'original_id',
      'message',
    ].sort(),
  );
  assert.deepEqual(Object.keys(ids).sort(), ['boss@example.org', 'ops@example.org']);
  assert.equal(body.from, 'Shop <shop@fwd.test>');
  assert.deepEqual(body.to, ['boss@example.org', 'ops@example.org']);
  assert.equal(body.subject, 'Fwd: Order <7>');
  assert.equal(body.status, 'accepted');
  assert.equal(body.scheduled_at, null);
  assert.deepEqual(body.tracking, { loads: false, clicks: false });
  assert.equal(body.original_id, sent.id);
  assert.equal(body.message, `Email ${sent.id} was forwarded to boss@example.org, ops@example.org.`);
  assert.equal(body.message_id, `<${body.token}@fwd.test>`);
  for (const header of [
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
    'ratelimit-daily-limit',
    'ratelimit-daily-remaining',
    'ratelimit-daily-reset',
  ]) {
    assert.ok(res.headers.get(header), header);
  }
  assert.equal(await credits(app, ws.id), before - 2, 'one credit per recipient');

  const row = await emailRow(app, body.id);
  assert.equal(row.source, 'forward');
  assert.equal(row.original_id, sent.id);
  assert.equal((await deliverJobs(app, body.id)).length, 1);
  assert.deepEqual(
    (await eventsFor(app, body.id)).map((e) => e.type),
    ['email.accepted'],
  );
  assert.equal((await emailRow(app, sent.id)).status, 'accepted', 'the original is unchanged');

  const read = (await api.get(`/v2/emails/${body.id}`)).body;
  const date = (await api.get(`/v2/emails/${sent.id}`)).body.headers.Date;
  const facts = ['From: Shop &lt;shop@fwd.test&gt;', `Date: ${date}`, 'Subject: Order &lt;7&gt;', 'To: jane@example.org'];
  assert.equal(
    read.html,
    `<p>Please check &lt;this&gt;<br>thanks</p><div>---------- Forwarded message ---------<br>${facts.join('<br>')}</div><br><p>Your order</p>`,
  );
  assert.equal(
    read.text,
    `Please check <this>\nthanks\n\n---------- Forwarded message ---------\nFrom: Shop <shop@fwd.test>\nDate: ${date}\nSubject: Order <7>\nTo: jane@example.org\n\nYour order`,
  );
  assert.deepEqual(read.attachments, [
    { filename: 'order.pdf', content_type: 'application/pdf', content_id: null, size: Buffer.from(PDF, 'base64').length },
  ]);
  assert.deepEqual(read.reply_to, ['support@fwd.test']);
  assert.equal(read.headers['X-Order'], undefined, "a forwarded message does not carry the original's own headers");
});

test('include_headers false resends the original unchanged; notes, html/text notes, from and subject', async () => {
  const { api, workspace: ws } = await workspace('plain.test');
  const sent = await original(api, 'plain@plain.test');
  const plain = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'x@example.org', include_headers: false, comment: 'ignored' });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.body.subject, 'Order <7>');
  assert.equal(plain.body.ids, undefined, 'one recipient: no ids map');
  const read = (await api.get(`/v2/emails/${plain.body.id}`)).body;
  assert.equal(read.html, '<p>Your order</p>');
  assert.equal(read.text, 'Your order');
  assert.equal(read.headers['X-Order'], '7');
  assert.equal(read.attachments.length, 1);

  // Without include_headers, the same: the original subject (no `Fwd: `) and content unchanged.
  const bare = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'w@example.org' });
  assert.equal(bare.status, 200, bare.text);
  assert.equal(bare.body.subject, 'Order <7>');
  const bareRead = (await api.get(`/v2/emails/${bare.body.id}`)).body;
  assert.equal(bareRead.html, '<p>Your order</p>');
  assert.equal(bareRead.text, 'Your order');
  await resetForwardLimit(ws.id);

  const notes = await api.post(`/v2/emails/${sent.id}/forward`, {
    to: 'y@example.org',
    include_headers: true,
    body: 'alias note',
    html: '<b>HTML note</b>',
    text: 'Text note',
    from: 'Desk <desk@plain.test>',
    subject: 'Have a look',
  });
  assert.equal(notes.status, 200, notes.text);
  assert.equal(notes.body.from, 'Desk <desk@plain.test>');
  assert.equal(notes.body.subject, 'Have a look');
  const noted = (await api.get(`/v2/emails/${notes.body.id}`)).body;
  assert.ok(noted.html.startsWith('<b>HTML note</b><div>---------- Forwarded message'), noted.html);
  assert.ok(noted.text.startsWith('Text note\n\n---------- Forwarded message'), noted.text);
  assert.ok(!noted.html.includes('alias note'), 'the html note replaces the comment');

  const alias = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'z@example.org', include_headers: true, body: 'alias note' });
  assert.equal(alias.status, 200, alias.text);
  const aliased = (await api.get(`/v2/emails/${alias.body.id}`)).body;
  assert.ok(aliased.html.startsWith('<p>alias note</p>'), aliased.html);
  assert.ok(aliased.text.startsWith('alias note\n\n'), aliased.text);
});

test('forward validation errors use the send shape', async () => {
  await resetForwardLimit(app.workspace.id);
  const sent = await original(app.api);
  const cases: Array<[unknown, string[]]> = [
    [{}, ['The to field is required.']],
    [{ to: [] }, ['The to field is required.']],
    [{ to: 'someone@nowhere' }, ['The to field contains an invalid email address: someone@nowhere']],
    // A huge bad value is quoted by its start, not sent back whole.
    [{ to: 'a'.repeat(300_000) }, [`The to field contains an invalid email address: ${'a'.repeat(100)}… (300,000 characters)`]],
    [{ to: Array.from({ length: 51 }, (_, i) => `r${i}@example.org`) }, ['The to field may not have more than 50 recipients.']],
    [
      { to: 'a@example.org', include_headers: 'yes', comment: 5 },
      ['The include_headers field must be a boolean.', 'The comment field must be a string.'],
    ],
    [{ to: 'a@example.org', from: 'a@x.test, b@x.test' }, ['The from field must be a single valid email address.']],
    [{ to: 42 }, ['The to field must be a string or an array of strings.']],
  ];
  for (const [body, errors] of cases) {
    const res = await app.api.post(`/v2/emails/${sent.id}/forward`, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual(res.body, { error: 'Validation failed', validation_errors: errors });
  }
  const fifty = await app.api.post(`/v2/emails/${sent.id}/forward`, {
    to: Array.from({ length: 50 }, (_, i) => `r${i}@example.org`).join(','),
  });
  assert.equal(fifty.status, 200, 'fifty in a comma string is fine');
});

test('404, inbound and purged emails, sending rules', async () => {
  const { api, workspace: ws } = await workspace('rules.test');
  const unknown = await api.post('/v2/emails/em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp/forward', { to: 'a@example.org' });
  assert.deepEqual(
    [unknown.status, unknown.body],
    [404, { error: 'Email not found', message: 'No email with id em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp exists in this workspace.' }],
  );

  const raw = 'From: someone@example.org\r\nSubject: Hi\r\n\r\nhi\r\n';
  const inbound = await insertInbound(app, {
    to: 'in@inbound.rules.test',
    from: 'someone@example.org',
    subject: 'Hi',
    raw,
    workspaceId: ws.id,
  });
  const refused = await api.post(`/v2/emails/${inbound}/forward`, { to: 'a@example.org' });
  assert.equal(refused.status, 422);
  assert.deepEqual(refused.body, { error: 'Cannot forward email', message: 'Inbound emails cannot be forwarded.' });

  const sent = await original(api, 'a@rules.test');
  const content = await contentOf(app, sent.id);
  await app.running.ctx.db.updateTable('email_contents').set({ purged_at: nowIso() }).where('id', '=', content.id).execute();
  const purged = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' });
  assert.equal(purged.status, 422);
  assert.deepEqual(purged.body, {
    error: 'Cannot forward email',
    message: 'The content of this email was purged after the retention period; it cannot be forwarded.',
  });

  // The main workspace's original: sending rules of the forwarding workspace apply.
  await resetForwardLimit(app.workspace.id);
  const mine = await original(app.api);
  const badFrom = await app.api.post(`/v2/emails/${mine.id}/forward`, { to: 'a@example.org', from: 'x@unverified.test' });
  assert.deepEqual([badFrom.status, badFrom.body], [422, { error: 'Domain not verified' }]);
  const otherDomain = await app.api.post(`/v2/emails/${mine.id}/forward`, { to: 'a@example.org', from: 'desk@other.test' });
  assert.equal(otherDomain.status, 200, otherDomain.text);

  const domains = (await app.api.get('/v2/domains')).body.data as Array<{ id: string; name: string }>;
  const restricted = (
    await app.api.post('/v2/api-keys', {
      name: 'fwd-other-only',
      scope: 'sending',
      sending_domain_id: domains.find((d) => d.name === 'other.test')!.id,
    })
  ).body;
  const denied = await app.as(restricted.key).post(`/v2/emails/${mine.id}/forward`, { to: 'a@example.org' });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'Domain not authorized');
  const allowed = await app.as(restricted.key).post(`/v2/emails/${mine.id}/forward`, { to: 'a@example.org', from: 'desk@other.test' });
  assert.equal(allowed.status, 200, 'sending keys may forward');

  // Disallowed attachment types of the original are left out.
  await resetForwardLimit(app.workspace.id);
  const withExe = await original(app.api);
  const stored = await contentOf(app, withExe.id);
  const message = JSON.parse(stored.message);
  message.attachments.push({ filename: 'tool.exe', content_type: 'application/octet-stream', content_id: null, content: 'TVo=', size: 2 });
  await app.running.ctx.db
    .updateTable('email_contents')
    .set({ message: JSON.stringify(message) })
    .where('id', '=', stored.id)
    .execute();
  const filtered = await app.api.post(`/v2/emails/${withExe.id}/forward`, { to: 'a@example.org' });
  assert.equal(filtered.status, 200, filtered.text);
  const read = (await app.api.get(`/v2/emails/${filtered.body.id}`)).body;
  assert.deepEqual(
    read.attachments.map((a: { filename: string }) => a.filename),
    ['order.pdf'],
  );
});

test('credits and the daily sending limit apply', async () => {
  const { api, workspace: ws } = await workspace('poor.test', { credits: 1 });
  const sent = await original(api, 'a@poor.test');
  const poor = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' });
  assert.equal(poor.status, 402);
  assert.deepEqual(poor.body, { error: 'Insufficient credits', message: 'This request needs 1 credit but the workspace has 0 available.' });

  await updateWorkspace(app.running.ctx.db, ws.id, { credits: 100, dailyLimit: 1 });
  const limited = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' });
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error, 'Daily limit exceeded');
  assert.ok(limited.headers.get('retry-after'));
  const rows = await app.running.ctx.db.selectFrom('emails').select('id').where('workspace_id', '=', ws.id).execute();
  assert.equal(rows.length, 1, 'nothing forwarded');
});

test('three forwards an hour per workspace; failed ones do not count', async () => {
  const { api } = await workspace('hourly.test');
  const sent = await original(api, 'a@hourly.test');
  assert.equal((await api.post(`/v2/emails/${sent.id}/forward`, { to: 'bad' })).status, 400);
  assert.equal((await api.post('/v2/emails/em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp/forward', { to: 'a@example.org' })).status, 404);
  for (let i = 0; i < 3; i++) {
    const ok = await api.post(`/v2/emails/${sent.id}/forward`, { to: `n${i}@example.org` });
    assert.equal(ok.status, 200, ok.text);
  }
  const res = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'n4@example.org' });
  assert.equal(res.status, 429);
  const retryAfter = res.body.retry_after;
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 3500 && retryAfter <= 3600, String(retryAfter));
  assert.deepEqual(res.body, {
    error: 'too_many_requests',
    message: `Forward limit of 3 per hour reached; retry after ${retryAfter} seconds.`,
    limit: 3,
    current: 3,
    retry_after: retryAfter,
  });
  assert.equal(res.headers.get('retry-after'), String(retryAfter));
  assert.equal(res.headers.get('ratelimit-limit'), '1000', 'the sending limits are reported too');
  assert.ok(res.headers.get('ratelimit-daily-remaining'));
  // Sending is not affected.
  await send(api, { from: 'a@hourly.test', to: 'still@example.org' });
});

test('Idempotency-Key: replayed with 200 and nothing sent again, shared with sends, replays count toward the hourly limit', async () => {
  const { api, workspace: ws } = await workspace('idem.test');
  const sent = await original(api, 'a@idem.test');
  const first = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' }, { 'idempotency-key': 'fwd-1' });
  assert.equal(first.status, 200, first.text);
  const balance = await credits(app, ws.id);
  const replay = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'someone-else@example.org' }, { 'idempotency-key': 'fwd-1' });
  assert.equal(replay.status, 200);
  assert.deepEqual(replay.body, first.body);
  assert.ok(replay.headers.get('ratelimit-limit'));
  assert.equal(await credits(app, ws.id), balance, 'no credits for a replay');
  const forwards = await app.running.ctx.db.selectFrom('emails').select('id').where('original_id', '=', sent.id).execute();
  assert.equal(forwards.length, 1, 'nothing sent again');

  // Send and forward share one namespace: a send's key replays the send's response.
  const sentWithKey = await send(api, { from: 'a@idem.test', to: 'keyed@example.org' }, { 'idempotency-key': 'shared-1' });
  const shared = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' }, { 'idempotency-key': 'shared-1' });
  assert.equal(shared.status, 200);
  assert.deepEqual(shared.body, sentWithKey);

  // first + two replays = 3 forwards this hour: the next replay is refused too.
  const refused = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' }, { 'idempotency-key': 'fwd-1' });
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, 'too_many_requests');

  const invalid = await api.post(`/v2/emails/${sent.id}/forward`, { to: 'a@example.org' }, { 'idempotency-key': 'bad key!' });
  assert.equal(invalid.status, 429, 'the hourly limit is checked first');
});
