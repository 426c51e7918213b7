// POST /v2/emails against a running Postlane with real verified domains (loopback DNS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { startSendingApp, type SendingApp } from '../helpers/sending.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';

let app: SendingApp;
let files: Server;
let filesUrl: string;

before(async () => {
  app = await startSendingApp();
  await app.verifiedDomain('acme.test');
  // Lift the per-second limit for most tests; the limits test uses its own workspace.
  await updateWorkspace(app.running.ctx.db, app.workspace.id, { sendRate: 1000 });
  files = createServer((req, res) => {
    if (req.url === '/report.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(Buffer.from('%PDF-1.4 fake pdf'));
    } else if (req.url === '/moved.pdf') {
      res.writeHead(302, { location: '/report.pdf' });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  const address = files.address();
  filesUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
after(async () => {
  files.close();
  await app.close();
});

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

async function emailRows(ids: string[]) {
  return app.running.ctx.db.selectFrom('emails').selectAll().where('id', 'in', ids).execute();
}
async function eventsFor(id: string) {
  const rows = await app.running.ctx.db.selectFrom('events').selectAll().execute();
  return rows.filter((e) => JSON.parse(e.data).id === id).map((e) => ({ type: e.type, object: JSON.parse(e.data) }));
}
async function credits(workspaceId = app.workspace.id) {
  const row = await app.running.ctx.db.selectFrom('workspaces').select('credits').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.credits);
}

test('a single-recipient send returns the email object and queues delivery', async () => {
  const before = await credits();
  const res = await app.api.post('/v2/emails', {
    from: 'Acme <hello@acme.test>',
    to: 'Jane Doe <jane@example.org>',
    subject: 'Hello',
    html: '<p>Hi</p>',
    meta: { order: '42' },
  });
  assert.equal(res.status, 200, res.text);
  const email = res.body;
  assert.deepEqual(Object.keys(email).sort(), [
    'created_at',
    'from',
    'id',
    'message_id',
    'object',
    'scheduled_at',
    'status',
    'subject',
    'to',
    'token',
    'tracking',
  ]);
  assert.equal(email.object, 'email');
  assert.match(email.id, /^em_[A-Za-z0-9]{27}$/);
  assert.equal(email.from, 'Acme <hello@acme.test>');
  assert.deepEqual(email.to, ['jane@example.org'], 'display names are stripped');
  assert.equal(email.subject, 'Hello');
  assert.equal(email.status, 'accepted');
  assert.equal(email.scheduled_at, null);
  assert.match(email.created_at, ISO_MICROS);
  assert.equal(email.message_id, `<${email.token}@acme.test>`);
  assert.deepEqual(email.tracking, { loads: false, clicks: false });
  assert.equal(await credits(), before - 1, 'one credit per recipient');

  const events = await eventsFor(email.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.accepted'],
  );
  assert.deepEqual(events[0].object, {
    id: email.id,
    object: 'email',
    from: 'Acme <hello@acme.test>',
    to: 'jane@example.org',
    subject: 'Hello',
    meta: { order: '42' },
    timestamp: email.created_at,
  });
  const jobs = await app.running.ctx.db.selectFrom('jobs').selectAll().where('type', '=', 'email.deliver').execute();
  assert.ok(
    jobs.some((job) => JSON.parse(job.payload).email_id === email.id),
    'a deliver job exists',
  );
  for (const header of [
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
    'ratelimit-daily-limit',
    'ratelimit-daily-remaining',
    'ratelimit-daily-reset',
  ]) {
    assert.match(res.headers.get(header) ?? '', /^\d+$/, header);
  }
});

test('one email per unique recipient across to, cc and bcc, with an ids map', async () => {
  const before = await credits();
  const res = await app.api.post('/v2/emails', {
    from: 'hello@acme.test',
    to: ['a@example.org', 'A@example.org', '"Bee, B" <b@example.org>'],
    cc: 'c@example.org, b@example.org',
    bcc: ['d@example.org'],
    subject: 'Team',
    text: 'Hi all',
  });
  assert.equal(res.status, 200, res.text);
  const email = res.body;
  assert.deepEqual(email.to, ['a@example.org', 'b@example.org']);
  assert.deepEqual(email.cc, ['c@example.org']);
  assert.deepEqual(email.bcc, ['d@example.org']);
  assert.deepEqual(Object.keys(email.ids), ['a@example.org', 'b@example.org', 'c@example.org', 'd@example.org']);
  assert.equal(email.id, email.ids['a@example.org']);
  const rows = await emailRows(Object.values(email.ids));
  assert.equal(rows.length, 4);
  assert.equal(new Set(rows.map((r) => r.message_id)).size, 4, 'each copy has its own Message-ID');
  assert.equal(await credits(), before - 4);
});

test('send validation errors use the send shape', async () => {
  const res = await app.api.post('/v2/emails', { to: 'not an address', subject: '', cc: 5, meta: { n: 1 } });
  assert.equal(res.status, 400);
  assert.deepEqual(Object.keys(res.body), ['error', 'validation_errors']);
  assert.equal(res.body.error, 'Validation failed');
  const text = res.body.validation_errors.join('\n');
  for (const needle of [
    'from field is required',
    'to field contains an invalid email address',
    'subject field is required',
    'html or the text',
    'cc field must be',
    'meta.n value must be a string',
  ]) {
    assert.ok(text.includes(needle), `${needle} in ${text}`);
  }
  // A huge bad value is quoted by its start, not sent back whole.
  const huge = await app.api.post('/v2/emails', { from: 'hello@acme.test', to: 'b'.repeat(300_000), subject: 's', text: 't' });
  assert.equal(huge.status, 400);
  assert.deepEqual(huge.body.validation_errors, [
    `The to field contains an invalid email address: ${'b'.repeat(100)}… (300,000 characters)`,
  ]);
  const many = await app.api.post('/v2/emails', {
    from: 'hello@acme.test',
    to: Array.from({ length: 51 }, (_, i) => `r${i}@example.org`),
    subject: 's',
    text: 't',
  });
  assert.equal(many.status, 400);
  assert.deepEqual(many.body.validation_errors, ['The to field may not have more than 50 recipients.']);
  const badJson = await app.api.post('/v2/emails', '{"from":');
  assert.deepEqual(badJson.body, { statusCode: 400, error: 'Bad Request', message: 'Invalid JSON in request body' });
});

test('the from domain must be a verified domain of the workspace', async () => {
  const unknown = await app.api.post('/v2/emails', { from: 'x@unknown.test', to: 'a@example.org', subject: 's', text: 't' });
  assert.equal(unknown.status, 422);
  assert.deepEqual(unknown.body, { error: 'Domain not verified' });

  const created = await app.api.post('/v2/domains', { name: 'pending.test' });
  assert.equal(created.status, 201);
  const pending = await app.api.post('/v2/emails', { from: 'x@pending.test', to: 'a@example.org', subject: 's', text: 't' });
  assert.equal(pending.status, 422);
  assert.deepEqual(pending.body, { error: 'Domain not verified' });

  const other = await app.newWorkspace();
  const foreign = await other.api.post('/v2/emails', { from: 'x@acme.test', to: 'a@example.org', subject: 's', text: 't' });
  assert.equal(foreign.status, 422, "another workspace's domain does not count");
});

test('a sending key restricted to a domain may send only from it', async () => {
  const second = await app.verifiedDomain('second.test');
  const acme = (await app.api.get('/v2/domains/acme.test')).body;
  const key = (await app.api.post('/v2/api-keys', { name: 'acme only', scope: 'sending', sending_domain_id: acme.id })).body;
  assert.equal(key.sending_domain_id, acme.id);
  const ok = await app.as(key.key).post('/v2/emails', { from: 'a@acme.test', to: 'x@example.org', subject: 's', text: 't' });
  assert.equal(ok.status, 200, ok.text);
  const denied = await app.as(key.key).post('/v2/emails', { from: 'a@second.test', to: 'x@example.org', subject: 's', text: 't' });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'Domain not authorized');
  assert.equal(typeof denied.body.message, 'string');
  assert.ok(second.id);
});

test('unverified workspaces may send only to members', async () => {
  const ws = await app.newWorkspace({ verified: false, members: ['owner@example.org'] });
  await app.verifiedDomain('unverified-ws.test', ws.api);
  const ok = await ws.api.post('/v2/emails', { from: 'a@unverified-ws.test', to: 'Owner@example.org', subject: 's', text: 't' });
  assert.equal(ok.status, 200, ok.text);
  const denied = await ws.api.post('/v2/emails', {
    from: 'a@unverified-ws.test',
    to: ['owner@example.org', 'stranger@example.org'],
    bcc: 'x@example.org',
    subject: 's',
    text: 't',
  });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.code, 'unverified_workspace_recipient');
  assert.deepEqual(denied.body.blocked_recipients, ['stranger@example.org', 'x@example.org']);
  assert.equal(typeof denied.body.error, 'string');
  assert.equal(typeof denied.body.message, 'string');
});

test('insufficient credits: 402 and nothing stored', async () => {
  const ws = await app.newWorkspace({ credits: 2 });
  await app.verifiedDomain('poor.test', ws.api);
  const res = await ws.api.post('/v2/emails', {
    from: 'a@poor.test',
    to: ['1@example.org', '2@example.org', '3@example.org'],
    subject: 's',
    text: 't',
  });
  assert.equal(res.status, 402);
  assert.equal(res.body.error, 'Insufficient credits');
  assert.match(res.body.message, /3 credits.*2 available/);
  assert.equal(await credits(ws.workspace.id), 2);
  const stored = await app.running.ctx.db.selectFrom('emails').select('id').where('workspace_id', '=', ws.workspace.id).execute();
  assert.deepEqual(stored, []);
  const events = await app.running.ctx.db
    .selectFrom('events')
    .select('id')
    .where('workspace_id', '=', ws.workspace.id)
    .where('type', 'like', 'email.%')
    .execute();
  assert.deepEqual(events, []);
});

test('a burst of three sends in one second: the third gets 429 and uses no credit', async () => {
  const ws = await app.newWorkspace({ credits: 10 });
  await app.verifiedDomain('burst.test', ws.api);
  const send = () => ws.api.post('/v2/emails', { from: 'a@burst.test', to: 'x@example.org', subject: 's', text: 't' });
  const first = await send();
  const second = await send();
  const third = await send();
  assert.equal(first.status, 200);
  assert.equal(second.status, 200);
  if (third.status === 200) return assert.fail('the third send in the same second was accepted (the test machine took over a second?)');
  assert.equal(third.status, 429);
  assert.deepEqual(Object.keys(third.body), ['error', 'message', 'limit', 'current', 'retry_after']);
  assert.equal(third.body.error, 'Rate limit exceeded');
  assert.equal(third.body.limit, 2);
  assert.equal(third.body.current, 2);
  assert.equal(third.body.retry_after, 1);
  assert.equal(third.headers.get('retry-after'), '1');
  assert.equal(third.headers.get('ratelimit-limit'), '2');
  assert.equal(third.headers.get('ratelimit-remaining'), '0');
  assert.equal(await credits(ws.workspace.id), 8);
});

test('an actively suppressed recipient is stored as suppressed, not sent and not charged', async () => {
  await app.api.post('/v2/suppressions', { email: 'blocked@example.org' });
  await app.api.post('/v2/suppressions', { email: 'expired@example.org', keep_until: '2020-01-01T00:00:00Z' });
  const before = await credits();
  const res = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: ['Blocked@example.org', 'expired@example.org'],
    subject: 's',
    text: 't',
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'suppressed');
  const rows = await emailRows(Object.values(res.body.ids));
  const byAddress = Object.fromEntries(rows.map((r) => [r.to.toLowerCase(), r.status]));
  assert.deepEqual(byAddress, { 'blocked@example.org': 'suppressed', 'expired@example.org': 'accepted' });
  assert.equal(await credits(), before - 1);
  assert.deepEqual(
    (await eventsFor(res.body.ids['Blocked@example.org'] ?? res.body.id)).map((e) => e.type),
    ['email.suppressed'],
  );
  const jobs = await app.running.ctx.db.selectFrom('jobs').selectAll().where('type', '=', 'email.deliver').execute();
  assert.ok(!jobs.some((job) => JSON.parse(job.payload).email_id === res.body.id), 'no delivery for the suppressed copy');
});

test('scheduled_at: English and ISO forms schedule; past, Unix and unreadable values send now', async () => {
  const res = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    scheduled_at: 'tomorrow at 9am',
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'scheduled');
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  assert.equal(res.body.scheduled_at, `${tomorrow}T09:00:00.000000Z`);
  const events = await eventsFor(res.body.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.scheduled'],
  );
  assert.equal(events[0].object.scheduled_at, res.body.scheduled_at);
  const job = (await app.running.ctx.db.selectFrom('jobs').selectAll().where('type', '=', 'email.deliver').execute()).find(
    (j) => JSON.parse(j.payload).email_id === res.body.id,
  )!;
  assert.equal(job.run_at, Date.parse(res.body.scheduled_at));

  const iso = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    scheduled_at: '2099-05-01T10:00:00+02:00',
  });
  assert.equal(iso.body.scheduled_at, '2099-05-01T08:00:00.000000Z');
  for (const value of ['2001-01-01T00:00:00Z', '1893456000', 'whenever you like']) {
    const now = await app.api.post('/v2/emails', {
      from: 'a@acme.test',
      to: 'x@example.org',
      subject: 's',
      text: 't',
      scheduled_at: value,
    });
    assert.equal(now.status, 200);
    assert.equal(now.body.status, 'accepted', value);
    assert.equal(now.body.scheduled_at, null);
  }
});

