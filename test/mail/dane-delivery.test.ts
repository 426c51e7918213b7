// DANE (RFC 7672) for outbound delivery against loopback receivers. The loopback DNS plays a
// validating resolver: names in a signed zone answer with the AD bit. A matching DANE-EE record
// gets the message over TLS (recorded `dane`); a certificate that does not match, a receiver
// without STARTTLS and a TLSA lookup that fails in a signed zone get nothing (temporary: retried
// later, never in the clear); TLSA records in an unsigned zone are ignored; only unusable records
// (PKIX-EE) still require STARTTLS, without checking the certificate. DANE wins over MTA-STS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { composeMessage } from '../../src/mail/compose.ts';
import { SmtpDelivery } from '../../src/mail/smtp-delivery.ts';
import { tlsaFor } from '../../src/mail/dane.ts';
import { MtaSts } from '../../src/mail/mta-sts.ts';
import { createSelfSignedCertificate } from '../../src/smtp/tls.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

test('DANE: matching TLSA → delivered over verified TLS; mismatch, no STARTTLS or SERVFAIL → not sent; unsigned TLSA ignored; unusable TLSA → TLS required', async (t) => {
  const dns = await startDnsServer();
  const published = createSelfSignedCertificate(['mx.good.test']);
  const other = createSelfSignedCertificate(['mx.bad.test']);
  const goodSink = await startSmtpSink({ rules: [], tls: { key: published.key, cert: published.cert } });
  const port = goodSink.port;
  const badSink = await startSmtpSink({ rules: [], host: '127.0.0.2', port, tls: { key: other.key, cert: other.cert } });
  const plainSink = await startSmtpSink({ rules: [], host: '127.0.0.3', port, starttls: false });
  const resolver = createResolver([dns.address], { timeoutMs: 500, tries: 1 });
  const delivery = new SmtpDelivery({
    resolver,
    heloName: 'mta.postlane.test',
    mxPort: port,
    connectionTimeoutMs: 5000,
    greetingTimeoutMs: 5000,
    socketTimeoutMs: 5000,
    dnsCacheMs: 0,
  });
  t.after(async () => {
    await delivery.close();
    await goodSink.close();
    await badSink.close();
    await plainSink.close();
    await dns.close();
  });
  // What the operator of mx.good.test publishes: DANE-EE, public key, SHA2-256 ("3 1 1").
  const record = tlsaFor(new X509Certificate(published.cert), 3, 1, 1);
  const addresses: Record<string, string> = {
    good: '127.0.0.1',
    bad: '127.0.0.2',
    plain: '127.0.0.3',
    servfail: '127.0.0.1',
    unsigned: '127.0.0.2',
  };
  for (const [name, address] of Object.entries(addresses)) {
    dns.set(`${name}.test`, 'MX', [{ exchange: `mx.${name}.test`, priority: 10 }]);
    dns.set(`mx.${name}.test`, 'A', [address]);
    dns.set(`_${port}._tcp.mx.${name}.test`, 'TLSA', [record]);
    if (name !== 'unsigned') dns.sign(`${name}.test`);
  }
  dns.fail(`_${port}._tcp.mx.servfail.test`);
  // Only a PKIX-EE record (unusable for SMTP): TLS is still required, the certificate not checked.
  for (const [name, address] of [
    ['pkix', '127.0.0.2'],
    ['pkixplain', '127.0.0.3'],
  ]) {
    dns.set(`${name}.test`, 'MX', [{ exchange: `mx.${name}.test`, priority: 10 }]);
    dns.set(`mx.${name}.test`, 'A', [address]);
    dns.set(`_${port}._tcp.mx.${name}.test`, 'TLSA', [{ ...record, usage: 1 }]);
    dns.sign(`${name}.test`);
  }
  const raw = await composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['x@good.test'],
    subject: 'Hello',
    text: 'Hi',
    messageId: 'dane@acme.test',
  });

  const delivered = await delivery.deliver({ from: 'b@acme.test', to: 'x@good.test', raw });
  assert.equal(delivered.kind, 'delivered', delivered.response);
  assert.equal(delivered.tls, 'dane');
  assert.equal(goodSink.messages.length, 1);
  assert.equal(goodSink.messages[0].secure, true);
  assert.ok(
    dns.queries.some((q) => q.name === `_${port}._tcp.mx.good.test` && q.type === 'TLSA'),
    'the TLSA record was asked through DNS_SERVERS',
  );

  // The receiver's certificate is not the one its TLSA record names: nothing sent, retried later.
  for (let i = 0; i < 2; i++) {
    const refused = await delivery.deliver({ from: 'b@acme.test', to: 'x@bad.test', raw });
    assert.equal(refused.kind, 'temporary', refused.response);
    assert.equal(refused.reason, 'policy_block');
    assert.equal(refused.enhancedCode, '4.7.5');
    assert.match(refused.response, /DANE: the TLS certificate of mx\.bad\.test fails its TLSA records/);
    assert.deepEqual(
      refused.attempts.map((a) => a.tls),
      ['dane'],
      'one try, no clear-text retry',
    );
  }
  assert.equal(badSink.accepted, 0);

  // No STARTTLS on offer: never delivered in the clear.
  const plain = await delivery.deliver({ from: 'b@acme.test', to: 'x@plain.test', raw });
  assert.equal(plain.kind, 'temporary', plain.response);
  assert.match(plain.response, /mx\.plain\.test offers no STARTTLS/);
  assert.deepEqual(
    plain.attempts.map((a) => a.tls),
    ['dane'],
  );
  assert.equal(plainSink.accepted, 0);
  assert.equal(plainSink.messages.length, 0);

  // A TLSA lookup that fails in a signed zone: the host is not used now (RFC 7672 §2.1.1).
  const servfail = await delivery.deliver({ from: 'b@acme.test', to: 'x@servfail.test', raw });
  assert.equal(servfail.kind, 'temporary', servfail.response);
  assert.match(servfail.response, /TLSA lookup for .*mx\.servfail\.test failed: SERVFAIL/);
  assert.equal(goodSink.messages.length, 1, 'nothing more reached the receiver');

  // Without the AD bit the TLSA answer (here naming another certificate) is ignored: opportunistic TLS as before.
  const unsigned = await delivery.deliver({ from: 'b@acme.test', to: 'x@unsigned.test', raw });
  assert.equal(unsigned.kind, 'delivered', unsigned.response);
  assert.equal(unsigned.tls, 'opportunistic');
  assert.equal(badSink.accepted, 1);

  const unusable = await delivery.deliver({ from: 'b@acme.test', to: 'x@pkix.test', raw });
  assert.equal(unusable.kind, 'delivered', unusable.response);
  assert.equal(unusable.tls, 'tls');
  assert.equal(badSink.messages.at(-1)?.secure, true);
  const unusablePlain = await delivery.deliver({ from: 'b@acme.test', to: 'x@pkixplain.test', raw });
  assert.equal(unusablePlain.kind, 'temporary', unusablePlain.response);
  assert.match(unusablePlain.response, /mx\.pkixplain\.test offers no STARTTLS/);
  assert.equal(plainSink.accepted, 0);
});

