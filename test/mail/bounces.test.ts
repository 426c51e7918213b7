import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseBounce, parseFieldBlocks, type BounceReport } from '../../src/mail/bounces.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/bounces/${name}`, import.meta.url));
const summary = ({ kind, recipient, status, diagnostic, originalMessageId, hard, feedbackType, source }: BounceReport) => ({
  kind,
  recipient,
  status,
  diagnostic,
  originalMessageId,
  hard,
  feedbackType,
  source,
});

test('RFC 3464 DSNs: Postfix, Gmail and Exchange Online hard bounces', async () => {
  assert.deepEqual(summary(await parseBounce(fixture('postfix-user-unknown.eml'))), {
    kind: 'bounce',
    recipient: 'bob.smith@example.net',
    status: '5.1.1',
    diagnostic: '550 5.1.1 <Bob.Smith@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
    originalMessageId: '<2gG6QwWJ0hR1x1wJbYq8sVZ3nQp@acme.test>',
    hard: true,
    feedbackType: null,
    source: 'dsn',
  });
  assert.deepEqual(summary(await parseBounce(fixture('gmail-account-disabled.eml'))), {
    kind: 'bounce',
    recipient: 'ann.lee@gmail.com',
    status: '5.2.1',
    diagnostic:
      'The email account that you tried to reach is disabled. Learn more at https://support.google.com/mail/?p=DisabledUser 6a1803df08f44-6a15f2b6f43si1185466d6.118 - gsmtp',
    originalMessageId: '<2gG7aaaaaaaaaaaaaaaaaaaaaaa@acme.test>',
    hard: true,
    feedbackType: null,
    source: 'dsn',
  });
  // "Status: 5.0.0" is refined by the more precise code in the diagnostic.
  assert.deepEqual(summary(await parseBounce(fixture('exchange-online-recipient-not-found.eml'))), {
    kind: 'bounce',
    recipient: 'carol@contoso.com',
    status: '5.1.10',
    diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    originalMessageId: '<2gG8bbbbbbbbbbbbbbbbbbbbbbb@acme.test>',
    hard: true,
    feedbackType: null,
    source: 'dsn',
  });
});

test('DSN delays and soft failures are told apart from hard bounces', async () => {
  const delayed = await parseBounce(fixture('postfix-delayed.eml'));
  assert.deepEqual(summary(delayed), {
    kind: 'delay',
    recipient: 'dave@slow.example.org',
    status: '4.4.1',
    diagnostic: 'connect to mx.slow.example.org[203.0.113.9]:25: Connection timed out',
    originalMessageId: '<2gG9ccccccccccccccccccccccc@acme.test>',
    hard: false,
    feedbackType: null,
    source: 'dsn',
  });
  assert.deepEqual(delayed.recipients, [
    {
      recipient: 'dave@slow.example.org',
      action: 'delayed',
      status: '4.4.1',
      diagnostic: 'connect to mx.slow.example.org[203.0.113.9]:25: Connection timed out',
      reason: 'expired',
      hard: false,
    },
  ]);
  // Given up after days of 4xx: a bounce, but not a hard one (no suppression-worthy verdict).
  assert.deepEqual(summary(await parseBounce(fixture('sendmail-expired.eml'))), {
    kind: 'bounce',
    recipient: 'erin@busy.example.com',
    status: '4.4.7',
    diagnostic: '452 4.2.2 Mailbox full',
    originalMessageId: '<2gGAddddddddddddddddddddddd@acme.test>',
    hard: false,
    feedbackType: null,
    source: 'dsn',
  });
});

test('a DSN with several recipients reports the failed one; a success DSN is not a bounce', async () => {
  const dsn = (blocks: string, perMessage = 'Reporting-MTA: dns; mx.example.net\r\n\r\n') =>
    [
      'From: MAILER-DAEMON@mx.example.net',
      'To: b+em_x.0000000000000000@postlane.acme.test',
      'Subject: Delivery report',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'Report.',
      '',
      '--b',
      'Content-Type: message/delivery-status',
      '',
      perMessage + blocks,
      '',
      '--b--',
      '',
    ].join('\r\n');
  const mixed = await parseBounce(
    dsn(
      [
        'Final-Recipient: rfc822; ok@example.net',
        'Action: delivered',
        'Status: 2.0.0',
        '',
        'Final-Recipient: rfc822; gone@example.net',
        'Action: failed',
        'Status: 5.1.1',
        'Diagnostic-Code: smtp; 550 no such user',
      ].join('\r\n'),
    ),
  );
  assert.equal(mixed.kind, 'bounce');
  assert.equal(mixed.recipient, 'gone@example.net');
  assert.equal(mixed.recipients.length, 2);
  assert.equal(mixed.originalMessageId, null);
  const success = await parseBounce(dsn(['Final-Recipient: rfc822; ok@example.net', 'Action: delivered', 'Status: 2.0.0'].join('\r\n')));
  assert.equal(success.kind, 'delivered');
  assert.equal(success.hard, false);
  // No Status field: the SMTP reply in the diagnostic gives the class.
  const noStatus = await parseBounce(
    dsn(['Final-Recipient: rfc822; x@example.net', 'Action: failed', 'Diagnostic-Code: smtp; 554 rejected'].join('\r\n')),
  );
  // A bare "rejected" says nothing about the mailbox: not hard, so it never suppresses.
  assert.deepEqual([noStatus.kind, noStatus.status, noStatus.hard, noStatus.reason], ['bounce', '5.0.0', false, 'unknown']);
  // No per-message block at all (seen from some appliances): the recipient block is still read.
  const bare = await parseBounce(dsn(['Final-Recipient: rfc822; y@example.net', 'Action: failed', 'Status: 5.1.1'].join('\r\n'), ''));
  assert.deepEqual([bare.kind, bare.recipient, bare.status], ['bounce', 'y@example.net', '5.1.1']);
});