test('attachments: content in base64 or hex, fetched by URL, and refused when the URL redirects', async () => {
  const res = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    html: '<img src="cid:logo">',
    attachments: [
      { filename: 'notes.txt', content: Buffer.from('hello').toString('base64'), content_type: 'text/plain' },
      {
        filename: 'logo.png',
        content: Buffer.from('png!').toString('hex'),
        encoding: 'hex',
        content_type: 'image/png',
        content_id: 'logo',
      },
      { filename: 'report.pdf', url: `${filesUrl}/report.pdf` },
    ],
  });
  assert.equal(res.status, 200, res.text);
  const [row] = await emailRows([res.body.id]);
  const content = await app.running.ctx.db
    .selectFrom('email_contents')
    .selectAll()
    .where('id', '=', row.content_id)
    .executeTakeFirstOrThrow();
  const stored = JSON.parse(content.message).attachments;
  assert.deepEqual(
    stored.map((a: { filename: string; content_type: string; content_id: string | null }) => [a.filename, a.content_type, a.content_id]),
    [
      ['notes.txt', 'text/plain', null],
      ['logo.png', 'image/png', 'logo'],
      ['report.pdf', 'application/pdf', null],
    ],
  );
  assert.equal(Buffer.from(stored[1].content, 'base64').toString(), 'png!');
  assert.equal(Buffer.from(stored[2].content, 'base64').toString(), '%PDF-1.4 fake pdf');

  const before = await credits();
  const redirect = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    attachments: [{ filename: 'moved.pdf', url: `${filesUrl}/moved.pdf` }],
  });
  assert.equal(redirect.status, 400);
  assert.equal(redirect.body.error, 'Validation failed');
  assert.match(redirect.body.validation_errors[0], /redirects are not followed/);
  assert.equal(await credits(), before, 'nothing charged');

  const bad = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    attachments: [
      { filename: 'run.exe', content: 'AAAA', content_type: 'application/octet-stream' },
      { filename: 'both.txt', content: 'AAAA', url: `${filesUrl}/report.pdf`, content_type: 'text/plain' },
      { filename: 'none.txt' },
      { filename: 'notype.txt', content: 'AAAA' },
    ],
  });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body.validation_errors, [
    'attachments[0].filename "run.exe" does not have an allowed extension',
    'attachments[1] must have either content or url, not both',
    'attachments[2] must have content or url',
    'attachments[3].content_type is required with content',
  ]);
});

