// The inbound MX against a running Postlane: DSNs and ARF reports to VERP return paths change
// the right email, mail for a verified domain's inbound host is stored and announced, and
// every other recipient is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { verpAddress } from '../../src/mail/verp.ts';
import { converse, startSmtpApp, submit, type SmtpApp } from './helpers.ts';

let app: SmtpApp;
let senderKey: string;

before(async () => {
  app = await startSmtpApp();
  // An outside sender, example.net, that passes SPF, DKIM and DMARC on the loopback DNS.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  senderKey = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  app.dns.set('s1._domainkey.example.net', 'TXT', [`v=DKIM1; k=rsa; p=${p}`]);
  app.dns.set('example.net', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
  app.dns.set('_dmarc.example.net', 'TXT', ['v=DMARC1; p=reject']);
});
after(async () => {
  await app?.close();
});

const mx = () => ({ port: app.ports.inbound, key: null, plain: true });
const db = () => app.running.ctx.db;
async function credits() {
  const row = await db().selectFrom('workspaces').select('credits').where('id', '=', app.workspace.id).executeTakeFirstOrThrow();
  return Number(row.credits);
}

/** Sends `to` a message over the API and waits until the sink has it; returns the email and its VERP sender. */
async function deliveredEmail(to: string) {
  const sent = await app.api.post('/v2/emails', { from: 'hello@acme.test', to, subject: `For ${to}`, text: 'x' });
  assert.equal(sent.status, 200, sent.text);
  await app.waitForStatus(sent.body.id, 'delivered');
  const copy = app.sink.messages.find((m) => m.rcptTo.includes(to))!;
  return { id: sent.body.id as string, messageId: sent.body.message_id as string, verp: copy.mailFrom };
}

function dsn(verp: string, recipient: string, messageId: string): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.example.org>',
    `To: <${verp}>`,
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    `<${recipient}>: host mx.example.org said: 550 5.1.1 User unknown`,
    '',
    '--b1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.org',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    'Action: failed',
    'Status: 5.1.1',
    `Diagnostic-Code: smtp; 550 5.1.1 <${recipient}>: Recipient address rejected: User unknown`,
    '',
    '--b1',
    'Content-Type: message/rfc822-headers',
    '',
    `Message-ID: ${messageId}`,
    'Subject: x',
    '',
    '--b1--',
    '',
  ].join('\r\n');
}

function arf(verp: string, recipient: string, messageId: string): string {
  return [
    'From: Mail Feedback <feedback@fbl.example.org>',
    `To: <${verp}>`,
    'Subject: FW: complaint',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="b2"',
    '',
    '--b2',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report.',
    '',
    '--b2',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: ExampleFBL/1.0',
    'Version: 1',
    `Original-Mail-From: <${verp}>`,
    `Original-Rcpt-To: <${recipient}>`,
    '',
    '--b2',
    'Content-Type: message/rfc822',
    '',
    'From: hello@acme.test',
    `To: ${recipient}`,
    `Message-ID: ${messageId}`,
    'Subject: x',
    '',
    'x',
    '',
    '--b2--',
    '',
  ].join('\r\n');
}

test('an asynchronous DSN to the VERP address bounces that email, suppresses the address and emits email.bounced', async () => {
  const other = await deliveredEmail('bystander@example.org');
  const email = await deliveredEmail('leaves-later@example.org');
  const sent = await submit(mx(), {
    envelope: { from: '', to: [email.verp] },
    raw: dsn(email.verp, 'leaves-later@example.org', email.messageId),
  });
  assert.equal(sent.response, '250 2.0.0 OK');
  const row = await app.waitForStatus(email.id, 'bounced');
  assert.match(row.status_detail, /5\.1\.1/);
  assert.equal((await app.email(other.id)).status, 'delivered', 'only the named email bounces');
  const suppression = await db().selectFrom('suppressions').selectAll().where('email', '=', 'leaves-later@example.org').executeTakeFirst();
  assert.equal(suppression?.type, 'bounce');
  const events = await app.eventsOf(email.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email.accepted', 'email.delivered', 'email.bounced'],
  );
  assert.equal(events[2].object.status, 'bounced');

  // The same report again changes nothing (the email is bounced already).
  await submit(mx(), { envelope: { from: '', to: [email.verp] }, raw: dsn(email.verp, 'leaves-later@example.org', email.messageId) });
  assert.equal((await app.eventsOf(email.id)).length, 3);
});

