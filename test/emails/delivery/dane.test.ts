// DANE (RFC 7672) through the running app: DNS_SERVERS points at the loopback DNS, which plays a
// validating resolver for example.org and mismatch.test (AD bit) and publishes TLSA records for
// their MX hosts. Matching records: delivered, and the attempt says `dane` in the API. A
// certificate that does not match: the email stays queued for a retry, nothing reaches the
// receiver, each attempt is a temporary policy_block.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { startDeliveryApp, type DeliveryApp } from './helpers.ts';
import { eventually } from '../../helpers/app.ts';
import { tlsaFor } from '../../../src/mail/dane.ts';
import { createSelfSignedCertificate } from '../../../src/smtp/tls.ts';

let app: DeliveryApp;
const receiverCert = createSelfSignedCertificate(['mx.example.org']);
const otherCert = createSelfSignedCertificate(['mx.mismatch.test']);
before(async () => {
  app = await startDeliveryApp({ sink: { tls: { key: receiverCert.key, cert: receiverCert.cert } } });
  const port = app.sink.port;
  app.dns.sign('example.org');
  app.dns.set(`_${port}._tcp.mx.example.org`, 'TLSA', [tlsaFor(new X509Certificate(receiverCert.cert), 3, 1, 1)]);
  // mismatch.test's MX is the same receiver, but its TLSA record names another key.
  app.dns.sign('mismatch.test');
  app.dns.set('mismatch.test', 'MX', [{ exchange: 'mx.mismatch.test', priority: 10 }]);
  app.dns.set('mx.mismatch.test', 'A', ['127.0.0.1']);
  app.dns.set(`_${port}._tcp.mx.mismatch.test`, 'TLSA', [tlsaFor(new X509Certificate(otherCert.cert), 3, 1, 1)]);
});
after(async () => {
  await app.close();
});

const send = (to: string) => app.api.post('/v2/emails', { from: 'Acme <hello@acme.test>', to, subject: 'Hi', text: 'Hi' });

test('a receiver whose certificate matches its TLSA record gets the email over TLS; the attempt records dane', async () => {
  const res = await send('customer@example.org');
  assert.equal(res.status, 200, res.text);
  await app.waitForStatus(res.body.id, 'delivered');
  const received = app.sink.messages.filter((m) => m.rcptTo.includes('customer@example.org'));
  assert.equal(received.length, 1);
  assert.equal(received[0].secure, true);
  const email = await app.api.get(`/v2/emails/${res.body.id}`);
  assert.equal(email.status, 200, email.text);
  assert.deepEqual(
    email.body.attempts.map((a: { outcome: string; tls: string }) => [a.outcome, a.tls]),
    [['delivered', 'dane']],
  );
});

test('a certificate that does not match the TLSA record: never sent, retried later', async () => {
  const before = app.sink.connections;
  const res = await send('someone@mismatch.test');
  assert.equal(res.status, 200, res.text);
  await app.waitForStatus(res.body.id, 'attempted');
  // The status commits before the runner writes the retry time: wait for that, or makeDue races it.
  await eventually(async () => (await app.jobOf(res.body.id))?.locked_by === null, 5000);
  await app.makeDue(res.body.id);
  const attempts = await eventually(async () => {
    const rows = await app.attemptsOf(res.body.id);
    return rows.length >= 2 && rows;
  }, 10_000);
  for (const attempt of attempts) {
    assert.deepEqual([attempt.outcome, attempt.enhanced_code, attempt.reason, attempt.tls], ['temporary', '4.7.5', 'policy_block', 'dane']);
    assert.match(attempt.response, /DANE: the TLS certificate of mx\.mismatch\.test fails its TLSA records/);
  }
  assert.ok(app.sink.connections > before, 'the receiver was reached (and refused by us)');
  assert.equal(app.sink.messages.filter((m) => m.rcptTo.includes('someone@mismatch.test')).length, 0, 'nothing was delivered');
  assert.equal((await app.email(res.body.id)).status, 'attempted');
  assert.equal(
    (await app.api.get('/v2/suppressions/someone%40mismatch.test')).status,
    404,
    'a TLS failure does not suppress the recipient',
  );
});
