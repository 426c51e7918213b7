import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { hmacSha256, subkey } from '../../src/platform/hmac.ts';

test('hmacSha256 equals createHmac for Buffer and string keys, on every call', () => {
  const secret = randomBytes(32);
  for (const data of ['a', 'é€ and more', '']) {
    const expected = createHmac('sha256', secret).update(data).digest();
    assert.deepEqual(hmacSha256(secret, data), expected);
    assert.deepEqual(hmacSha256(secret, data), expected);
  }
  const bytes = new Uint8Array(secret); // how a Buffer arrives in a worker thread
  assert.deepEqual(hmacSha256(bytes, 'a'), createHmac('sha256', secret).update('a').digest());
  const text = 'whsec_0123456789abcdef€';
  assert.deepEqual(hmacSha256(text, 'body'), createHmac('sha256', text).update('body').digest());
  assert.notDeepEqual(hmacSha256(randomBytes(32), 'a'), hmacSha256(secret, 'a'));
});

test('subkey is HMAC(secret, label), used as a key; labels and secrets give different keys', () => {
  const secret = randomBytes(32);
  const derived = createHmac('sha256', secret).update('label one').digest();
  assert.deepEqual(hmacSha256(subkey(secret, 'label one'), 'x'), createHmac('sha256', derived).update('x').digest());
  assert.notDeepEqual(hmacSha256(subkey(secret, 'label two'), 'x'), hmacSha256(subkey(secret, 'label one'), 'x'));
  assert.notDeepEqual(hmacSha256(subkey(randomBytes(32), 'label one'), 'x'), hmacSha256(subkey(secret, 'label one'), 'x'));
});
