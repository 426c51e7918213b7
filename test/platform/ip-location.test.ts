// Offline IP-to-country and IP-to-network lookups over the ip-location-db packages' ranges:
// IPv4, IPv6, IPv4-mapped IPv6, range edges and gaps, and addresses that are in no range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countryOf, networkOf } from '../../src/platform/ip-location.ts';

const GOOGLE = { asn: 15169, organization: 'Google LLC' };
const RIPE = { asn: 3333, organization: 'Reseaux IP Europeens Network Coordination Centre (RIPE NCC)' };

test('IPv4: country and network of well-known public addresses', () => {
  assert.equal(countryOf('8.8.8.8'), 'US');
  assert.deepEqual(networkOf('8.8.8.8'), GOOGLE);
  assert.equal(countryOf('193.0.6.139'), 'NL');
  assert.deepEqual(networkOf('193.0.6.139'), RIPE);
  assert.deepEqual(networkOf('9.9.9.9'), { asn: 19281, organization: 'Quad9' });
  assert.deepEqual(networkOf(' 8.8.4.4 '), GOOGLE, 'surrounding spaces are ignored');
});

test('IPv6 and IPv4-mapped IPv6', () => {
  assert.equal(countryOf('2001:4860:4860::8888'), 'US');
  assert.deepEqual(networkOf('2001:4860:4860::8888'), GOOGLE);
  assert.deepEqual(networkOf('2001:4860:4860:0:0:0:0:8844'), GOOGLE, 'uncompressed');
  assert.equal(countryOf('2001:67c:2e8:22::c100:68b'), 'NL');
  assert.deepEqual(networkOf('2001:67C:2E8:22::C100:68B'), RIPE, 'upper case');
  assert.equal(countryOf('::ffff:8.8.8.8'), 'US');
  assert.deepEqual(networkOf('::ffff:193.0.6.139'), RIPE);
});

test('range edges: the first and last address of a range, and the gap after it', () => {
  // The first IPv4 range of the network data: 1.0.0.0-1.0.0.255, Cloudflare; 1.0.1.0 is in none.
  assert.equal(networkOf('1.0.0.0')?.asn, 13335);
  assert.equal(networkOf('1.0.0.255')?.asn, 13335);
  assert.equal(networkOf('1.0.1.0'), null);
  assert.equal(networkOf('0.255.255.255'), null, 'before the first range');
  assert.equal(networkOf('255.255.255.255'), null, 'after the last range');
  assert.equal(networkOf('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), null);
});

test('private, reserved and documentation addresses, and what is no address, are in no range', () => {
  for (const ip of [
    '10.1.2.3',
    '127.0.0.1',
    '192.168.1.1',
    '192.0.2.99',
    '::1',
    'fd00::1',
    '2001:db8::1',
    '',
    'not-an-ip',
    '8.8.8',
    '1::2::3',
  ]) {
    assert.equal(countryOf(ip), null, ip);
    assert.equal(networkOf(ip), null, ip);
  }
});
