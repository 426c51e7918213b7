// SMARTHOST_URL: every message goes to the relay (AUTH, STARTTLS) instead of the recipients' MX
// hosts, whatever DNS says about the recipient's domain; the relay's refusals count as usual.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.ts';
import { parseVerpAddress } from '../../../src/mail/verp.ts';

let relay: SmtpSink;
let app: DeliveryApp;

before(async () => {
  relay = await startSmtpSink({ rules: [], auth: { user: 'relay-user', pass: 's3cret/+pass' } });
  app = await startDeliveryApp({
    env: { SMARTHOST_URL: `smtp://relay-user:${encodeURIComponent('s3cret/+pass')}@127.0.0.1:${relay.port}?tls.rejectUnauthorized=false` },
  });
});
after(async () => {
  await app.close();
  await relay.close();
});

test('mail for any domain goes through the smarthost, authenticated, over STARTTLS, DKIM-signed', async () => {
  const res = await app.api.post('/v2/emails', {
    from: 'hello@acme.test',
    to: ['anyone@unresolvable.example', 'jane@example.org'],
    subject: 'Via relay',
    text: 'Hi',
  });
  assert.equal(res.status, 200, res.text);
  for (const id of Object.values(res.body.ids) as string[]) await app.waitForStatus(id, 'delivered');
  assert.equal(app.sink.messages.length, 0, 'nothing went to the MX');
  assert.equal(relay.messages.length, 2);
  for (const message of relay.messages) {
    assert.equal(message.user, 'relay-user');
    assert.equal(message.secure, true);
    assert.equal(message.heloName, 'mail.postlane.test');
    const id = res.body.ids[message.rcptTo[0]];
    assert.equal(parseVerpAddress(message.mailFrom, app.running.ctx.verpSecret)?.id, id);
    assert.equal((await app.verifyDkim(message.raw)).results[0].status.result, 'pass');
    assert.deepEqual(
      (await app.attemptsOf(id)).map((a) => [a.outcome, a.mx_host]),
      [['delivered', '127.0.0.1']],
    );
  }
});

test("the smarthost's 5xx for a recipient bounces the email", async () => {
  relay.addRule({ match: 'gone@example.org', reply: { code: 550, message: '5.1.1 Recipient gone' } });
  const res = await app.api.post('/v2/emails', { from: 'hello@acme.test', to: 'gone@example.org', subject: 'Via relay', text: 'Hi' });
  const row = await app.waitForStatus(res.body.id, 'bounced');
  assert.match(row.status_detail, /550 5\.1\.1 Recipient gone/);
});