test('non-standard bounces: Exim, qmail and an appliance without codes', async () => {
  assert.deepEqual(summary(await parseBounce(fixture('exim-non-dsn.eml'))), {
    kind: 'bounce',
    recipient: 'frank@example.org',
    status: '5.1.1',
    diagnostic: '550 5.1.1 <frank@example.org>... User unknown',
    originalMessageId: '<2gGBeeeeeeeeeeeeeeeeeeeeeee@acme.test>',
    hard: true,
    feedbackType: null,
    source: 'heuristic',
  });
  assert.deepEqual(summary(await parseBounce(fixture('qmail-non-dsn.eml'))), {
    kind: 'bounce',
    recipient: 'nobody@example.info',
    status: '5.1.1',
    diagnostic: 'Sorry, no mailbox here by that name. (#5.1.1)',
    originalMessageId: '<2gGCfffffffffffffffffffffff@acme.test>',
    hard: true,
    feedbackType: null,
    source: 'heuristic',
  });
  assert.deepEqual(summary(await parseBounce(fixture('appliance-no-code.eml'))), {
    kind: 'bounce',
    recipient: 'grace@example.biz',
    status: '4.2.2',
    diagnostic: 'Reason: The mailbox is full and cannot accept new messages. The message will not be retried.',
    originalMessageId: '<2gGDggggggggggggggggggggggg@acme.test>',
    hard: false,
    feedbackType: null,
    source: 'heuristic',
  });
});

test('ARF complaints: with the full original, and redacted to headers only', async () => {
  assert.deepEqual(summary(await parseBounce(fixture('arf-abuse.eml'))), {
    kind: 'complaint',
    recipient: 'heidi@mailbox.example',
    status: null,
    diagnostic: 'Feedback-Type: abuse (SomeGenerator/1.0)',
    originalMessageId: '<2gGEhhhhhhhhhhhhhhhhhhhhhhh@acme.test>',
    hard: false,
    feedbackType: 'abuse',
    source: 'arf',
  });
  // No Original-Rcpt-To: the recipient comes from the returned headers.
  assert.deepEqual(summary(await parseBounce(fixture('arf-redacted-headers-only.eml'))), {
    kind: 'complaint',
    recipient: 'ivan@hotmail.example',
    status: null,
    diagnostic: 'Feedback-Type: abuse (Hotmail FBL)',
    originalMessageId: '<2gGFiiiiiiiiiiiiiiiiiiiiiii@acme.test>',
    hard: false,
    feedbackType: 'abuse',
    source: 'arf',
  });
  // DMARC failure reports and "not spam" reports are ARF too, but not complaints.
  const authFailure = Buffer.from(fixture('arf-abuse.eml').toString('utf8').replace('Feedback-Type: abuse', 'Feedback-Type: auth-failure'));
  const report = await parseBounce(authFailure);
  assert.deepEqual([report.kind, report.feedbackType, report.source], ['unknown', 'auth-failure', 'arf']);
});

test('auto-replies are auto_reply (never bounces); ordinary mail and garbage are unknown', async () => {
  const autoReply = await parseBounce(fixture('auto-reply.eml'));
  assert.deepEqual([autoReply.kind, autoReply.reason, autoReply.hard, autoReply.status], ['auto_reply', 'auto_reply', false, null]);
  const plain =
    'From: Kim <kim@example.com>\r\nTo: b+em_x.0@acme.test\r\nSubject: Re: invoice\r\n\r\nThanks, got it. Error 550 on my side is fixed.\r\n';
  assert.equal((await parseBounce(plain)).kind, 'unknown');
  assert.equal((await parseBounce(Buffer.from([0, 1, 2, 255]))).kind, 'unknown');
  assert.equal((await parseBounce('')).kind, 'unknown');
});

test('delivery-status fields: folded lines, case-insensitive names, blocks at blank lines', () => {
  assert.deepEqual(
    parseFieldBlocks('Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; x@y\r\nDIAGNOSTIC-CODE: smtp; 550\r\n  more\r\n\r\n\r\n').map(
      (b) => Object.fromEntries(b),
    ),
    [{ 'reporting-mta': 'dns; a' }, { 'final-recipient': 'rfc822; x@y', 'diagnostic-code': 'smtp; 550 more' }],
  );
});