test('an ARF report to the VERP address marks the email complained with a complaint suppression', async () => {
  const email = await deliveredEmail('grumpy@example.org');
  const sent = await submit(mx(), {
    envelope: { from: '', to: [email.verp] },
    raw: arf(email.verp, 'grumpy@example.org', email.messageId),
  });
  assert.equal(sent.response, '250 2.0.0 OK');
  const row = await app.waitForStatus(email.id, 'complained');
  assert.match(row.status_detail, /abuse/);
  const suppression = await db().selectFrom('suppressions').selectAll().where('email', '=', 'grumpy@example.org').executeTakeFirst();
  assert.equal(suppression?.type, 'complaint');
  assert.deepEqual(
    (await app.eventsOf(email.id)).map((e) => e.type),
    ['email.accepted', 'email.delivered', 'email.complained'],
  );
});

test('a report to another address at the return-path host is tied to its email by the returned Message-ID', async () => {
  const email = await deliveredEmail('gone-loose@example.org');
  const host = email.verp.slice(email.verp.lastIndexOf('@') + 1);
  // Some MTAs report to postmaster@ of the return-path host instead of the VERP sender.
  const sent = await submit(mx(), {
    envelope: { from: '', to: [`postmaster@${host}`] },
    raw: dsn(`postmaster@${host}`, 'gone-loose@example.org', email.messageId),
  });
  assert.equal(sent.response, '250 2.0.0 OK');
  const row = await app.waitForStatus(email.id, 'bounced');
  assert.deepEqual([row.bounce_reason, row.bounce_type], ['user_unknown', 'hard']);
  // An unknown Message-ID changes nothing (and is still accepted: no backscatter).
  const stray = await submit(mx(), {
    envelope: { from: '', to: [`postmaster@${host}`] },
    raw: dsn(`postmaster@${host}`, 'x@example.org', '<nobody@acme.test>'),
  });
  assert.equal(stray.response, '250 2.0.0 OK');
});

/** Microsoft JMRP: no ARF part, the complained-about message attached with its recipient in X-HmXmrOriginalRecipient. */
function jmrp(to: string, verp: string, recipient: string, messageId: string): string {
  return [
    'From: staff@hotmail.com',
    `To: ${to}`,
    'Subject: complaint about message from 192.0.2.25',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="jmrp1"',
    '',
    '--jmrp1',
    'Content-Type: message/rfc822',
    'Content-Disposition: inline',
    '',
    `X-HmXmrOriginalRecipient: <${recipient}>`,
    `Return-Path: <${verp}>`,
    'From: hello@acme.test',
    `To: ${recipient}`,
    `Message-ID: ${messageId}`,
    'Subject: x',
    '',
    'x',
    '',
    '--jmrp1--',
    '',
  ].join('\r\n');
}

/** Yahoo's complaint feedback loop (CFL): ARF with the recipient redacted; here the copy has lost its Message-ID too. */
function yahooCfl(to: string, verp: string): string {
  return [
    'From: Yahoo! Mail AntiSpam Feedback <feedback@arf.mail.yahoo.com>',
    `To: ${to}`,
    'Subject: FW: x',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="cfl1"',
    '',
    '--cfl1',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an email abuse report for an email message from acme.test',
    '',
    '--cfl1',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: Yahoo!-Mail-Feedback/2.0',
    'Version: 0.1',
    `Original-Mail-From: <${verp}>`,
    'Reported-Domain: acme.test',
    '',
    '--cfl1',
    'Content-Type: message/rfc822',
    '',
    'From: hello@acme.test',
    'To: redacted@yahoo.example',
    'Subject: x',
    '',
    'x',
    '',
    '--cfl1--',
    '',
  ].join('\r\n');
}

