// The sign-in guard's memory stays bounded under a flood of new keys (addresses, typed
// accounts), without washing out the counts that lock something; IPv6 clients count by /64.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import {
  EventWindow,
  MAX_TRACKED_KEYS,
  SIGN_IN_PER_ACCOUNT,
  SIGN_IN_PER_IP,
  SIGN_IN_WINDOW_MS,
  SignInGuard,
  SignInRefused,
  clientNetwork,
} from '../../src/resources/users/sign-in-guard.ts';

test('a flood of new keys keeps the window within its cap, and the counts at their limit survive it', () => {
  const window = new EventWindow({ windowMs: 60_000, keep: 8, maxKeys: 1000, protectAt: 8 });
  const now = Date.now();
  for (let i = 0; i < 8; i++) window.record('locked', now);
  for (let i = 0; i < 50_000; i++) window.record(`flood-${i}`, now + 1);
  assert.ok(window.size <= 1000, `${window.size} keys kept`);
  assert.equal(window.count('locked', now + 2), 8, 'the locked key was not evicted by the flood');
  // Each key keeps only its last `keep` times.
  for (let i = 0; i < 100; i++) window.record('busy', now + 3);
  assert.equal(window.count('busy', now + 3), 8);
  // And everything goes once the window has passed.
  assert.equal(window.count('locked', now + 60_001), 0);
});

test("the guard's counts stay bounded when every attempt comes from a new address for a new account", async () => {
  const guard = new SignInGuard(randomBytes(32));
  const now = Date.now();
  for (let i = 0; i < MAX_TRACKED_KEYS * 3; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    await guard.admit({ ip, email: `user${i}@example.org`, userId: null, device: null }, now); // a failure until it succeeds
  }
  assert.ok(guard.byNetwork.size <= MAX_TRACKED_KEYS, `${guard.byNetwork.size} addresses kept`);
  assert.ok(guard.untrustedFailures.size <= MAX_TRACKED_KEYS, `${guard.untrustedFailures.size} accounts kept`);
});

test('IPv6 clients count by /64; IPv4-mapped addresses count as their IPv4 address', async () => {
  assert.equal(clientNetwork('2001:db8:1:2:aaaa::1'), clientNetwork('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
  assert.notEqual(clientNetwork('2001:db8:1:2::1'), clientNetwork('2001:db8:1:3::1'));
  assert.equal(clientNetwork('::ffff:192.0.2.7'), '192.0.2.7');
  const guard = new SignInGuard(randomBytes(32));
  const now = Date.now();
  for (let i = 0; i < SIGN_IN_PER_IP; i++)
    await guard.admit({ ip: `2001:db8:1:2::${(i + 1).toString(16)}`, email: `a${i}@example.org`, userId: null, device: null }, now);
  await assert.rejects(
    guard.admit({ ip: '2001:db8:1:2:ffff::9', email: 'b@example.org', userId: null, device: null }, now),
    (error: SignInRefused) => error.body.error === 'too_many_attempts',
  );
  await guard.admit({ ip: '2001:db8:1:3::1', email: 'b@example.org', userId: null, device: null }, now);
  // The window passes: the network may try again.
  await guard.admit({ ip: '2001:db8:1:2::1', email: 'c@example.org', userId: null, device: null }, now + SIGN_IN_WINDOW_MS + 1);
});

test('the work a challenge takes grows as failures go on', async () => {
  const guard = new SignInGuard(randomBytes(32));
  const now = Date.now();
  const attempt = (n: number) => guard.admit({ ip: `203.0.113.${n}`, email: 'hard@example.org', userId: null, device: null }, now);
  const challenge = async (n: number) => {
    try {
      await attempt(n);
    } catch (error) {
      if (error instanceof SignInRefused && error.body.challenge) return error.body.challenge;
      throw error;
    }
    throw new Error('no challenge asked');
  };
  const { account } = await attempt(1);
  for (let i = 1; i < SIGN_IN_PER_ACCOUNT; i++) guard.untrustedFailures.record(account, now);
  const first = await solveChallenge({ challenge: (await challenge(2)) as never, deriveKey });
  for (let i = 0; i < SIGN_IN_PER_ACCOUNT * 2; i++) guard.untrustedFailures.record(account, now);
  const later = await solveChallenge({ challenge: (await challenge(3)) as never, deriveKey });
  assert.ok(first && later);
  // The counter found is the number of hashes it took: 5,000 to 20,000 at first, 4 times that after 16 more failures.
  assert.ok(first.counter >= 5_000 && first.counter < 20_000, `first: ${first.counter}`);
  assert.ok(later.counter >= 20_000 && later.counter < 80_000, `later: ${later.counter}`);
});