test('attachment URLs that resolve to private addresses are refused unless allowed', async () => {
  const strict = await startSendingApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });
  try {
    await strict.verifiedDomain('strict.test');
    strict.dns.set('files.strict.test', 'A', ['127.0.0.1']);
    const port = new URL(filesUrl).port;
    const res = await strict.api.post('/v2/emails', {
      from: 'a@strict.test',
      to: 'x@example.org',
      subject: 's',
      text: 't',
      attachments: [{ filename: 'r.pdf', url: `http://files.strict.test:${port}/report.pdf` }],
    });
    assert.equal(res.status, 400);
    assert.match(
      res.body.validation_errors[0],
      /^attachments\[0\]\.url http:\/\/files\.strict\.test:\d+\/report\.pdf: .*127\.0\.0\.1.*not a public address/,
    );
  } finally {
    await strict.close();
  }
});

test('a message over 40 MB (as encoded) gets 413 and nothing is stored', async () => {
  const before = await credits();
  // 31 MB of file is about 42 MB once base64-encoded in the message (and 41 MB of JSON).
  const big = Buffer.alloc(31 * 1024 * 1024, 7).toString('base64');
  const res = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    attachments: [{ filename: 'big.zip', content: big, content_type: 'application/zip' }],
  });
  assert.equal(res.status, 413);
  assert.equal(res.body.error, 'Message too large');
  assert.equal(typeof res.body.message, 'string');
  assert.equal(await credits(), before);
  const small = Buffer.alloc(20 * 1024 * 1024, 7).toString('base64');
  const ok = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    attachments: [{ filename: 'ok.zip', content: small, content_type: 'application/zip' }],
  });
  assert.equal(ok.status, 200);
});

