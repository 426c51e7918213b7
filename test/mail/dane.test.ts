// TLSA matching (RFC 7672 §3.1), pure: which records are usable, DANE-EE (key or certificate
// matches, no name or expiry checks), DANE-TA (the chain leads to the matched anchor, the leaf
// names the MX host and is within its validity). Also the AD-bit lookups against the loopback DNS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tlsaFor, tlsaMatches, usableTlsa, verifyDane, type TlsaRecord } from '../../src/mail/dane.ts';
import { DaneLookup, querySecure } from '../../src/mail/dane-dns.ts';
import { createSelfSignedCertificate } from '../../src/smtp/tls.ts';
import { startDnsServer } from '../helpers/dns-server.ts';

const fixture = (name: string) => new X509Certificate(readFileSync(new URL(`../fixtures/dane/${name}`, import.meta.url)));
const root = fixture('ta-root.pem');
const leaf = fixture('ta-leaf-mx.ta.test.pem');
const selfSigned = new X509Certificate(createSelfSignedCertificate(['mx.example.test']).cert);
const stranger = new X509Certificate(createSelfSignedCertificate(['mx.example.test']).cert);
const in2200 = Date.parse('2200-01-01T00:00:00Z');

test('usable records: DANE-TA and DANE-EE, selector 0/1, matching 0/1/2 with the right digest length', () => {
  const digest = tlsaFor(selfSigned, 3, 1, 1).data;
  const records: TlsaRecord[] = [
    { usage: 3, selector: 1, matchingType: 1, data: digest },
    { usage: 2, selector: 0, matchingType: 2, data: tlsaFor(root, 2, 0, 2).data },
    { usage: 0, selector: 1, matchingType: 1, data: digest }, // PKIX-TA: unusable for SMTP
    { usage: 1, selector: 1, matchingType: 1, data: digest }, // PKIX-EE: unusable for SMTP
    { usage: 3, selector: 2, matchingType: 1, data: digest }, // unknown selector
    { usage: 3, selector: 1, matchingType: 3, data: digest }, // unknown matching type
    { usage: 3, selector: 1, matchingType: 1, data: digest.subarray(0, 20) }, // truncated digest
  ];
  assert.deepEqual(usableTlsa(records), records.slice(0, 2));
  assert.deepEqual(verifyDane(records.slice(2), [selfSigned], ['mx.example.test']), { ok: false, reason: 'no usable TLSA record' });
});

test('DANE-EE: every selector and matching type matches the leaf; another key does not', () => {
  for (const selector of [0, 1]) {
    for (const matchingType of [0, 1, 2]) {
      const record = tlsaFor(selfSigned, 3, selector, matchingType);
      assert.equal(tlsaMatches(record, selfSigned), true, `3 ${selector} ${matchingType}`);
      assert.equal(tlsaMatches(record, stranger), false, `3 ${selector} ${matchingType} other certificate`);
    }
  }
  assert.equal(tlsaFor(selfSigned, 3, 1, 0).data.equals(selfSigned.publicKey.export({ type: 'spki', format: 'der' })), true);
  assert.deepEqual(verifyDane([tlsaFor(stranger, 3, 1, 1)], [selfSigned], ['mx.example.test']), {
    ok: false,
    reason: 'certificate matches none of the TLSA records',
  });
});

test('DANE-EE ignores names and expiry (RFC 7672 §3.1.1)', () => {
  const record = tlsaFor(selfSigned, 3, 1, 1);
  assert.deepEqual(verifyDane([record], [selfSigned], ['some.other.host'], in2200), { ok: true, usage: 'DANE-EE' });
  assert.deepEqual(verifyDane([record], [], ['mx.example.test']), { ok: false, reason: 'the server presented no certificate' });
});

