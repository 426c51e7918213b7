// The in-process sliding-window limiter: its counts, and its memory bound under a flood of keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlidingWindowLimiter } from '../../../src/platform/http/rate-limit.ts';

test('a key is refused past its limit within the window, with the seconds until a slot frees', () => {
  const limiter = new SlidingWindowLimiter(2, 60_000);
  assert.equal(limiter.hit('a', 0).allowed, true);
  assert.equal(limiter.hit('a', 1_000).remaining, 0);
  const refused = limiter.hit('a', 2_000);
  assert.deepEqual(refused, { allowed: false, limit: 2, remaining: 0, retryAfter: 58 });
  assert.equal(limiter.hit('a', 60_001).allowed, true, 'the first hit left the window');
});

test('a flood of distinct fresh keys keeps the limiter within its bound, and a refused key stays refused', () => {
  const limiter = new SlidingWindowLimiter(3, 60_000, 1_000);
  for (let i = 0; i < 3; i++) limiter.hit('attacker', i);
  assert.equal(limiter.hit('attacker', 10).allowed, false);
  // Fresh keys inside the window: none expired, so pruning by age alone would keep them all.
  for (let i = 0; i < 50_000; i++) limiter.hit(`ip-${i}`, 100 + (i % 1000));
  assert.ok(limiter.size <= 1_000, `kept ${limiter.size} keys`);
  assert.equal(limiter.hit('attacker', 2_000).allowed, false, 'the flood did not reset the refused key');
});
