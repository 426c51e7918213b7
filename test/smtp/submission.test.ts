// The SMTP submission relay against a running Postlane: AUTH with API keys over STARTTLS and
// implicit TLS, the send rules of POST /emails with their SMTP reply codes
// (https://emailit.com/docs/smtp.md), and a relayed email that afterwards looks like an API send
// (rows, reads, delivery).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { countSends } from '../../src/platform/limits.ts';
import { nowMs } from '../../src/platform/clock.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { smtpListeners } from '../../src/resources/smtp/resource.ts';
import { converse, startSmtpApp, submit, type SmtpApp } from './helpers.ts';

let app: SmtpApp;
const pdf = Buffer.from('%PDF-1.4 a tiny document');

before(async () => {
  app = await startSmtpApp();
});
after(async () => {
  await app?.close();
});

const relay = (key: string | null = app.key) => ({ port: app.ports.submission, key });
const db = () => app.running.ctx.db;
async function credits(workspaceId = app.workspace.id) {
  const row = await db().selectFrom('workspaces').select('credits').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.credits);
}
async function emailsFrom(address: string) {
  return db().selectFrom('emails').selectAll().where('from_address', '=', address).orderBy('id').execute();
}

test('the listeners report their ports', () => {
  assert.deepEqual(smtpListeners, { submission: app.ports.submission, submissionTls: app.ports.submissionTls, inbound: app.ports.inbound });
});

test('a good key over STARTTLS: 250 2.0.0 OK: queued as em_…, stored as an smtp send without email.accepted', async () => {
  const before = await credits();
  const sent = await submit(relay(), {
    from: 'Acme <hello@acme.test>',
    to: 'jane@example.org',
    subject: 'Over SMTP',
    text: 'Hello over SMTP',
  });
  assert.equal(sent.ok, true, sent.response);
  assert.match(sent.response, /^250 2\.0\.0 OK: queued as em_[A-Za-z0-9]{27}$/);
  const row = await app.email(sent.id!);
  assert.equal(row.source, 'smtp');
  assert.equal(row.type, 'outbound');
  assert.equal(row.from, 'Acme <hello@acme.test>');
  assert.equal(row.to, 'jane@example.org');
  assert.equal(row.subject, 'Over SMTP');
  assert.equal(row.message_id, `<${row.token}@acme.test>`);
  assert.equal(await credits(), before - 1);
  const content = await db().selectFrom('email_contents').selectAll().where('id', '=', row.content_id).executeTakeFirstOrThrow();
  assert.match(content.raw!, /Subject: Over SMTP/, 'the raw message is kept');
  const delivered = await app.waitForStatus(sent.id!, 'delivered');
  assert.ok(delivered.delivered_at);
  assert.deepEqual(
    (await app.eventsOf(sent.id!)).map((e) => e.type),
    ['email.delivered'],
    'SMTP sends emit no email.accepted',
  );
});

test('a bad key gets 535 5.7.8 Authentication failed (PLAIN and LOGIN) and nothing is stored', async () => {
  const sent = await submit(relay('secret_not-a-real-key'), {
    from: 'hello@acme.test',
    to: 'nobody@example.org',
    subject: 'No',
    text: 'x',
  });
  assert.equal(sent.ok, false);
  assert.equal(sent.code, 535);
  assert.equal(sent.response, '535 5.7.8 Authentication failed');
  const login = await submit(
    { ...relay('not even a key'), authMethod: 'LOGIN' },
    { from: 'hello@acme.test', to: 'nobody@example.org', subject: 'No', text: 'x' },
  );
  assert.equal(login.response, '535 5.7.8 Authentication failed');
  assert.deepEqual(await db().selectFrom('emails').select('id').where('to', '=', 'nobody@example.org').execute(), []);
});