test('feedback-loop complaints sent to the registered address (Microsoft JMRP, Yahoo CFL) complain about their email and suppress its recipient', async () => {
  const first = await deliveredEmail('jmrp-reader@example.org');
  const second = await deliveredEmail('cfl-reader@example.org');
  const bystander = await deliveredEmail('happy-reader@example.org');
  const host = first.verp.slice(first.verp.lastIndexOf('@') + 1);
  const fbl = `fbl@${host}`;
  // JMRP: tied by the attached message (its VERP Return-Path and Message-ID).
  const jmrpSent = await submit(mx(), {
    envelope: { from: '', to: [fbl] },
    raw: jmrp(fbl, first.verp, 'jmrp-reader@example.org', first.messageId),
  });
  assert.equal(jmrpSent.response, '250 2.0.0 OK');
  // CFL: tied by the VERP Original-Mail-From alone.
  const cflSent = await submit(mx(), { envelope: { from: '', to: [fbl] }, raw: yahooCfl(fbl, second.verp) });
  assert.equal(cflSent.response, '250 2.0.0 OK');
  for (const [email, address] of [
    [first, 'jmrp-reader@example.org'],
    [second, 'cfl-reader@example.org'],
  ] as const) {
    const row = await app.waitForStatus(email.id, 'complained');
    assert.match(row.status_detail, /abuse/);
    assert.deepEqual(
      (await app.eventsOf(email.id)).map((e) => e.type),
      ['email.accepted', 'email.delivered', 'email.complained'],
    );
    const suppression = await db().selectFrom('suppressions').selectAll().where('email', '=', address).executeTakeFirst();
    assert.equal(suppression?.type, 'complaint', address);
  }
  assert.equal((await app.email(bystander.id)).status, 'delivered', 'only the reported emails change');
  // A CFL whose Original-Mail-From is a VERP address with a forged MAC ties nothing.
  const forged = second.verp.replace(/\.([0-9a-f]{16})@/, (_m, mac: string) => `.${mac.startsWith('0') ? '1' : '0'}${mac.slice(1)}@`);
  await submit(mx(), { envelope: { from: '', to: [fbl] }, raw: yahooCfl(fbl, forged.replace(second.id, bystander.id)) });
  assert.equal((await app.email(bystander.id)).status, 'delivered');
});

test('forged or unknown VERP addresses and random recipients get 550 5.1.1 at RCPT', async () => {
  const email = await deliveredEmail('real@example.org');
  const forged = email.verp.replace(/\.([0-9a-f]{16})@/, (_m, mac: string) => `.${mac.startsWith('0') ? '1' : '0'}${mac.slice(1)}@`);
  const unknownId = verpAddress('em_2gGEhhhhhhhhhhhhhhhhhhhhhhh', 'postlane.acme.test', app.running.ctx.verpSecret);
  for (const rcpt of [forged, unknownId, 'someone@acme.test', 'anyone@inbound.elsewhere.test', 'postmaster@example.org']) {
    const replies = await converse(app.ports.inbound, ['EHLO remote.example', 'MAIL FROM:<a@example.net>', `RCPT TO:<${rcpt}>`, 'QUIT']);
    assert.equal(replies[3], '550 5.1.1 Recipient address rejected: no such user here', rcpt);
  }
  // The inbound host of a domain that is not verified is refused too.
  const pending = await app.api.post('/v2/domains', { name: 'pending.test' });
  assert.equal(pending.status, 201);
  const replies = await converse(app.ports.inbound, [
    'EHLO remote.example',
    'MAIL FROM:<a@example.net>',
    'RCPT TO:<x@inbound.pending.test>',
    'QUIT',
  ]);
  assert.equal(replies[3], '550 5.1.1 Recipient address rejected: no such user here');
});

