// MTA-STS (RFC 8461) for outbound delivery against loopback receivers: the policy is found
// through the resolver (TXT _mta-sts) and fetched over HTTPS from mta-sts.<domain>; with
// `enforce`, an MX whose certificate is not valid gets nothing (never in the clear), an MX
// with a valid one gets the message over verified TLS, and MX hosts the policy does not name
// are not used. The TLS outcome is recorded on each attempt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { composeMessage } from '../../src/mail/compose.ts';
import { SmtpDelivery } from '../../src/mail/smtp-delivery.ts';
import { MtaSts } from '../../src/mail/mta-sts.ts';
import { createSelfSignedCertificate } from '../../src/smtp/tls.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

test('MTA-STS enforce: invalid certificate → not delivered (no clear-text fallback); valid → verified TLS; unlisted MX unused', async (t) => {
  const dns = await startDnsServer();
  const policyCert = createSelfSignedCertificate(['mta-sts.bad.test', 'mta-sts.good.test', 'mta-sts.other.test', 'mta-sts.testing.test']);
  const mxCert = createSelfSignedCertificate(['mx.good.test']);
  const policies: Record<string, string> = {
    'mta-sts.bad.test': 'version: STSv1\nmode: enforce\nmx: mx.bad.test\nmax_age: 86400\n',
    'mta-sts.good.test': 'version: STSv1\nmode: enforce\nmx: *.good.test\nmax_age: 86400\n',
    'mta-sts.other.test': 'version: STSv1\nmode: enforce\nmx: mx.elsewhere.test\nmax_age: 86400\n',
    'mta-sts.testing.test': 'version: STSv1\nmode: testing\nmx: mx.testing.test\nmax_age: 86400\n',
  };
  const https = createServer({ key: policyCert.key, cert: policyCert.cert }, (req, res) => {
    const body = req.url === '/.well-known/mta-sts.txt' ? policies[String(req.headers.host).split(':')[0]] : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/plain' }).end(body ?? '');
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  // The default sink certificate (smtp-server's own) is not valid for mx.bad.test; 127.0.0.2 has a valid one.
  const badSink = await startSmtpSink({ rules: [] });
  const goodSink = await startSmtpSink({ rules: [], host: '127.0.0.2', port: badSink.port, tls: { key: mxCert.key, cert: mxCert.cert } });
  const resolver = createResolver([dns.address], { timeoutMs: 500, tries: 1 });
  for (const domain of ['bad.test', 'good.test', 'other.test', 'testing.test']) {
    dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
    dns.set(`_mta-sts.${domain}`, 'TXT', ['v=STSv1; id=20261125T000000']);
    dns.set(`mta-sts.${domain}`, 'A', ['127.0.0.1']);
  }
  dns.set('mx.bad.test', 'A', ['127.0.0.1']);
  dns.set('mx.good.test', 'A', ['127.0.0.2']);
  dns.set('mx.other.test', 'A', ['127.0.0.1']);
  dns.set('mx.testing.test', 'A', ['127.0.0.1']);
  const ca = [policyCert.cert, mxCert.cert];
  const delivery = new SmtpDelivery({
    resolver,
    heloName: 'mta.postlane.test',
    mxPort: badSink.port,
    connectionTimeoutMs: 5000,
    greetingTimeoutMs: 5000,
    socketTimeoutMs: 5000,
    tlsCa: ca,
    mtaSts: new MtaSts({ resolver, port: (https.address() as AddressInfo).port, ca }),
  });
  t.after(async () => {
    await delivery.close();
    await badSink.close();
    await goodSink.close();
    https.close();
    await dns.close();
  });
  const raw = await composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['x@bad.test'],
    subject: 'Hello',
    text: 'Hi',
    messageId: 'sts@acme.test',
  });

  const refused = await delivery.deliver({ from: 'b@acme.test', to: 'x@bad.test', raw });
  assert.equal(refused.kind, 'temporary', refused.response);
  assert.equal(refused.reason, 'policy_block');
  assert.deepEqual(
    refused.attempts.map((a) => a.tls),
    ['mta-sts'],
    'one verified-TLS try, no clear-text retry',
  );
  assert.equal(badSink.accepted, 0, 'nothing was delivered in the clear');

  const delivered = await delivery.deliver({ from: 'b@acme.test', to: 'x@good.test', raw });
  assert.equal(delivered.kind, 'delivered', delivered.response);
  assert.equal(delivered.tls, 'mta-sts');
  assert.equal(goodSink.messages[0].secure, true);

  const unlisted = await delivery.deliver({ from: 'b@acme.test', to: 'x@other.test', raw });
  assert.equal(unlisted.kind, 'temporary');
  assert.match(unlisted.response, /MTA-STS policy of other\.test \(enforce\) names none of its MX hosts/);
  assert.equal(badSink.accepted, 0);

  // `testing` reports but does not block: opportunistic TLS as without a policy.
  const testing = await delivery.deliver({ from: 'b@acme.test', to: 'x@testing.test', raw });
  assert.equal(testing.kind, 'delivered', testing.response);
  assert.equal(testing.tls, 'opportunistic');
});
