import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAddressField, isEmailAddress, formatAddress } from '../../src/resources/emails/addresses.ts';

test('address fields: strings, arrays, comma lists, display names with commas', () => {
  const { addresses, invalid } = parseAddressField(['"Doe, John" <John@Example.ORG>', 'a@b.co, c@d.io']);
  assert.deepEqual(invalid, []);
  assert.deepEqual(addresses, [
    { address: 'John@example.org', name: 'Doe, John' },
    { address: 'a@b.co', name: '' },
    { address: 'c@d.io', name: '' },
  ]);
  assert.equal(formatAddress(addresses[0]), 'Doe, John <John@example.org>');
});

test('invalid entries are reported as written', () => {
  assert.deepEqual(parseAddressField('not-an-address').invalid, ['not-an-address']);
  assert.deepEqual(parseAddressField('Jane <jane@>').invalid, ['Jane <jane@>']);
  assert.deepEqual(parseAddressField([42]).invalid, ['42']);
  assert.deepEqual(parseAddressField('').addresses, []);
});

test('isEmailAddress', () => {
  for (const ok of ['a@b.co', 'first.last+tag@sub.example.org', "o'brien@example.ie"]) assert.ok(isEmailAddress(ok), ok);
  for (const bad of ['a@b', 'a b@c.de', '@c.de', 'a@-c.de', 'a@c..de', `${'x'.repeat(250)}@c.de`]) assert.ok(!isEmailAddress(bad), bad);
});