test('DANE takes precedence over MTA-STS: an MX host with matching TLSA records is used though the enforce policy does not name it', async (t) => {
  const dns = await startDnsServer();
  const mxCert = createSelfSignedCertificate(['mx.both.test']);
  const policyCert = createSelfSignedCertificate(['mta-sts.both.test']);
  const https = createServer({ key: policyCert.key, cert: policyCert.cert }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('version: STSv1\nmode: enforce\nmx: mx.elsewhere.test\nmax_age: 86400\n');
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  const sink = await startSmtpSink({ rules: [], tls: { key: mxCert.key, cert: mxCert.cert } });
  const resolver = createResolver([dns.address], { timeoutMs: 500, tries: 1 });
  const mtaSts = new MtaSts({ resolver, port: (https.address() as AddressInfo).port, ca: [policyCert.cert] });
  const delivery = new SmtpDelivery({
    resolver,
    heloName: 'mta.postlane.test',
    mxPort: sink.port,
    connectionTimeoutMs: 5000,
    greetingTimeoutMs: 5000,
    socketTimeoutMs: 5000,
    dnsCacheMs: 0,
    mtaSts,
  });
  t.after(async () => {
    await delivery.close();
    await sink.close();
    https.close();
    await dns.close();
  });
  dns.set('both.test', 'MX', [{ exchange: 'mx.both.test', priority: 10 }]);
  dns.set('mx.both.test', 'A', ['127.0.0.1']);
  dns.set('_mta-sts.both.test', 'TXT', ['v=STSv1; id=1']);
  dns.set('mta-sts.both.test', 'A', ['127.0.0.1']);
  dns.set(`_${sink.port}._tcp.mx.both.test`, 'TLSA', [tlsaFor(new X509Certificate(mxCert.cert), 3, 1, 1)]);
  const raw = await composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['x@both.test'],
    subject: 'Hello',
    text: 'Hi',
    messageId: 'both@acme.test',
  });

  // Unsigned: MTA-STS alone decides, and its policy names none of the MX hosts.
  const refused = await delivery.deliver({ from: 'b@acme.test', to: 'x@both.test', raw });
  assert.equal(refused.kind, 'temporary');
  assert.match(refused.response, /MTA-STS policy of both\.test \(enforce\) names none of its MX hosts/);

  dns.sign('both.test');
  const delivered = await delivery.deliver({ from: 'b@acme.test', to: 'x@both.test', raw });
  assert.equal(delivered.kind, 'delivered', delivered.response);
  assert.equal(delivered.tls, 'dane');
  assert.equal(sink.messages.length, 1);
});
