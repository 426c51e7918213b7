// The three forms of a tracking key's allowed origins and how a request's Origin meets them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeAllowedOrigin, originAllowed } from '../../src/resources/tracking-keys/origins.ts';

test('entries: an origin, a host or a wildcard; anything else is refused', () => {
  assert.equal(normalizeAllowedOrigin('https://Shop.Example.com'), 'https://shop.example.com');
  assert.equal(normalizeAllowedOrigin('https://shop.example.com/'), 'https://shop.example.com');
  assert.equal(normalizeAllowedOrigin('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
  assert.equal(normalizeAllowedOrigin('shop.example.com'), 'shop.example.com');
  assert.equal(normalizeAllowedOrigin('*.example.com'), '*.example.com');
  for (const bad of [
    'https://shop.example.com/path',
    'ftp://shop.example.com',
    '*.com',
    '*',
    'https://user:pw@x.com',
    'shop example',
    'https://x.com?q=1',
  ]) {
    assert.equal(normalizeAllowedOrigin(bad), null, bad);
  }
});

test('matching: exact origins, hosts on any scheme and port, wildcards with their domain; none: any site', () => {
  assert.ok(originAllowed([], undefined));
  assert.ok(originAllowed(['https://shop.example.com'], 'https://shop.example.com'));
  assert.ok(!originAllowed(['https://shop.example.com'], 'http://shop.example.com'));
  assert.ok(!originAllowed(['https://shop.example.com'], 'https://shop.example.com:8443'));
  assert.ok(originAllowed(['shop.example.com'], 'http://shop.example.com:8080'));
  assert.ok(originAllowed(['*.example.com'], 'https://example.com'));
  assert.ok(originAllowed(['*.example.com'], 'https://a.b.example.com'));
  assert.ok(!originAllowed(['*.example.com'], 'https://badexample.com'));
  assert.ok(!originAllowed(['shop.example.com'], undefined), 'no Origin header: refused when the key lists sites');
  assert.ok(!originAllowed(['shop.example.com'], 'null'));
});
