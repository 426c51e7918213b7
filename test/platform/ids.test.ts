import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId, randomAlphanumeric, looksLikeId } from '../../src/platform/ids.ts';

test('ids are a prefix and 27 time-ordered base62 characters', async () => {
  const a = newId('key');
  assert.match(a, /^key_[A-Za-z0-9]{27}$/);
  assert.ok(looksLikeId(a, 'key'));
  assert.ok(!looksLikeId(a, 'dom'));
  assert.ok(!looksLikeId('key_short', 'key'));
  await new Promise((r) => setTimeout(r, 1100));
  const b = newId('key');
  assert.ok(b > a, 'a later id sorts after an earlier one');
});

test('randomAlphanumeric gives the length asked for, from the whole alphabet, evenly', () => {
  for (const n of [1, 32, 100]) assert.match(randomAlphanumeric(n), new RegExp(`^[A-Za-z0-9]{${n}}$`));
  const counts = new Map<string, number>();
  const sample = randomAlphanumeric(62 * 2000);
  for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  for (const [c, count] of counts) assert.ok(count > 1500 && count < 2500, `${c}: ${count}`);
});
