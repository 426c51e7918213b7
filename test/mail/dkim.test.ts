import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { composeMessage } from '../../src/mail/compose.ts';
import { dkimRecordValue, generateDkimKeyPair, relaxedBody, relaxedHeader, signMessage } from '../../src/mail/dkim.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';

/** A key published at postlane._domainkey.acme.test on a loopback DNS server, and mailauth's
 *  verifier in strict RFC mode resolving through it. */
async function publishedKey(t: TestContext) {
  const dns = await startDnsServer();
  t.after(() => dns.close());
  const resolver = createResolver([dns.address], { timeoutMs: 1000, tries: 1 });
  const keys = generateDkimKeyPair();
  dns.set('postlane._domainkey.acme.test', 'TXT', [dkimRecordValue(keys.publicKey)]);
  const verify = (message: Buffer) =>
    dkimVerify(message, { strict: true, resolver: (name, type) => resolver.resolve(name, type) as Promise<string[][]> });
  return { dns, keys, verify };
}

test('a signed message passes an independent DKIM verifier that reads the key from DNS', async (t) => {
  const { dns, keys, verify } = await publishedKey(t);

  const raw = await composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['bob@example.com'],
    subject: 'Grüße',
    html: '<p>Hello<br>\nworld</p>',
    text: 'Hello\nworld',
    messageId: 'dkim1@acme.test',
    attachments: [{ filename: 'a.txt', content: Buffer.from('x'.repeat(2000)) }],
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
  await assert.rejects(
    signMessage(raw, { domain: 'acme.test', selector: 'postlane', privateKey: 'not a key' }),
    /DKIM signing for acme\.test failed/,
  );
});

test('relaxed canonicalization matches the example of RFC 6376 §3.4.5', () => {
  assert.equal(relaxedHeader('A: X'), 'a:X');
  assert.equal(relaxedHeader('B : Y\t\r\n\tZ  '), 'b:Y Z');
  assert.equal(relaxedBody(' C \r\nD \t E\r\n\r\n\r\n'), ' C\r\nD E\r\n');
  assert.equal(relaxedBody('\r\n\r\n'), '');
  assert.equal(relaxedBody('no line end '), 'no line end\r\n');
});

test('signatures verify for bodies with trailing blanks, long headers and repeated fields', async (t) => {
  const { keys, verify } = await publishedKey(t);
  const raw = Buffer.from(
    [
      'From: Acme <news@acme.test>',
      'To: a@example.com,',
      '\tb@example.com',
      'Subject: ' + 'long subject '.repeat(20),
      'Reply-To: x@acme.test',
      'Reply-To: y@acme.test',
      'Message-ID: <r@acme.test>',
      'Content-Type: text/plain; charset=latin1',
      '',
      'caf\xe9  \t ',
      ' indented\t\tline',
      '',
      '',
      '',
    ].join('\r\n'),
    'latin1',
  );
  const signed = await signMessage(
    raw,
    { domain: 'acme.test', selector: 'postlane', privateKey: keys.privateKey },
    { signTime: new Date('2026-01-01T00:00:00Z') },
  );
  const header = signed.toString('latin1').split(/\r\n(?=\S)/)[0];
  assert.ok(
    header.split('\r\n').every((line) => line.length <= 78),
    header,
  );
  assert.match(header, /t=1767225600;/);
  const result = await verify(signed);
  assert.equal(result.results[0].status.result, 'pass', JSON.stringify(result.results[0].status));
  // Both Reply-To fields are signed: dropping one breaks the signature.
  const dropped = Buffer.from(signed.toString('latin1').replace('Reply-To: y@acme.test\r\n', ''), 'latin1');
  assert.equal((await verify(dropped)).results[0].status.result, 'fail');
});