test('a key lookup that fails (database unavailable) is a temporary 454, not a refusal', async (t) => {
  const auth = app.running.ctx.auth;
  t.mock.method(auth, 'authenticate', async () => {
    throw new Error('connection refused');
  });
  const sent = await submit(relay(), { from: 'hello@acme.test', to: 'nobody@example.org', subject: 'No', text: 'x' });
  assert.equal(sent.response, '454 4.7.0 Temporary authentication failure');
});

test('AUTH is required before MAIL, and refused before STARTTLS', async () => {
  const noAuth = await submit(relay(null), { from: 'hello@acme.test', to: 'jane@example.org', subject: 'x', text: 'x' });
  assert.equal(noAuth.code, 530);
  assert.equal(noAuth.response, '530 5.7.0 Authentication required');
  assert.equal(noAuth.command, 'MAIL FROM');

  const plain = Buffer.from(`\0postlane\0${app.key}`).toString('base64');
  const replies = await converse(app.ports.submission, ['EHLO client.test', `AUTH PLAIN ${plain}`, 'QUIT']);
  assert.match(replies[1], /^250 /);
  assert.match(replies[2], /^538 /, 'the key is never accepted over an unencrypted connection');
});

test('implicit TLS on SMTP_SUBMISSION_TLS_PORT with AUTH LOGIN; the certificate is the generated one for MAIL_HOSTNAME', async () => {
  const pem = readFileSync(join(app.config.dataDir, 'smtp-tls.pem'), 'utf8');
  const cert = pem.slice(pem.indexOf('-----BEGIN CERTIFICATE-----'));
  const sent = await submit(
    {
      port: app.ports.submissionTls,
      secure: true,
      key: app.key,
      authMethod: 'LOGIN',
      tls: { rejectUnauthorized: true, ca: cert, servername: 'mail.postlane.test' },
    },
    { from: 'hello@acme.test', to: 'tls@example.org', subject: 'Implicit TLS', text: 'x' },
  );
  assert.equal(sent.ok, true, sent.response);
  assert.match(sent.response, /^250 2\.0\.0 OK: queued as em_/);
  // STARTTLS verified against the same certificate, with AUTH PLAIN.
  const login = await submit(
    {
      port: app.ports.submission,
      key: app.key,
      authMethod: 'PLAIN',
      tls: { rejectUnauthorized: true, ca: cert, servername: 'mail.postlane.test' },
    },
    { from: 'hello@acme.test', to: 'starttls@example.org', subject: 'STARTTLS', text: 'x' },
  );
  assert.equal(login.ok, true, login.response);
});

test('over the per-second limit: 452 4.4.5 at MAIL FROM; over the daily limit: 452 4.5.3', async () => {
  const ws = await app.newWorkspace();
  await app.verifiedDomain('limited.test', ws.api);
  await updateWorkspace(db(), ws.workspace.id, { sendRate: 1 });
  // Fill the per-second window for the next few seconds (slots in the near future count).
  await countSends(db(), ws.workspace.id, 1, nowMs() + 5000);
  const rate = await submit(relay(ws.key), { from: 'a@limited.test', to: 'x@example.org', subject: 'x', text: 'x' });
  assert.equal(rate.response, '452 4.4.5 Messages per second limit exceeded');
  assert.equal(rate.command, 'MAIL FROM');

  const daily = await app.newWorkspace();
  await app.verifiedDomain('daily.test', daily.api);
  await updateWorkspace(db(), daily.workspace.id, { sendRate: 1000, dailyLimit: 1 });
  // One transaction counts one unit, however many recipients it has.
  const first = await submit(relay(daily.key), { from: 'a@daily.test', to: ['x@example.org', 'y@example.org'], subject: 'x', text: 'x' });
  assert.equal(first.ok, true, first.response);
  const counted = await db()
    .selectFrom('send_daily_counts')
    .select('units')
    .where('workspace_id', '=', daily.workspace.id)
    .executeTakeFirstOrThrow();
  assert.equal(Number(counted.units), 1);
  const second = await submit(relay(daily.key), { from: 'a@daily.test', to: 'x@example.org', subject: 'x', text: 'x' });
  assert.equal(second.response, '452 4.5.3 Daily message limit exceeded');
  assert.equal(second.command, 'MAIL FROM');
});