test('variables render in subject, html (escaped) and text', async () => {
  const res = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 'Hi {{name|"there"}}',
    html: '<p>{{name}} {{#if vip}}VIP{{else}}regular{{/if}}</p>',
    text: 'Order {{order.id}}',
    variables: { name: '<Jane & co>', vip: true, order: { id: 7 } },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.subject, 'Hi <Jane & co>');
  const [row] = await emailRows([res.body.id]);
  const content = JSON.parse(
    (await app.running.ctx.db.selectFrom('email_contents').select('message').where('id', '=', row.content_id).executeTakeFirstOrThrow())
      .message,
  );
  assert.equal(content.html, '<p>&lt;Jane &amp; co&gt; VIP</p>');
  assert.equal(content.text, 'Order 7');

  const broken = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 'Hi {{name',
    text: 't',
    variables: {},
  });
  assert.equal(broken.status, 400);
  assert.match(broken.body.validation_errors[0], /subject has invalid variable syntax at line 1, column \d+/);
});

test('tracking applies only with a verified tracking CNAME; it defaults to the domain', async () => {
  // acme.test has its tracking CNAME published and verified; its own default is off.
  const on = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    html: '<a href="https://example.org">x</a>',
    tracking: true,
  });
  assert.equal(on.status, 200);
  assert.deepEqual(on.body.tracking, { loads: true, clicks: true });
  const partial = await app.api.post('/v2/emails', {
    from: 'a@acme.test',
    to: 'x@example.org',
    subject: 's',
    text: 't',
    tracking: { clicks: true },
  });
  assert.deepEqual(partial.body.tracking, { loads: false, clicks: true });

  await app.verifiedDomain('notrack.test', app.api, ['tracking']);
  const off = await app.api.post('/v2/emails', {
    from: 'a@notrack.test',
    to: 'x@example.org',
    subject: 's',
    html: '<a href="https://example.org">x</a>',
    tracking: true,
  });
  assert.equal(off.status, 200);
  assert.deepEqual(off.body.tracking, { loads: false, clicks: false }, 'forced off without the CNAME');
  const bad = await app.api.post('/v2/emails', { from: 'a@acme.test', to: 'x@example.org', subject: 's', text: 't', tracking: 'yes' });
  assert.equal(bad.status, 400);
});