const lines = (...parts: string[]) => parts.join('\r\n');

test('feedback reports outside the standard shape: fields in a text part, Microsoft JMRP, an opt-out', async () => {
  // Older AOL/Comcast-style reports: the feedback fields in a text/plain part, the original after them.
  const inline = await parseBounce(
    lines(
      'From: scomp@aol.net',
      'To: fbl@bounce.acme.test',
      'Subject: Email Feedback Report for IP 192.0.2.1',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="x"',
      '',
      '--x',
      'Content-Type: text/plain',
      '',
      'This is an email abuse report.',
      '',
      'Feedback-Type: abuse',
      'User-Agent: AOL SComp',
      'Version: 0.1',
      'Original-Mail-From: <b+em_AbC123.0123456789abcdef@bounce.acme.test>',
      'Original-Rcpt-To: <Reader@aol.example>',
      '',
      '--x',
      'Content-Type: message/rfc822',
      '',
      'From: hello@acme.test',
      'To: reader@aol.example',
      'Message-ID: <m1@acme.test>',
      'Subject: x',
      '',
      'x',
      '--x--',
      '',
    ),
  );
  assert.deepEqual(
    [inline.kind, inline.recipient, inline.feedbackType, inline.originalMessageId],
    ['complaint', 'reader@aol.example', 'abuse', '<m1@acme.test>'],
  );
  // The VERP sender keeps its case: its id is case-sensitive.
  assert.equal(inline.originalSender, 'b+em_AbC123.0123456789abcdef@bounce.acme.test');

  // JMRP: no ARF part; the complainant only in the attached message's X-HmXmrOriginalRecipient.
  const jmrp = await parseBounce(
    lines(
      'From: staff@hotmail.com',
      'To: fbl@bounce.acme.test',
      'Subject: complaint about message from 192.0.2.1',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="j"',
      '',
      '--j',
      'Content-Type: message/rfc822',
      '',
      'X-HmXmrOriginalRecipient: <reader@outlook.example>',
      'Return-Path: <b+em_XyZ.0123456789abcdef@bounce.acme.test>',
      'From: hello@acme.test',
      'To: redacted@outlook.example',
      'Message-ID: <m2@acme.test>',
      'Subject: x',
      '',
      'x',
      '--j--',
      '',
    ),
  );
  assert.deepEqual(
    [jmrp.kind, jmrp.recipient, jmrp.feedbackType, jmrp.originalMessageId, jmrp.originalSender],
    ['complaint', 'reader@outlook.example', 'abuse', '<m2@acme.test>', 'b+em_XyZ.0123456789abcdef@bounce.acme.test'],
  );

  // An opt-out names the address to remove; it is read, but it is no spam complaint.
  const optOut = await parseBounce(fixture('sisimai/arf-12.eml'));
  assert.deepEqual([optOut.kind, optOut.recipient, optOut.feedbackType], ['unknown', 'user@example.com', 'opt-out']);
});

test('bounces whose status fields name no address are read with the recipient from the text or the returned message', async () => {
  // Final-Recipient is a mailbox path: Exim's X-Failed-Recipients names the address.
  const exim = await parseBounce(fixture('sisimai/lhost-exim-60.eml'));
  assert.deepEqual([exim.kind, exim.recipient], ['bounce', 'nyaan%gol.com@q002.kijitora.gol.com']);
  // A delivery-status part without any recipient block: the returned message's only To.
  const postfix = await parseBounce(fixture('sisimai/lhost-postfix-64.eml'));
  assert.deepEqual([postfix.kind, postfix.recipient], ['bounce', 'xxxx@wanadoo.fr']);
  // A bounce forwarded by a person, its DSN quoted with "> ".
  const forwarded = await parseBounce(fixture('sisimai/lhost-sendmail-14.eml'));
  assert.deepEqual([forwarded.kind, forwarded.recipient, forwarded.reason], ['bounce', 'kijitora@example.com', 'user_unknown']);
  // Postfix's "<addr>: host … said:" beside a support address named earlier in the text.
  assert.equal((await parseBounce(fixture('sisimai/lhost-postfix-07.eml'))).recipient, 'kijitora@user.example.or.jp');
  // The postmaster's own report: the transcript's RCPT TO, not the VERP-like MAIL FROM.
  assert.equal((await parseBounce(fixture('sisimai/lhost-postfix-75.eml'))).recipient, 'kijitora@libsisimai.net');
  // AOL names its own users without the domain.
  const aol = await parseBounce(
    lines(
      'From: Mail Delivery Subsystem <MAILER-DAEMON@aol.com>',
      'To: <b+em_1.0123456789abcdef@bounce.acme.test>',
      'Subject: Mail Delivery Problem',
      '',
      'Your mail to the following recipients could not be delivered because they are not accepting mail from acme.test:',
      '\treader',
      '',
    ),
  );
  assert.deepEqual([aol.kind, aol.recipient], ['bounce', 'reader@aol.com']);
});
