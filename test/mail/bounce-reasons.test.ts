import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyReason, isAutoReply, suppressesRecipient } from '../../src/mail/bounce-reasons.ts';

const cases: [string, string, string, boolean][] = [
  ['5.1.1', '550 5.1.1 The email account that you tried to reach does not exist.', 'user_unknown', true],
  ['550', '550 Requested action not taken: mailbox unavailable', 'user_unknown', true],
  ['5.7.1', '550 5.7.1 Service unavailable; Client host [1.2.3.4] blocked using Spamhaus', 'reputation_block', false],
  ['550', '550 Your IP has very low reputation, try later', 'reputation_block', false],
  ['421', '421 4.7.0 Try again later, closing connection. (throttled)', 'rate_limited', false],
  ['5.2.2', '552 5.2.2 Mailbox full', 'mailbox_full', false],
  ['4.2.2', '452 4.2.2 The email account that you tried to reach is over quota', 'mailbox_full', false],
  ['5.3.4', '552 5.3.4 Message size exceeds fixed limit', 'message_too_large', false],
  ['5.7.26', '550 5.7.26 Unauthenticated email is not accepted due to DMARC policy', 'policy_block', false],
  ['5.4.4', '550 5.4.4 Host not found', 'host_unknown', true],
  ['5.2.1', '550 5.2.1 The email account that you tried to reach is disabled', 'suspended', true],
  ['4.4.7', 'Delivery expired after retries', 'expired', false],
  ['550', '550 Message content rejected as spam', 'content_spam', false],
];

test('rejections map to documented reasons; blocks never suppress the recipient', () => {
  for (const [status, diagnostic, reason, suppresses] of cases) {
    const result = classifyReason({ status, diagnostic });
    assert.equal(result.reason, reason, diagnostic);
    assert.equal(suppressesRecipient(result), suppresses, diagnostic);
  }
});

test('a 4xx is never hard', () => {
  assert.equal(classifyReason({ status: '450', diagnostic: '450 user unknown' }).hard, false);
});

test('auto-replies are recognised and are not bounces', () => {
  assert.ok(isAutoReply({ subject: 'Out of Office: re: your order' }));
  assert.ok(isAutoReply({ autoSubmitted: 'auto-replied' }));
  assert.ok(!isAutoReply({ subject: 'Undelivered Mail Returned to Sender' }));
});

test('a 550 reputation block from a receiver is temporary (retried), a 550 unknown user permanent', async () => {
  const { classifySmtpError } = await import('../../src/mail/smtp-delivery.ts');
  const err = (fields: object) => Object.assign(new Error('x'), fields);
  assert.equal(
    classifySmtpError(err({ responseCode: 550, response: '550 5.7.1 Your IP has very low reputation', command: 'RCPT TO' })).kind,
    'temporary',
  );
  assert.equal(classifySmtpError(err({ responseCode: 550, response: '550 5.1.1 User unknown', command: 'RCPT TO' })).kind, 'permanent');
});

test('"user unknown" without a 5.1.1 status is the recipient only when RCPT TO was answered (after DATA: its filter)', () => {
  assert.equal(
    classifyReason({ status: '550', diagnostic: '550 Unknown user kijitora@example.jp', command: 'RCPT TO' }).reason,
    'user_unknown',
  );
  const afterData = classifyReason({
    status: '5.0.0',
    diagnostic: '550 Unknown user kijitora@example.jp (in reply to end of DATA command)',
  });
  assert.deepEqual([afterData.reason, suppressesRecipient(afterData)], ['filtered', false]);
  // A 5.1.1 status or a directory lookup says "no such recipient" whatever the command.
  assert.equal(classifyReason({ status: '5.1.1', diagnostic: '550 5.1.1 User unknown', command: 'DATA' }).reason, 'user_unknown');
  assert.equal(
    classifyReason({
      status: '5.1.10',
      diagnostic: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    }).reason,
    'user_unknown',
  );
});

test('greylisting is no throttle; a 421 rate limit is', () => {
  assert.equal(
    classifyReason({ status: '451', diagnostic: '451 4.7.1 Greylisted, please try again later' }).reason === 'rate_limited',
    false,
  );
  assert.equal(classifyReason({ status: '421', diagnostic: '421 4.7.0 Rate limited, try again later' }).reason, 'rate_limited');
});
