import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { composeMessage } from '../../src/mail/compose.ts';
import { dkimRecordValue, generateDkimKeyPair, signMessage } from '../../src/mail/dkim.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';

test('a signed message passes an independent DKIM verifier that reads the key from DNS', async (t) => {
  const dns = await startDnsServer();
  t.after(() => dns.close());
  const resolver = createResolver([dns.address], { timeoutMs: 1000, tries: 1 });
  const keys = generateDkimKeyPair();
  dns.set('postlane._domainkey.acme.test', 'TXT', [dkimRecordValue(keys.publicKey)]);
  // mailauth's verifier in strict RFC mode, resolving through the loopback DNS server.
  const verify = (message: Buffer) => dkimVerify(message, { strict: true, resolver: (name, type) => resolver.resolve(name, type) as Promise<string[][]> });

  const raw = await composeMessage({
    from: 'Acme <news@acme.test>', to: ['bob@example.com'], subject: 'Grüße', html: '<p>Hello<br>\nworld</p>', text: 'Hello\nworld',
    messageId: 'dkim1@acme.test', attachments: [{ filename: 'a.txt', content: Buffer.from('x'.repeat(2000)) }],
    headers: { 'X-Campaign': 'spring' },
  });
  const signed = await signMessage(raw, { domain: 'Acme.Test', selector: 'postlane', privateKey: keys.privateKey });
  assert.ok(signed.subarray(signed.length - raw.length).equals(raw), 'the signature is prepended, the message unchanged');
  const header = signed.toString('utf8').split(/\r\n(?=\S)/)[0];
  assert.match(header, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=acme\.test;/);
  assert.match(header, /[; ]s=postlane;/);
  assert.match(header, /h=[^;]*From/);

  const result = await verify(signed);
  assert.equal(result.results.length, 1);
  assert.equal(result.results[0].status.result, 'pass', JSON.stringify(result.results[0].status));
  assert.equal(result.results[0].signingDomain, 'acme.test');
  assert.equal(result.results[0].selector, 'postlane');
  assert.ok(dns.queries.some((q) => q.name === 'postlane._domainkey.acme.test' && q.type === 'TXT'));

  // Relaxed canonicalization survives header re-folding; a changed body or subject does not verify.
  const refolded = Buffer.from(signed.toString('utf8').replace('Subject: ', 'Subject:   '));
  assert.equal((await verify(refolded)).results[0].status.result, 'pass');
  const tamperedBody = Buffer.from(signed.toString('utf8').replace('Hello', 'Hallo'));
  assert.equal((await verify(tamperedBody)).results[0].status.result, 'fail');
  const tamperedSubject = Buffer.from(signed.toString('utf8').replace(/^Subject: .*$/m, 'Subject: Win a prize'));
  assert.equal((await verify(tamperedSubject)).results[0].status.result, 'fail');
  // Another key published under the selector: the signature no longer verifies.
  dns.set('postlane._domainkey.acme.test', 'TXT', [dkimRecordValue(generateDkimKeyPair().publicKey)]);
  assert.equal((await verify(signed)).results[0].status.result, 'fail');
});

test('a bad private key is an error, not an unsigned message', async () => {
  const raw = await composeMessage({ from: 'a@acme.test', to: ['b@example.com'], subject: 's', text: 'x', messageId: 'k@acme.test' });
  await assert.rejects(signMessage(raw, { domain: 'acme.test', selector: 'postlane', privateKey: 'not a key' }), /DKIM signing for acme\.test failed/);
});