test('a From domain that is not verified in the workspace: 530 From/Sender domain is not verified', async () => {
  const sent = await submit(relay(), { from: 'someone@unverified.test', to: 'jane@example.org', subject: 'x', text: 'x' });
  assert.equal(sent.ok, false);
  assert.equal(sent.response, '530 5.7.1 From/Sender domain is not verified for this workspace');
  assert.equal(sent.command, 'DATA');
  assert.deepEqual(await emailsFrom('someone@unverified.test'), []);
});

test('a key restricted to one domain relays from it and gets 530 for another', async () => {
  const other = await app.verifiedDomain('other.test');
  const created = await app.api.post('/v2/api-keys', { name: 'smtp-restricted', scope: 'sending', sending_domain_id: other.id });
  assert.equal(created.status, 201, created.text);
  const key = created.body.key as string;
  const refused = await submit(relay(key), { from: 'hello@acme.test', to: 'jane@example.org', subject: 'x', text: 'x' });
  assert.equal(refused.response, '530 5.7.1 From/Sender domain is not authorized for this API key');
  const allowed = await submit(relay(key), { from: 'hello@other.test', to: 'jane@example.org', subject: 'Own domain', text: 'x' });
  assert.equal(allowed.ok, true, allowed.response);
  assert.equal((await app.email(allowed.id!)).api_key_id, created.body.id);
});

test('recipients come from the envelope: To and Cc headers give the kind, the rest are bcc (never in headers)', async () => {
  const sent = await submit(relay(), {
    from: 'hello@acme.test',
    to: 'Ann <ann@example.org>',
    cc: 'Bob <bob@example.org>',
    bcc: 'carl@example.org',
    subject: 'Kinds',
    text: 'x',
  });
  assert.equal(sent.ok, true, sent.response);
  const rows = await db().selectFrom('emails').selectAll().where('subject', '=', 'Kinds').execute();
  assert.deepEqual(rows.map((r) => [r.to, r.recipient_kind]).sort(), [
    ['ann@example.org', 'to'],
    ['bob@example.org', 'cc'],
    ['carl@example.org', 'bcc'],
  ]);
  assert.equal(new Set(rows.map((r) => r.content_id)).size, 1, 'one stored content');
  const content = await db().selectFrom('email_contents').select('message').where('id', '=', rows[0].content_id).executeTakeFirstOrThrow();
  const message = JSON.parse(content.message);
  assert.deepEqual(message.to, [{ address: 'ann@example.org', name: 'Ann' }]);
  assert.deepEqual(message.cc, [{ address: 'bob@example.org', name: 'Bob' }]);
  assert.deepEqual(message.bcc, [{ address: 'carl@example.org', name: '' }]);
  // Each copy is delivered; none carries a Bcc header.
  for (const row of rows) await app.waitForStatus(row.id, 'delivered');
  const copies = app.sink.messages.filter((m) => /Subject: Kinds/.test(m.raw.toString()));
  assert.equal(copies.length, 3);
  for (const copy of copies) {
    const parsed = await simpleParser(copy.raw);
    assert.equal(parsed.headers.has('bcc'), false);
    assert.deepEqual(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value.map((a) => [a.name, a.address]) : null, [
      ['Ann', 'ann@example.org'],
    ]);
    assert.deepEqual(parsed.cc && !Array.isArray(parsed.cc) ? parsed.cc.value.map((a) => [a.name, a.address]) : null, [
      ['Bob', 'bob@example.org'],
    ]);
  }
  assert.deepEqual(copies.map((c) => c.rcptTo[0]).sort(), ['ann@example.org', 'bob@example.org', 'carl@example.org']);
});

