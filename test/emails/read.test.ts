// Reading emails: GET /v2/emails (window, type, search, filters, sort, paging), GET
// /v2/emails/{id} and its raw/body/meta/attachments variants, GET /v2/email/{id}.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { isoFromMs, nowMs } from '../../src/platform/clock.ts';
import { send, setEmail, insertInbound, ISO_MICROS, DAY_MS } from './email-helpers.ts';

let app: SendingApp;
let domainId: string;

before(async () => {
  // No worker: emails stay as the API left them (delivery is tested elsewhere).
  app = await startSendingApp({ roles: ['api'] });
  domainId = (await app.verifiedDomain('acme.test')).id;
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
});
after(() => app.close());

const PDF = Buffer.from('%PDF-1.4 a small pdf').toString('base64');
const notFound = (id: string) => ({ error: 'Email not found', message: `No email with id ${id} exists in this workspace.` });

test('GET /emails lists one item per recipient, newest first, with the list item fields', async () => {
  const { workspace, api } = await app.newWorkspace();
  await app.verifiedDomain('list.test', api);
  await updateWorkspace(app.running.ctx.db, workspace.id, { sendRate: 1000 });
  const first = await send(api, { from: 'News <news@list.test>', to: 'one@example.org', subject: 'First', meta: { k: 'v' } });
  const second = await send(api, { from: 'news@list.test', to: ['two@example.org', 'three@example.org'], subject: 'Second' });
  const res = await api.get('/v2/emails');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body), ['data', 'next_page_url', 'previous_page_url']);
  // Copies of one request share created_at (their relative order is by id); older requests follow.
  const listed = res.body.data.map((e: { to: string }) => e.to);
  assert.deepEqual([...listed.slice(0, 2)].sort(), ['three@example.org', 'two@example.org']);
  assert.equal(listed[2], 'one@example.org');
  const item = res.body.data[2];
  assert.deepEqual(item, {
    object: 'email',
    id: first.id,
    type: 'outbound',
    from: 'News <news@list.test>',
    to: 'one@example.org',
    subject: 'First',
    status: 'accepted',
    size: item.size,
    scheduled_at: null,
    created_at: first.created_at,
    updated_at: first.created_at,
    meta: { k: 'v' },
    bounce_reason: null,
    bounce_type: null,
  });
  assert.ok(Number.isInteger(item.size) && item.size > 0);
  assert.deepEqual(
    res.body.data
      .slice(0, 2)
      .map((e: { id: string }) => e.id)
      .sort(),
    Object.values(second.ids).sort(),
  );
  assert.equal(res.body.next_page_url, null);
  assert.equal(res.body.previous_page_url, null);

  const page1 = await api.get('/v2/emails?limit=2');
  assert.equal(page1.body.data.length, 2);
  assert.equal(page1.body.next_page_url, '/v2/emails?limit=2&page=2');
  const page2 = await api.get(page1.body.next_page_url);
  assert.deepEqual(
    page2.body.data.map((e: { id: string }) => e.id),
    [first.id],
  );
  assert.equal(page2.body.previous_page_url, '/v2/emails?limit=2&page=1');
  assert.equal(page2.body.next_page_url, null);
});