test('Idempotency-Key: the stored response is replayed with 200, nothing sent twice, no credits', async () => {
  const body = { from: 'a@acme.test', to: 'x@example.org', subject: 'once', text: 't' };
  const before = await credits();
  const first = await app.api.post('/v2/emails', body, { 'idempotency-key': 'order-1001' });
  assert.equal(first.status, 200);
  const replay = await app.api.post('/v2/emails', { ...body, subject: 'different body, same key' }, { 'idempotency-key': 'order-1001' });
  assert.equal(replay.status, 200);
  assert.deepEqual(replay.body, first.body);
  assert.ok(replay.headers.get('ratelimit-limit'));
  assert.equal(await credits(), before - 1);

  const invalid = await app.api.post('/v2/emails', body, { 'idempotency-key': 'has spaces!' });
  assert.equal(invalid.status, 400);
  assert.equal(invalid.body.error, 'Invalid Idempotency-Key');

  // A failed request stores nothing and frees the key.
  const failed = await app.api.post('/v2/emails', { ...body, from: 'a@unknown.test' }, { 'idempotency-key': 'retry-me' });
  assert.equal(failed.status, 422);
  const retried = await app.api.post('/v2/emails', body, { 'idempotency-key': 'retry-me' });
  assert.equal(retried.status, 200);
  assert.equal(retried.body.subject, 'once');
});

