// What the bounce reader learns from the SMTP stage a report names, from receivers' own codes and
// wordings, from the products that write reports, and from reports with broken MIME. Samples are
// real-world messages of the corpus (test/fixtures/bounces/sisimai, sources in its README).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseBounce } from '../../src/mail/bounces.ts';
import { classifyReason, suppressesRecipient } from '../../src/mail/bounce-reasons.ts';

const sample = (name: string) => parseBounce(readFileSync(new URL(`../fixtures/bounces/sisimai/${name}.eml`, import.meta.url)));

test('"user unknown" in a report is the recipient only when RCPT TO was answered; unstated, it is the filter', () => {
  const unstated = classifyReason({ status: '5.0.0', diagnostic: '550 Unknown user kijitora@example.jp', report: true });
  assert.deepEqual([unstated.reason, suppressesRecipient(unstated)], ['filtered', false]);
  const atRcpt = classifyReason({
    status: '5.0.0',
    diagnostic: '550 Unknown user kijitora@example.jp',
    context: '>>> RCPT To:<kijitora@example.jp>\n<<< 550 Unknown user',
    report: true,
  });
  assert.deepEqual([atRcpt.reason, suppressesRecipient(atRcpt)], ['user_unknown', true]);
  // Answered at MAIL FROM, "user unknown" is about our sender, not the recipient.
  assert.equal(
    suppressesRecipient(
      classifyReason({ status: '550', diagnostic: '550 5.0.0 <bounce@acme.test>... User unknown', command: 'MAIL FROM' }),
    ),
    false,
  );
  // Our own deliveries know the command; a synchronous answer without one is taken as RCPT's.
  assert.equal(classifyReason({ status: '550', diagnostic: '550 Unknown user kijitora@example.jp' }).reason, 'user_unknown');
  // A local delivery agent has no SMTP stage: its "unknown user" is the mailbox's.
  assert.equal(classifyReason({ status: '5.5.0', context: 'mail.local: unknown user: kijitora', report: true }).reason, 'user_unknown');
});

test("receivers' own codes and wordings: La Poste/Orange, Cox, QQ, au", () => {
  const reason = (diagnostic: string, host = '') => classifyReason({ status: '5.0.0', diagnostic, host, report: true }).reason;
  assert.equal(reason('550 5.5.0 Adresse destinataire invalide. Invalid recipient. LPN007_416'), 'user_unknown');
  assert.equal(reason('550 5.2.0 Mail rejete. Mail rejected. OFR_506 [506]'), 'content_spam');
  assert.equal(reason('550 5.5.0 Le compte du destinataire est bloque. The recipient account is blocked. LPN007_426'), 'suspended');
  assert.equal(reason('550 5.1.0 <a@b.example> sender rejected. AUP#CXBL', 'mx.east.cox.net'), 'reputation_block');
  assert.equal(reason('550 Ip frequency limited [V2Vk Blocked IP 192.0.2.22]', 'mx3.qq.com'), 'rate_limited');
  // au answers its users' filters with "550 : User unknown", an unknown address with "550 <addr>: User unknown".
  assert.equal(reason('550 : User unknown', 'lsean.ezweb.ne.jp'), 'filtered');
  assert.equal(reason('550 <neko@ezweb.ne.jp>: User unknown', 'lsean.ezweb.ne.jp'), 'user_unknown');
});

test('blocks stay blocks: a blocklist named beside an unknown-recipient status never suppresses', () => {
  const result = classifyReason({
    status: '5.1.1',
    diagnostic: '550 5.1.1 Service unavailable; client [192.0.2.1] blocked using zen.spamhaus.org',
    report: true,
  });
  assert.equal(result.reason, 'reputation_block');
  assert.equal(suppressesRecipient(result), false);
});

test("reporting products' own formats: Facebook codes, au/KDDI without a daemon sender, Exchange 2003 codes, PowerMTA categories", async () => {
  assert.equal((await sample('lhost-facebook-03')).reason, 'filtered');
  const kddi = await sample('lhost-kddi-01');
  assert.deepEqual([kddi.kind, kddi.reason], ['bounce', 'mailbox_full']);
  assert.equal((await sample('lhost-exchange2003-01')).reason, 'user_unknown');
  assert.equal((await sample('lhost-powermta-02')).reason, 'user_unknown');
  // SES notifications inside an SNS envelope (escaped JSON).
  const ses = await sample('lhost-amazonses-10');
  assert.deepEqual([ses.kind, ses.recipient, ses.reason], ['bounce', 'bounce@simulator.amazonses.com', 'user_unknown']);
});

test('reports with broken MIME are still read: mismatched boundaries, no boundaries at all, ISO-2022-JP fields', async () => {
  const mismatched = await sample('rhost-franceptt-07');
  assert.deepEqual(
    [mismatched.kind, mismatched.source, mismatched.recipient, mismatched.reason],
    ['bounce', 'dsn', 'xxxx@wanadoo.fr', 'reputation_block'],
  );
  // Delivery-status fields in ISO-2022-JP (Domino in Japanese) are decoded.
  const domino = await sample('lhost-domino-02');
  assert.deepEqual(
    [domino.diagnostic, domino.reason],
    ['ユーザーNeko (kijitora@example.co.jp) は Domino ディレクトリには見つかりません。', 'user_unknown'],
  );
  const bare = await sample('rfc3464-06');
  assert.deepEqual([bare.kind, bare.recipient, bare.reason], ['bounce', 'kijitora@example.net', 'user_unknown']);
});

test('auto-replies stay auto-replies; a bare "mailer-daemon" sender is a bounce, not an auto-reply', async () => {
  assert.equal((await sample('rfc3834-01')).kind, 'auto_reply');
  const x6 = await sample('lhost-x6-02');
  assert.deepEqual([x6.kind, x6.reason], ['bounce', 'user_unknown']);
});