test('mail for anything@<inbound_key>.<domain> is stored as a received inbound email with SPF/DKIM/DMARC results', async () => {
  const before = await credits();
  const sent = await submit(
    { ...mx() },
    {
      from: 'Sender <sender@example.net>',
      to: 'support@inbound.acme.test',
      cc: 'reply+4821@inbound.acme.test',
      subject: 'A question',
      text: 'Hello support',
      html: '<p>Hello support</p>',
      attachments: [{ filename: 'note.txt', content: 'a note' }],
      dkim: { domainName: 'example.net', keySelector: 's1', privateKey: senderKey },
    },
  );
  assert.equal(sent.ok, true, sent.response);
  assert.match(sent.response, /^250 2\.0\.0 OK: queued as em_[A-Za-z0-9]{27}$/);
  const rows = await db()
    .selectFrom('emails')
    .selectAll()
    .where('type', '=', 'inbound')
    .where('subject', '=', 'A question')
    .orderBy('to')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.to, r.recipient_kind]),
    [
      ['reply+4821@inbound.acme.test', 'cc'],
      ['support@inbound.acme.test', 'to'],
    ],
  );
  for (const row of rows) {
    assert.equal(row.status, 'received');
    assert.equal(row.source, 'inbound');
    assert.equal(row.from, 'Sender <sender@example.net>');
    assert.equal(row.from_address, 'sender@example.net');
  }
  assert.equal(await credits(), before - 2, 'one credit per received email');

  const content = await db().selectFrom('email_contents').selectAll().where('id', '=', rows[0].content_id).executeTakeFirstOrThrow();
  const message = JSON.parse(content.message);
  assert.equal(message.text, 'Hello support');
  assert.equal(message.html, '<p>Hello support</p>');
  assert.deepEqual(
    message.attachments.map((a: any) => [a.filename, Buffer.from(a.content, 'base64').toString()]),
    [['note.txt', 'a note']],
  );
  const results = message.headers['Authentication-Results'];
  assert.match(results, /^mail\.postlane\.test;/);
  assert.match(results, /dkim=pass header\.i=@example\.net/);
  assert.match(results, /spf=pass/);
  assert.match(results, /dmarc=pass/);
  assert.match(
    content.raw!,
    /^Received: from \[127\.0\.0\.1\] \(\[127\.0\.0\.1\]\)\r\n\tby mail\.postlane\.test \(Postlane\) with ESMTP id \w+;\r\n\t\w{3}, \d/,
  );
  assert.match(content.raw!, /\r\nAuthentication-Results: mail\.postlane\.test;/);

  const events = await app.eventsOf(rows[1].id);
  assert.deepEqual(events, [
    {
      type: 'email.received',
      object: {
        id: rows[1].id,
        object: 'email',
        from: 'Sender <sender@example.net>',
        to: 'support@inbound.acme.test',
        subject: 'A question',
        created_at: rows[1].created_at,
      },
    },
  ]);

  const listed = await app.api.get('/v2/emails?type=inbound');
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(listed.body.data.map((e: any) => e.id).sort(), rows.map((r) => r.id).sort());
  assert.equal(listed.body.data[0].type, 'inbound');
  assert.equal(listed.body.data[0].status, 'received');
  const outbound = await app.api.get('/v2/emails');
  assert.ok(!outbound.body.data.some((e: any) => e.type === 'inbound'), 'inbound mail is not in the outbound list');
});

test('a forged sender fails SPF and DKIM but is still stored, with the failures recorded', async () => {
  const sent = await submit(mx(), {
    from: 'ceo@example.net',
    to: 'billing@inbound.acme.test',
    subject: 'Forged',
    text: 'pay now',
    dkim: { domainName: 'example.net', keySelector: 'nope', privateKey: senderKey },
  });
  assert.equal(sent.ok, true, sent.response);
  // SPF allows 127.0.0.1, so break it through the envelope: a sender domain that allows nothing.
  app.dns.set('spoofed.example', 'TXT', ['v=spf1 -all']);
  const spoofed = await submit(mx(), {
    envelope: { from: 'x@spoofed.example', to: ['billing@inbound.acme.test'] },
    raw: 'From: x@spoofed.example\r\nSubject: Spoofed\r\n\r\nhi\r\n',
  });
  assert.equal(spoofed.ok, true, spoofed.response);
  const rows = await db()
    .selectFrom('emails')
    .select(['subject', 'content_id'])
    .where('type', '=', 'inbound')
    .where('subject', 'in', ['Forged', 'Spoofed'])
    .orderBy('subject')
    .execute();
  const results = await Promise.all(
    rows.map(
      async (r) =>
        JSON.parse(
          (await db().selectFrom('email_contents').select('message').where('id', '=', r.content_id).executeTakeFirstOrThrow()).message,
        ).headers['Authentication-Results'] as string,
    ),
  );
  assert.match(results[0], /dkim=(fail|neutral|temperror|permerror)/, 'Forged: the signature does not verify');
  assert.match(results[1], /spf=fail/, 'Spoofed: SPF fails');
});

test('inbound limits: over 40 MB gets 552 5.3.4, an empty balance a temporary 452', async () => {
  const huge = `From: a@example.net\r\nTo: big@inbound.acme.test\r\nSubject: Huge\r\n\r\n${`${'y'.repeat(998)}\r\n`.repeat(42 * 1024)}`;
  const sent = await submit(mx(), { envelope: { from: 'a@example.net', to: ['big@inbound.acme.test'] }, raw: huge });
  assert.equal(sent.code, 552);
  assert.equal(sent.response, '552 5.3.4 Message size exceeds the limit of 41943040 bytes');
  assert.deepEqual(await db().selectFrom('emails').select('id').where('subject', '=', 'Huge').execute(), []);

  const broke = await app.newWorkspace({ credits: 0 });
  await app.verifiedDomain('broke-inbound.test', broke.api);
  const replies = await converse(app.ports.inbound, [
    'EHLO remote.example',
    'MAIL FROM:<a@example.net>',
    'RCPT TO:<x@inbound.broke-inbound.test>',
    'QUIT',
  ]);
  assert.equal(replies[3], '452 4.3.1 Insufficient system storage, try again later');
});