test('concurrent requests with one Idempotency-Key create exactly one email', async () => {
  const body = { from: 'a@acme.test', to: 'concurrent@example.org', subject: 'race', text: 't' };
  const results = await Promise.all(Array.from({ length: 8 }, () => app.api.post('/v2/emails', body, { 'idempotency-key': 'race-key' })));
  const statuses = results.map((r) => r.status).sort();
  assert.ok(
    statuses.every((s) => s === 200 || s === 409),
    statuses.join(','),
  );
  const ids = new Set(results.filter((r) => r.status === 200).map((r) => r.body.id));
  assert.equal(ids.size, 1, 'every success answers with the same email');
  for (const conflict of results.filter((r) => r.status === 409)) {
    assert.equal(conflict.body.error, 'Idempotency key in progress');
    assert.equal(typeof conflict.body.message, 'string');
  }
  const stored = await app.running.ctx.db.selectFrom('emails').select('id').where('to', '=', 'concurrent@example.org').execute();
  assert.equal(stored.length, 1);
});

test('sending keys may send; other keys of the workspace too; a missing key gets 401', async () => {
  const sending = (await app.api.post('/v2/api-keys', { name: 'sender-only', scope: 'sending' })).body;
  const res = await app.as(sending.key).post('/v2/emails', { from: 'a@acme.test', to: 'x@example.org', subject: 's', text: 't' });
  assert.equal(res.status, 200);
  const anonymous = await app.as(null).post('/v2/emails', { from: 'a@acme.test', to: 'x@example.org', subject: 's', text: 't' });
  assert.equal(anonymous.status, 401);
});

test('templates: an alias sends its published version, a tem_ id that exact version; request fields override', async () => {
  const v1 = await app.api.post('/v2/templates', {
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@acme.test>',
    subject: 'Welcome {{name|"friend"}}',
    html: '<h1>Hi {{name}}</h1>',
    text: 'Hi {{name}}',
    reply_to: ['support@acme.test'],
  });
  assert.equal(v1.status, 201, v1.text);
  const v2 = await app.api.post('/v2/templates', {
    name: 'Welcome v2',
    alias: 'welcome',
    subject: 'Draft {{name}}',
    html: '<h1>Draft</h1>',
  });
  assert.equal(v2.status, 201, v2.text);
  assert.equal(v2.body.data.published_at, null, 'the second version is a draft');

  const byAlias = await app.api.post('/v2/emails', { template: 'welcome', to: 'x@example.org', variables: { name: 'Ann <3' } });
  assert.equal(byAlias.status, 200, byAlias.text);
  assert.equal(byAlias.body.subject, 'Welcome Ann <3');
  assert.equal(byAlias.body.from, 'Acme <hello@acme.test>', "the template's from is used when the request has none");
  const [row] = await emailRows([byAlias.body.id]);
  const content = JSON.parse(
    (await app.running.ctx.db.selectFrom('email_contents').select('message').where('id', '=', row.content_id).executeTakeFirstOrThrow())
      .message,
  );
  assert.equal(content.html, '<h1>Hi Ann &lt;3</h1>');
  assert.equal(content.text, 'Hi Ann <3');
  assert.deepEqual(
    content.reply_to.map((r: { address: string }) => r.address),
    ['support@acme.test'],
  );

  const byId = await app.api.post('/v2/emails', {
    template: v2.body.data.id,
    from: 'a@acme.test',
    to: 'x@example.org',
    variables: { name: 'Bo' },
  });
  assert.equal(byId.status, 200, byId.text);
  assert.equal(byId.body.subject, 'Draft Bo', 'a tem_ id sends that exact version, published or not');

  const overridden = await app.api.post('/v2/emails', {
    template: 'welcome',
    to: 'x@example.org',
    subject: 'Custom {{name}}',
    variables: { name: 'Cy' },
  });
  assert.equal(overridden.body.subject, 'Custom Cy');

  const missing = await app.api.post('/v2/emails', { template: 'no-such-template', from: 'a@acme.test', to: 'x@example.org' });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'Template not found');
  assert.equal(typeof missing.body.message, 'string');
  const draftOnly = await app.api.post('/v2/templates', { name: 'Draft only', alias: 'draft-only', subject: 's', html: 'h' });
  assert.equal(draftOnly.status, 201);
  await app.api.delete(`/v2/templates/${draftOnly.body.data.id}`);
  assert.equal((await app.api.post('/v2/emails', { template: 'draft-only', from: 'a@acme.test', to: 'x@example.org' })).status, 404);
});