test('the send rules of POST /emails apply: unverified workspace recipients, suppressions, credits, attachments, size', async () => {
  // Unverified workspace: non-members refused at RCPT with 550 5.7.1, members accepted.
  const unverified = await app.newWorkspace({ verified: false, members: ['owner@example.org'] });
  await app.verifiedDomain('newcomer.test', unverified.api);
  const blocked = await submit(relay(unverified.key), { from: 'a@newcomer.test', to: 'stranger@example.org', subject: 'x', text: 'x' });
  assert.equal(blocked.code, 550);
  assert.match(blocked.response, /^550 5\.7\.1 Recipient not allowed/);
  assert.equal(blocked.command, 'RCPT TO');
  const member = await submit(relay(unverified.key), { from: 'a@newcomer.test', to: 'owner@example.org', subject: 'x', text: 'x' });
  assert.equal(member.ok, true, member.response);

  // A recipient suppression: accepted (250), stored as suppressed, not charged.
  assert.equal((await app.api.post('/v2/suppressions', { email: 'gone@example.org' })).status, 201);
  const before = await credits();
  const suppressed = await submit(relay(), { from: 'hello@acme.test', to: 'gone@example.org', subject: 'x', text: 'x' });
  assert.equal(suppressed.ok, true, suppressed.response);
  assert.equal((await app.email(suppressed.id!)).status, 'suppressed');
  assert.equal(await credits(), before);

  // No credits left: a temporary refusal, so the client's queue retries once credits are added.
  const broke = await app.newWorkspace({ credits: 0 });
  await app.verifiedDomain('broke.test', broke.api);
  const poor = await submit(relay(broke.key), { from: 'a@broke.test', to: 'x@example.org', subject: 'x', text: 'x' });
  assert.equal(poor.code, 452);
  assert.match(poor.response, /^452 4\.3\.1 Insufficient credits: This request needs 1 credit but the workspace has 0 available\.$/);

  // A named attachment with an extension the API refuses.
  const exe = await submit(relay(), {
    from: 'hello@acme.test',
    to: 'x@example.org',
    subject: 'x',
    text: 'x',
    attachments: [{ filename: 'tool.exe', content: 'MZ' }],
  });
  assert.equal(exe.response, '554 5.6.1 Attachment type not allowed: tool.exe');

  // Over 40 MB: 552 5.3.4 after DATA.
  const huge = await submit(relay(), {
    envelope: { from: 'hello@acme.test', to: ['x@example.org'] },
    raw: `From: hello@acme.test\r\nTo: x@example.org\r\nSubject: Huge\r\n\r\n${'x'.repeat(998)}\r\n`.repeat(42 * 1024),
  });
  assert.equal(huge.code, 552);
  assert.match(huge.response, /^552 5\.3\.4 /);
  assert.deepEqual(await db().selectFrom('emails').select('id').where('subject', '=', 'Huge').execute(), []);
});

