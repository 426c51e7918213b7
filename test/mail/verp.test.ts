import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveVerpSecret, parseVerpAddress, returnPathDomain, verpAddress } from '../../src/mail/verp.ts';

const secret = deriveVerpSecret(Buffer.alloc(32, 7));
const id = 'em_2gG6QwWJ0hR1x1wJbYq8sVZ3nQp';

test('a VERP address encodes the email id on the return-path host and parses back', () => {
  const host = returnPathDomain('Acme.Test', 'postlane');
  assert.equal(host, 'postlane.acme.test');
  const address = verpAddress(id, host, secret);
  assert.match(address, /^b\+em_2gG6QwWJ0hR1x1wJbYq8sVZ3nQp\.[0-9a-f]{16}@postlane\.acme\.test$/);
  assert.ok(address.split('@')[0].length <= 64, 'local part fits RFC 5321');
  assert.deepEqual(parseVerpAddress(address, secret), { id, host: 'postlane.acme.test' });
  // Brackets, an upper-cased host and MAC, and a trailing dot are tolerated; the id keeps its case.
  const [local, domain] = address.split('@');
  const [prefix, mac] = local.split('.');
  assert.deepEqual(parseVerpAddress(`<B${prefix.slice(1)}.${mac.toUpperCase()}@${domain.toUpperCase()}.>`, secret), {
    id,
    host: 'postlane.acme.test',
  });
});

test('forged, altered or foreign addresses are refused', () => {
  const address = verpAddress(id, 'bounces.postlane.test', secret);
  const otherSecret = deriveVerpSecret(Buffer.alloc(32, 8));
  assert.equal(parseVerpAddress(address, otherSecret), null, 'MAC from another key');
  assert.equal(parseVerpAddress(address.replace('em_2', 'em_3'), secret), null, 'another id with the same MAC');
  assert.equal(parseVerpAddress(address.replace('bounces.postlane.test', 'evil.test'), secret), null, 'MAC bound to the host');
  assert.equal(parseVerpAddress(address.replace(/\.[0-9a-f]{16}@/, '.0000000000000000@'), secret), null, 'guessed MAC');
  assert.equal(parseVerpAddress(address.replace(/\.([0-9a-f]{16})@/, '.$1ab@'), secret), null, 'wrong MAC length');
  for (const other of ['bob@example.com', 'b+@x.test', 'b+nodot@x.test', '', '@x.test', 'b+em_x.zz@x.test']) {
    assert.equal(parseVerpAddress(other, secret), null, other);
  }
});

test('ids outside the safe alphabet are not encoded', () => {
  assert.throws(() => verpAddress('em x', 'h.test', secret), /VERP id/);
  assert.throws(() => verpAddress('a.b', 'h.test', secret), /VERP id/);
  assert.throws(() => verpAddress('em_1', '', secret), /host/);
});