test('default page size is 25 and limit is checked', async () => {
  const { workspace, api } = await app.newWorkspace();
  await app.verifiedDomain('many.test', api);
  await updateWorkspace(app.running.ctx.db, workspace.id, { sendRate: 1000 });
  const to = Array.from({ length: 26 }, (_, i) => `r${i}@example.org`);
  await send(api, { from: 'a@many.test', to });
  const res = await api.get('/v2/emails');
  assert.equal(res.body.data.length, 25);
  assert.equal(res.body.next_page_url, '/v2/emails?page=2');
  for (const bad of ['limit=0', 'limit=101', 'page=0', 'type=sideways', 'date_from=yesterday', 'direction=up']) {
    const r = await api.get(`/v2/emails?${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error, 'Bad Request');
    assert.ok(Array.isArray(r.body.details), bad);
  }
});

test('the list covers 14 days unless date_from is given; created_at filters do not widen it', async () => {
  const { workspace, api } = await app.newWorkspace();
  await app.verifiedDomain('window.test', api);
  await updateWorkspace(app.running.ctx.db, workspace.id, { sendRate: 1000 });
  const old = await send(api, { from: 'a@window.test', to: 'old@example.org' });
  const recent = await send(api, { from: 'a@window.test', to: 'recent@example.org' });
  const oldAt = nowMs() - 20 * DAY_MS;
  const oldDay = isoFromMs(oldAt).slice(0, 10);
  await setEmail(app, old.id, { created_at: isoFromMs(oldAt), updated_at: isoFromMs(oldAt) });
  const ids = async (query: string) => (await api.get(`/v2/emails${query}`)).body.data.map((e: { id: string }) => e.id);

  assert.deepEqual(await ids(''), [recent.id]);
  assert.deepEqual(await ids(`?created_at.after=2000-01-01`), [recent.id], 'a created_at filter does not widen the window');
  assert.deepEqual(await ids(`?date_from=${oldDay}`), [recent.id, old.id]);
  assert.deepEqual(await ids(`?date_from=${oldDay}&date_to=${oldDay}`), [old.id], 'date_to runs through the end of its day');
  const dayBefore = isoFromMs(oldAt - DAY_MS).slice(0, 10);
  assert.deepEqual(await ids(`?date_from=${dayBefore}&date_to=${dayBefore}`), []);
  assert.deepEqual(await ids(`?date_from=${oldDay}&created_at.before=${isoFromMs(nowMs()).slice(0, 10)}`), [old.id]);
});

test('type=inbound lists received mail; outbound is the default', async () => {
  const { workspace, api } = await app.newWorkspace();
  await app.verifiedDomain('in.test', api);
  await updateWorkspace(app.running.ctx.db, workspace.id, { sendRate: 1000 });
  const out = await send(api, { from: 'a@in.test', to: 'x@example.org' });
  const raw =
    'From: sender@example.org\r\nTo: support@inbound.in.test\r\nSubject: Help\r\nMessage-ID: <abc@example.org>\r\n\r\ninbound body\r\n';
  const inbound = await insertInbound(app, {
    to: 'support@inbound.in.test',
    from: 'sender@example.org',
    subject: 'Help',
    raw,
    workspaceId: workspace.id,
  });
  assert.deepEqual(
    (await api.get('/v2/emails')).body.data.map((e: { id: string }) => e.id),
    [out.id],
  );
  assert.deepEqual(
    (await api.get('/v2/emails?type=outbound')).body.data.map((e: { id: string }) => e.id),
    [out.id],
  );
  const listed = (await api.get('/v2/emails?type=inbound')).body.data;
  assert.deepEqual(
    listed.map((e: { id: string; type: string; status: string }) => [e.id, e.type, e.status]),
    [[inbound, 'inbound', 'received']],
  );

  // Its reads give the raw message as received.
  const rawRes = await api.get(`/v2/emails/${inbound}/raw`);
  assert.equal(rawRes.status, 200);
  assert.equal(rawRes.body.raw, raw);
  const meta = await api.get(`/v2/emails/${inbound}/meta`);
  assert.equal(meta.body.headers['Message-ID'], '<abc@example.org>');
  assert.equal(meta.body.headers.Subject, 'Help');
});

test('search matches recipient, sender or subject; filters of the spec table; match=or; sorting', async () => {
  const { workspace, api } = await app.newWorkspace();
  const domain = await app.verifiedDomain('filters.test', api);
  await updateWorkspace(app.running.ctx.db, workspace.id, { sendRate: 1000 });
  const sendingKey = (await api.post('/v2/api-keys', { name: 'sender', scope: 'sending' })).body;
  const a = await send(api, { from: 'Billing <billing@filters.test>', to: 'alice@example.org', subject: 'Invoice 42' });
  const b = await send(app.as(sendingKey.key), { from: 'news@filters.test', to: 'bob@example.net', subject: 'Weekly news' });
  const c = await send(api, { from: 'news@filters.test', to: 'carol@example.org', subject: 'Later', scheduled_at: 'tomorrow at 9am' });
  await setEmail(app, a.id, { spam_score: 0.5, tag: 'billing' });
  await setEmail(app, b.id, { spam_score: 3.2 });
  const ids = async (query: string) => {
    const res = await api.get(`/v2/emails?${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body.data.map((e: { id: string }) => e.id).sort();
  };
  const sorted = (...list: string[]) => [...list].sort();

  assert.deepEqual(await ids('search=ALICE'), [a.id], 'recipient, case-insensitive');
  assert.deepEqual(await ids('search=billing'), [a.id], 'sender display name');
  assert.deepEqual(await ids('search=weekly'), [b.id], 'subject');
  assert.deepEqual(await ids('search=%25'), [], 'LIKE wildcards are literal');
  assert.deepEqual(await ids('to.ends_with=.net'), [b.id]);
  assert.deepEqual(await ids('to.exact=Carol@Example.org'), [c.id]);
  assert.deepEqual(await ids('from.contains=news'), sorted(b.id, c.id));
  assert.deepEqual(await ids('from.exact=Billing <billing@filters.test>'.replace(/ /g, '%20').replace('<', '%3C').replace('>', '%3E')), [
    a.id,
  ]);
  assert.deepEqual(await ids('subject.starts_with=invoice'), [a.id]);
  assert.deepEqual(await ids('status.exact=scheduled'), [c.id]);
  assert.deepEqual(await ids('status.in=accepted,scheduled'), sorted(a.id, b.id, c.id));
  assert.deepEqual(await ids('status.not_exact=scheduled'), sorted(a.id, b.id));
  assert.deepEqual(await ids('status.exact=nonsense'), sorted(a.id, b.id, c.id), 'an unknown enum value is ignored');
  assert.deepEqual(await ids('tag.exact=billing'), [a.id]);
  assert.deepEqual(await ids('tag.is_empty=1'), sorted(b.id, c.id));
  assert.deepEqual(await ids('spam_score.greater_than=1'), [b.id]);
  assert.deepEqual(await ids('spam_score.between=0,1'), [a.id]);
  assert.deepEqual(await ids('spam_score.less_than=abc'), sorted(a.id, b.id, c.id), 'a non-number is ignored');
  assert.deepEqual(await ids(`api_key_id.exact=${sendingKey.id}`), [b.id]);
  assert.deepEqual(await ids(`sending_domain_id.exact=${domain.id}`), sorted(a.id, b.id, c.id));
  assert.deepEqual(await ids(`sending_domain_id.exact=${domainId}`), []);
  const today = isoFromMs(nowMs()).slice(0, 10);
  assert.deepEqual(await ids(`created_at.exact=${today}`), sorted(a.id, b.id, c.id));
  assert.deepEqual(await ids(`updated_at.before=${today}`), []);
  assert.deepEqual(await ids('to.ends_with=.net&subject.contains=invoice'), []);
  assert.deepEqual(await ids('to.ends_with=.net&subject.contains=invoice&match=or'), sorted(a.id, b.id));
  assert.deepEqual(await ids('search=news&to.ends_with=.org&match=or'), [c.id], 'match governs filters only; search still applies');
  assert.deepEqual(await ids('unknown.exact=1&to.bogus=x'), sorted(a.id, b.id, c.id), 'unknown keys and conditions are ignored');

  const order = async (query: string) => (await api.get(`/v2/emails?${query}`)).body.data.map((e: { to: string }) => e.to);
  assert.deepEqual(await order('order=to&direction=asc'), ['alice@example.org', 'bob@example.net', 'carol@example.org']);
  assert.deepEqual(await order('order=to&direction=desc'), ['carol@example.org', 'bob@example.net', 'alice@example.org']);
  assert.deepEqual(
    await order('order=to'),
    ['alice@example.org', 'bob@example.net', 'carol@example.org'],
    'order without direction is ascending',
  );
  assert.deepEqual(
    await order('order=spam_score&direction=desc'),
    ['bob@example.net', 'alice@example.org', 'carol@example.org'],
    'NULLs last',
  );
  assert.deepEqual(await order(''), ['carol@example.org', 'bob@example.net', 'alice@example.org'], 'newest first');
});

test('GET /emails/{id}: the retrieved email with headers, bodies, attachment info and attempts', async () => {
  const sent = await send(app.api, {
    from: 'Acme <hello@acme.test>',
    to: 'Jane <jane@example.org>',
    cc: 'cc@example.org',
    bcc: 'hidden@example.org',
    reply_to: 'Support <support@acme.test>',
    subject: 'Your order',
    html: '<p>Thanks <img src="cid:logo"></p>',
    text: 'Thanks',
    headers: { 'X-Order': '42' },
    meta: { order: '42' },
    attachments: [
      { filename: 'invoice.pdf', content: PDF, content_type: 'application/pdf' },
      { filename: 'logo.png', content: Buffer.from('png').toString('base64'), content_type: 'image/png', content_id: 'logo' },
    ],
  });
  const db = app.running.ctx.db;
  await db
    .insertInto('email_attempts')
    .values([
      {
        email_id: sent.id,
        attempted_at: '2030-01-01T00:00:01.000000Z',
        outcome: 'temporary',
        mx_host: 'mx.example.org',
        smtp_code: 451,
        enhanced_code: '4.7.1',
        response: '451 4.7.1 Try again later',
      },
      {
        email_id: sent.id,
        attempted_at: '2030-01-01T00:05:00.000000Z',
        outcome: 'delivered',
        mx_host: 'mx.example.org',
        smtp_code: 250,
        enhanced_code: '2.0.0',
        response: '250 2.0.0 OK',
      },
    ])
    .execute();
  await setEmail(app, sent.id, { status: 'delivered', delivered_at: '2030-01-01T00:05:00.000000Z' });

  const res = await app.api.get(`/v2/emails/${sent.id}`);
  assert.equal(res.status, 200, res.text);
  const email = res.body;
  assert.deepEqual(Object.keys(email), [
    'object',
    'id',
    'type',
    'token',
    'message_id',
    'from',
    'to',
    'cc',
    'reply_to',
    'subject',
    'status',
    'scheduled_at',
    'created_at',
    'updated_at',
    'delivered_at',
    'bounce',
    'tracking',
    'meta',
    'headers',
    'html',
    'text',
    'attachments',
    'size',
    'original_id',
    'purged_at',
    'attempts',
  ]);
  assert.equal(email.object, 'email');
  assert.equal(email.type, 'outbound');
  assert.equal(email.token, sent.token);
  assert.equal(email.message_id, sent.message_id);
  assert.equal(email.from, 'Acme <hello@acme.test>');
  assert.equal(email.to, 'jane@example.org');
  assert.deepEqual(email.cc, ['cc@example.org']);
  assert.deepEqual(email.reply_to, ['support@acme.test']);
  assert.equal(email.status, 'delivered');
  assert.equal(email.delivered_at, '2030-01-01T00:05:00.000000Z');
  assert.match(email.created_at, ISO_MICROS);
  assert.deepEqual(email.tracking, { loads: false, clicks: false });
  assert.deepEqual(email.meta, { order: '42' });
  assert.equal(email.html, '<p>Thanks <img src="cid:logo"></p>');
  assert.equal(email.text, 'Thanks');
  assert.deepEqual(email.attachments, [
    { filename: 'invoice.pdf', content_type: 'application/pdf', content_id: null, size: Buffer.from(PDF, 'base64').length },
    { filename: 'logo.png', content_type: 'image/png', content_id: 'logo', size: 3 },
  ]);
  assert.equal(email.original_id, null);
  assert.equal(email.purged_at, null);
  assert.deepEqual(email.headers, {
    'X-Order': '42',
    From: 'Acme <hello@acme.test>',
    To: 'Jane <jane@example.org>',
    Cc: 'cc@example.org',
    'Reply-To': 'Support <support@acme.test>',
    Subject: 'Your order',
    'Message-ID': sent.message_id,
    Date: email.headers.Date,
  });
  assert.ok(!('Bcc' in email.headers), 'bcc never shows in headers');
  assert.deepEqual(email.attempts, [
    {
      attempted_at: '2030-01-01T00:00:01.000000Z',
      outcome: 'temporary',
      mx_host: 'mx.example.org',
      smtp_code: 451,
      enhanced_code: '4.7.1',
      response: '451 4.7.1 Try again later',
      reason: null,
      tls: null,
      source_address: null,
    },
    {
      attempted_at: '2030-01-01T00:05:00.000000Z',
      outcome: 'delivered',
      mx_host: 'mx.example.org',
      smtp_code: 250,
      enhanced_code: '2.0.0',
      response: '250 2.0.0 OK',
      reason: null,
      tls: null,
      source_address: null,
    },
  ]);
  assert.equal(email.bounce, null);

  // The bcc copy is its own email with the same content.
  const bccCopy = await app.api.get(`/v2/emails/${sent.ids['hidden@example.org']}`);
  assert.equal(bccCopy.body.to, 'hidden@example.org');
  assert.deepEqual(bccCopy.body.attempts, []);

  const body = await app.api.get(`/v2/emails/${sent.id}/body`);
  assert.deepEqual(body.body, { text: 'Thanks', html: '<p>Thanks <img src="cid:logo"></p>' });

  const meta = await app.api.get(`/v2/emails/${sent.id}/meta`);
  assert.equal(meta.status, 200);
  for (const field of ['html', 'text', 'attempts']) assert.ok(!(field in meta.body), `meta has no ${field}`);
  assert.deepEqual(meta.body.attachments, email.attachments);
  assert.deepEqual(meta.body.headers, email.headers);
  assert.equal(meta.body.message_id, sent.message_id);
  assert.deepEqual(meta.body.meta, { order: '42' });

  const attachments = await app.api.get(`/v2/emails/${sent.id}/attachments`);
  assert.deepEqual(attachments.body, {
    data: [
      { filename: 'invoice.pdf', content_type: 'application/pdf', content_id: null, size: Buffer.from(PDF, 'base64').length, content: PDF },
      { filename: 'logo.png', content_type: 'image/png', content_id: 'logo', size: 3, content: Buffer.from('png').toString('base64') },
    ],
  });

  const raw = await app.api.get(`/v2/emails/${sent.id}/raw`);
  assert.equal(raw.status, 200);
  assert.equal(raw.body.id, sent.id);
  assert.equal(raw.body.message_id, sent.message_id);
  const parsed = await simpleParser(raw.body.raw);
  assert.equal(parsed.messageId, sent.message_id);
  assert.equal(parsed.subject, 'Your order');
  assert.equal(parsed.text?.trim(), 'Thanks');
  assert.equal(parsed.headers.get('x-order'), '42');
  assert.equal(parsed.headers.get('bcc'), undefined);
  assert.deepEqual(parsed.attachments.map((a) => [a.filename, a.content.toString('base64')]).sort(), [
    ['invoice.pdf', PDF],
    ['logo.png', Buffer.from('png').toString('base64')],
  ]);

  const status = await app.api.get(`/v2/email/${sent.id}`);
  assert.deepEqual(status.body, { status: 'delivered' });
});

test('raw of an SMTP submission is the message as submitted', async () => {
  const sent = await send(app.api, { to: 'smtp@example.org' });
  const submitted = 'From: hello@acme.test\r\nTo: smtp@example.org\r\nSubject: Hello\r\n\r\nHi there\r\n';
  const row = await app.running.ctx.db.selectFrom('emails').select('content_id').where('id', '=', sent.id).executeTakeFirstOrThrow();
  await app.running.ctx.db.updateTable('email_contents').set({ raw: submitted }).where('id', '=', row.content_id).execute();
  const raw = await app.api.get(`/v2/emails/${sent.id}/raw`);
  assert.equal(raw.body.raw, submitted);
});

test('404 Email not found for unknown ids, other workspaces and every read; reads need a full key', async () => {
  const other = await app.newWorkspace();
  await app.verifiedDomain('other.test', other.api);
  const theirs = await send(other.api, { from: 'a@other.test', to: 'x@example.org' });
  for (const id of ['em_2a9WxbGjK2c5r2bmTzK4oWcO1Xp', theirs.id, 'not-an-id']) {
    for (const suffix of ['', '/raw', '/body', '/meta', '/attachments']) {
      const res = await app.api.get(`/v2/emails/${encodeURIComponent(id)}${suffix}`);
      assert.equal(res.status, 404, `${id}${suffix}`);
      assert.deepEqual(res.body, notFound(id));
    }
    const status = await app.api.get(`/v2/email/${encodeURIComponent(id)}`);
    assert.deepEqual([status.status, status.body], [404, notFound(id)]);
  }
  const sending = (await app.api.post('/v2/api-keys', { name: 'reader?', scope: 'sending' })).body;
  for (const path of ['/v2/emails', `/v2/emails/${theirs.id}`, `/v2/emails/${theirs.id}/raw`, `/v2/email/${theirs.id}`]) {
    const res = await app.as(sending.key).get(path);
    assert.equal(res.status, 403, path);
    assert.equal(res.body.error, 'Forbidden');
  }
  assert.equal((await app.as(null).get('/v2/emails')).status, 401);
});