test('a relayed email looks like an API email: same rows, same reads, same signed delivery', async () => {
  const common = { from: 'Acme <hello@acme.test>', subject: 'Twins', text: 'Hello twin', html: '<p>Hello <b>twin</b></p>' };
  const api = await app.api.post('/v2/emails', {
    ...common,
    to: 'Api Twin <api-twin@example.org>',
    attachments: [{ filename: 'doc.pdf', content: pdf.toString('base64'), content_type: 'application/pdf' }],
  });
  assert.equal(api.status, 200, api.text);
  const smtp = await submit(relay(), {
    ...common,
    to: 'Smtp Twin <smtp-twin@example.org>',
    attachments: [{ filename: 'doc.pdf', content: pdf, contentType: 'application/pdf' }],
  });
  assert.equal(smtp.ok, true, smtp.response);

  const [a, s] = [await app.email(api.body.id), await app.email(smtp.id!)];
  const comparable = (row: any) => {
    const { id, token, message_id, content_id, source, to, size, created_at, updated_at, delivered_at, status, status_detail, ...rest } =
      row;
    return rest;
  };
  assert.deepEqual(comparable(s), comparable(a));
  assert.equal(a.source, 'api');
  assert.equal(s.source, 'smtp');
  const stored = async (row: any) =>
    JSON.parse(
      (await db().selectFrom('email_contents').select('message').where('id', '=', row.content_id).executeTakeFirstOrThrow()).message,
    );
  const [am, sm] = [await stored(a), await stored(s)];
  assert.equal(sm.subject, am.subject);
  assert.equal(sm.html, am.html);
  assert.equal(sm.text, am.text);
  assert.equal(s.size, a.size, 'the same size, counted the same way');
  assert.deepEqual(sm.from, am.from);
  assert.deepEqual(
    sm.attachments.map((x: any) => ({ ...x })),
    am.attachments,
  );

  const [da, ds] = [await app.waitForStatus(a.id, 'delivered'), await app.waitForStatus(s.id, 'delivered')];
  assert.ok(da && ds);
  const readA = await app.api.get(`/v2/emails/${a.id}`);
  const readS = await app.api.get(`/v2/emails/${s.id}`);
  assert.equal(readS.status, 200, readS.text);
  assert.deepEqual(Object.keys(readS.body).sort(), Object.keys(readA.body).sort());
  assert.equal(readS.body.status, 'delivered');
  assert.equal(readS.body.message_id, s.message_id);

  const resolver = createResolver([app.dns.address], { timeoutMs: 1000, tries: 1 });
  for (const row of [a, s]) {
    const received = app.sink.messages.find((m) => m.rcptTo.includes(row.to));
    assert.ok(received, `${row.to} received a copy`);
    const parsed = await simpleParser(received.raw);
    assert.equal(parsed.messageId, row.message_id, 'Message-ID is the email message_id');
    assert.equal(parsed.subject, 'Twins');
    assert.deepEqual(
      parsed.attachments.map((x) => [x.filename, x.contentType, x.content.equals(pdf)]),
      [['doc.pdf', 'application/pdf', true]],
    );
    assert.match(received.mailFrom, /^b\+em_/, 'VERP envelope sender');
    const verified = await dkimVerify(received.raw, {
      resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>,
    });
    assert.equal(verified.results[0]?.status.result, 'pass', `${row.source}: DKIM passes`);
    assert.equal(verified.results[0]?.signingDomain, 'acme.test');
  }
});

test('inline images keep their cid: reference and part; custom headers travel, transport headers do not', async () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const sent = await submit(relay(), {
    from: 'hello@acme.test',
    to: 'inline@example.org',
    subject: 'Inline',
    html: '<p><img src="cid:logo@acme"></p>',
    attachments: [{ filename: 'logo.png', content: png, cid: 'logo@acme' }],
    headers: { 'X-Campaign': 'spring', Received: 'from somewhere' },
  });
  assert.equal(sent.ok, true, sent.response);
  const row = await app.email(sent.id!);
  const message = JSON.parse(
    (await db().selectFrom('email_contents').select('message').where('id', '=', row.content_id).executeTakeFirstOrThrow()).message,
  );
  assert.equal(message.html, '<p><img src="cid:logo@acme"></p>');
  assert.deepEqual(
    message.attachments.map((a: any) => [a.filename, a.content_type, a.content_id, Buffer.from(a.content, 'base64').equals(png)]),
    [['logo.png', 'image/png', 'logo@acme', true]],
  );
  assert.equal(message.headers['X-Campaign'], 'spring');
  assert.equal(
    Object.keys(message.headers).some((name) => /^(received|message-id|date|mime-version|content-type)$/i.test(name)),
    false,
  );
  await app.waitForStatus(row.id, 'delivered');
  const copy = app.sink.messages.find((m) => m.rcptTo.includes('inline@example.org'))!;
  const parsed = await simpleParser(copy.raw);
  assert.equal(parsed.headers.get('x-campaign'), 'spring');
  assert.equal(parsed.attachments[0]?.cid, 'logo@acme');
  assert.equal(parsed.attachments[0]?.related, true);
});