test('DANE-TA: the leaf chains to the matched anchor and names the MX host (or the recipient domain)', () => {
  const anchor = tlsaFor(root, 2, 0, 1);
  assert.deepEqual(verifyDane([anchor], [leaf, root], ['mx.ta.test']), { ok: true, usage: 'DANE-TA' });
  assert.deepEqual(verifyDane([tlsaFor(root, 2, 1, 1)], [leaf, root], ['ta.test', 'mx.ta.test']), { ok: true, usage: 'DANE-TA' });
  // The anchor's key only matches when the certificate carrying it is in the chain.
  assert.equal(verifyDane([anchor], [leaf], ['mx.ta.test']).ok, false);
  // Name checks apply to DANE-TA.
  assert.deepEqual(verifyDane([anchor], [leaf, root], ['mx.elsewhere.test', 'elsewhere.test']), {
    ok: false,
    reason: 'certificate is not valid for mx.elsewhere.test or elsewhere.test',
  });
  // A leaf the anchor did not sign, presented along with the anchor, does not pass.
  assert.deepEqual(verifyDane([anchor], [selfSigned, root], ['mx.example.test']), {
    ok: false,
    reason: 'certificate chain does not lead to the DANE-TA trust anchor',
  });
  // An expired leaf does not pass.
  assert.deepEqual(verifyDane([anchor], [leaf, root], ['mx.ta.test'], in2200), {
    ok: false,
    reason: 'certificate is expired or not yet valid',
  });
  // A DANE-EE record for the leaf passes the same chain whatever the names.
  assert.deepEqual(verifyDane([anchor, tlsaFor(leaf, 3, 0, 1)], [leaf, root], ['mx.elsewhere.test']), { ok: true, usage: 'DANE-EE' });
});

test('TLSA lookups trust the AD bit: insecure, missing, failing and unusable answers', async (t) => {
  const dns = await startDnsServer();
  t.after(() => dns.close());
  const lookup = new DaneLookup({ servers: [dns.address], timeoutMs: 500, cacheMs: 0 });
  const record = tlsaFor(selfSigned, 3, 1, 1);
  for (const zone of ['signed.test', 'unsigned.test', 'bare.test', 'broken.test', 'pkix.test']) {
    dns.set(zone, 'MX', [{ exchange: `mx.${zone}`, priority: 10 }]);
    dns.set(`mx.${zone}`, 'A', ['127.0.0.1']);
    if (zone !== 'bare.test') dns.set(`_25._tcp.mx.${zone}`, 'TLSA', [zone === 'pkix.test' ? { ...record, usage: 1 } : record]);
    if (zone !== 'unsigned.test') dns.sign(zone);
  }
  dns.fail('_25._tcp.mx.broken.test');

  const answer = await querySecure([dns.address], '_25._tcp.mx.signed.test', 'TLSA', 500);
  assert.equal(answer.authenticated, true);
  assert.equal(answer.rcode, 'NOERROR');
  assert.equal(answer.answers.length, 1);

  assert.equal(await lookup.mxSecure('signed.test'), true);
  assert.equal(await lookup.mxSecure('unsigned.test'), false);
  assert.deepEqual(await lookup.tlsaFor('mx.signed.test', 25), { kind: 'dane', records: [record] });
  assert.deepEqual(await lookup.tlsaFor('mx.unsigned.test', 25), { kind: 'none', why: 'insecure address records' });
  assert.deepEqual(await lookup.tlsaFor('mx.bare.test', 25), { kind: 'none', why: 'no TLSA records' });
  assert.equal((await lookup.tlsaFor('mx.broken.test', 25)).kind, 'temporary');
  assert.deepEqual(await lookup.tlsaFor('mx.pkix.test', 25), { kind: 'unusable' });
  // No DNS server answering: temporary, not "no DANE".
  const silent = new DaneLookup({ servers: ['127.0.0.1:9'], timeoutMs: 200, cacheMs: 0 });
  assert.equal((await silent.tlsaFor('mx.signed.test', 25)).kind, 'temporary');
});
