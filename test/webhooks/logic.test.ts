// Pure delivery rules: filters (every operator with its typing, paths, match), the retry schedule
// of https://emailit.com/docs/webhooks/retries-and-failures.md, disabling, the signature, and the
// batch item shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FilterError, matchesFilter, normalizeFilter, ruleMatches, valuesAt, type FilterRule } from '../../src/platform/event-filter.ts';
import {
  batchBody,
  batchItem,
  DISABLE_AFTER_MS,
  deliveryHeaders,
  failureBackoffMs,
  isSuccessStatus,
  MAX_ATTEMPTS,
  newWebhookSecret,
  offsetOfAttemptMs,
  retryDelayMs,
  shouldDisable,
  signPayload,
} from '../../src/resources/webhooks/policy.ts';
import { subscribesTo } from '../../src/resources/webhooks/queue.ts';
import { verifyLikeSdk, SignatureRejected } from './sdk-verifier.ts';

const email = {
  id: 'em_1',
  object: 'email',
  from: 'Acme <hello@acme.com>',
  to: 'Jane@Example.com',
  subject: 'Your order #42',
  status: 'delivered',
  meta: { plan: 'pro', tier: 3, vip: 'true', score: '7' },
  audiences: [
    { id: 'aud_a', subscriber: { subscribed: true } },
    { id: 'aud_b', subscriber: { subscribed: false } },
  ],
  tags: ['welcome', 'Onboarding'],
  empty: null,
};
const rule = (field: string, operator: FilterRule['operator'], value?: unknown): FilterRule => ({ field, operator, value });
const check = (r: FilterRule) => ruleMatches(r, email);

test('paths: dotted, leading payload. ignored, through arrays, by index', () => {
  assert.deepEqual(valuesAt(email, 'meta.plan'), ['pro']);
  assert.deepEqual(valuesAt(email, 'payload.meta.plan'), ['pro']);
  assert.deepEqual(valuesAt(email, 'audiences.id'), ['aud_a', 'aud_b']);
  assert.deepEqual(valuesAt(email, 'audiences.1.id'), ['aud_b']);
  assert.deepEqual(valuesAt(email, 'audiences.subscriber.subscribed'), [true, false]);
  assert.deepEqual(valuesAt(email, 'tags'), ['welcome', 'Onboarding']);
  assert.deepEqual(valuesAt(email, 'meta.nothing.deeper'), []);
  assert.deepEqual(valuesAt(email, 'to.length'), []);
  assert.deepEqual(valuesAt({ email: { campaign: { id: 'cmp_1' } } }, 'email.campaign.id'), ['cmp_1']);
});

test('equals / not_equals: scalars, strings case-insensitive, meta strings against numbers and booleans', () => {
  assert.equal(check(rule('status', 'equals', 'delivered')), true);
  assert.equal(check(rule('to', 'equals', 'jane@example.com')), true);
  assert.equal(check(rule('status', 'equals', 'bounced')), false);
  assert.equal(check(rule('meta.tier', 'equals', 3)), true);
  assert.equal(check(rule('meta.vip', 'equals', true)), true);
  assert.equal(check(rule('meta.score', 'equals', 7)), true);
  assert.equal(check(rule('meta.tier', 'equals', '3')), true);
  assert.equal(check(rule('tags', 'equals', 'onboarding')), true, 'any element of an array');
  assert.equal(check(rule('empty', 'equals', null)), true);
  assert.equal(check(rule('status', 'not_equals', 'bounced')), true);
  assert.equal(check(rule('status', 'not_equals', 'DELIVERED')), false);
  assert.equal(check(rule('missing', 'not_equals', 'x')), true, 'negative rules match unset fields');
});

test('text operators compare strings only', () => {
  assert.equal(check(rule('subject', 'contains', 'ORDER')), true);
  assert.equal(check(rule('subject', 'contains', 'invoice')), false);
  assert.equal(check(rule('subject', 'not_contains', 'invoice')), true);
  assert.equal(check(rule('subject', 'not_contains', 'order')), false);
  assert.equal(check(rule('to', 'starts_with', 'jane@')), true);
  assert.equal(check(rule('to', 'ends_with', '@EXAMPLE.com')), true);
  assert.equal(check(rule('to', 'ends_with', '@acme.com')), false);
  assert.equal(check(rule('meta.tier', 'contains', '3')), false, 'a number is not text');
  assert.equal(check(rule('meta.tier', 'not_contains', '3')), true);
  assert.equal(check(rule('tags', 'starts_with', 'onb')), true);
});

test('greater_than / less_than compare numbers only', () => {
  assert.equal(check(rule('meta.tier', 'greater_than', 2)), true);
  assert.equal(check(rule('meta.tier', 'greater_than', 3)), false);
  assert.equal(check(rule('meta.tier', 'less_than', 3.5)), true);
  assert.equal(check(rule('meta.tier', 'less_than', 3)), false);
  assert.equal(check(rule('meta.score', 'greater_than', 1)), false, 'a numeric string is not a number');
  assert.equal(check(rule('missing', 'less_than', 100)), false);
});

test('in / not_in take a list', () => {
  assert.equal(check(rule('status', 'in', ['bounced', 'Delivered'])), true);
  assert.equal(check(rule('status', 'in', ['bounced', 'failed'])), false);
  assert.equal(check(rule('status', 'not_in', ['bounced', 'failed'])), true);
  assert.equal(check(rule('status', 'not_in', ['delivered'])), false);
  assert.equal(check(rule('meta.tier', 'in', [1, 2, 3])), true);
  assert.equal(check(rule('audiences.id', 'in', ['aud_b', 'aud_z'])), true);
  assert.equal(check(rule('audiences.id', 'not_in', ['aud_b'])), false);
  assert.equal(check(rule('missing', 'not_in', ['x'])), true);
});

test('is_set / is_not_set', () => {
  assert.equal(check(rule('meta.plan', 'is_set')), true);
  assert.equal(check(rule('meta.nothing', 'is_set')), false);
  assert.equal(check(rule('empty', 'is_set')), false, 'null is not set');
  assert.equal(check(rule('empty', 'is_not_set')), true);
  assert.equal(check(rule('payload.subject', 'is_not_set')), false);
});

test('match all (default) and any; no rules match everything', () => {
  const yes = rule('status', 'equals', 'delivered');
  const no = rule('status', 'equals', 'bounced');
  assert.equal(matchesFilter({ match: 'all', rules: [yes, yes] }, email), true);
  assert.equal(matchesFilter({ match: 'all', rules: [yes, no] }, email), false);
  assert.equal(matchesFilter({ match: 'any', rules: [no, yes] }, email), true);
  assert.equal(matchesFilter({ match: 'any', rules: [no, no] }, email), false);
  assert.equal(matchesFilter({ match: 'all', rules: [] }, email), true);
  assert.deepEqual(normalizeFilter({ rules: [{ field: ' to ', operator: 'is_set', value: 'ignored' }] }), {
    match: 'all',
    rules: [{ field: 'to', operator: 'is_set' }],
  });
  assert.throws(() => normalizeFilter({ match: 'or', rules: [] }), FilterError);
});

test('subscriptions: listed types, all_events (system types only), w:* and c:* wildcards', () => {
  const all = { allEvents: true, events: new Set<string>() };
  assert.equal(subscribesTo(all, 'email.delivered'), true);
  assert.equal(subscribesTo(all, 'future.type'), true, 'all_events includes future types');
  assert.equal(subscribesTo(all, 'cart.updated'), false);
  assert.equal(subscribesTo(all, 'c:order.completed'), false);
  const listed = { allEvents: false, events: new Set(['email.bounced', 'c:*', 'w:signup']) };
  assert.equal(subscribesTo(listed, 'email.bounced'), true);
  assert.equal(subscribesTo(listed, 'email.delivered'), false);
  assert.equal(subscribesTo(listed, 'c:order.completed'), true);
  assert.equal(subscribesTo(listed, 'w:signup'), true);
  assert.equal(subscribesTo(listed, 'w:other'), false);
});

test('retry schedule: 11 attempts at 0, 5 min, 35 min, 2 h 35, 7 h 35, then every 12 h', () => {
  const minutes = (n: number) => n * 60_000;
  const hours = (n: number) => n * 3_600_000;
  assert.equal(MAX_ATTEMPTS, 11);
  assert.deepEqual(
    Array.from({ length: 11 }, (_, i) => retryDelayMs(i + 1)),
    [minutes(5), minutes(30), hours(2), hours(5), hours(12), hours(12), hours(12), hours(12), hours(12), hours(12), null],
  );
  assert.equal(retryDelayMs(0), null);
  assert.deepEqual([1, 2, 3, 4, 5, 6, 11].map(offsetOfAttemptMs), [
    0,
    minutes(5),
    minutes(35),
    hours(2) + minutes(35),
    hours(7) + minutes(35),
    hours(19) + minutes(35),
    hours(79) + minutes(35),
  ]);
  // Attempt 11 comes 3 d 7 h 35 min after the first: past the 3-day disabling rule.
  assert.ok(offsetOfAttemptMs(11) > DISABLE_AFTER_MS && offsetOfAttemptMs(10) < DISABLE_AFTER_MS);
});

test('disabling after 3 days without success; pause before new batches after failures', () => {
  const start = Date.UTC(2026, 0, 1);
  assert.equal(shouldDisable(null, start + DISABLE_AFTER_MS * 2), false);
  assert.equal(shouldDisable(start, start + DISABLE_AFTER_MS - 1), false);
  assert.equal(shouldDisable(start, start + DISABLE_AFTER_MS), true);
  assert.deepEqual([1, 2, 3, 6, 7, 20].map(failureBackoffMs), [1000, 2000, 4000, 32_000, 60_000, 60_000]);
  assert.deepEqual([199, 200, 204, 299, 300, 302, 404, 500].map(isSuccessStatus), [false, true, true, true, false, false, false, false]);
});

test('signature: hex HMAC-SHA256 of "{timestamp}.{body}" with the whole secret, accepted by the SDK check', () => {
  const secret = newWebhookSecret();
  assert.match(secret, /^whsec_[0-9a-f]{64}$/);
  const body = batchBody([batchItem('evt_1', 'email.delivered', JSON.stringify({ id: 'em_1', object: 'email' }))]);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = deliveryHeaders(secret, body, timestamp);
  assert.deepEqual(Object.keys(headers).sort(), ['content-type', 'user-agent', 'x-emailit-signature', 'x-emailit-timestamp']);
  assert.equal(headers['user-agent'], 'Emailit-Webhooks/2.0');
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(headers['x-emailit-timestamp'], String(timestamp));
  assert.match(headers['x-emailit-signature'], /^[0-9a-f]{64}$/);
  // Known answer computed with openssl (independent of Node's crypto):
  // printf '1700000000.[{"a":1}]' | openssl dgst -sha256 -hmac 'whsec_0123…cdef'
  const fixedSecret = `whsec_${'0123456789abcdef'.repeat(4)}`;
  assert.equal(signPayload(fixedSecret, 1700000000, '[{"a":1}]'), '428a2234dc61a7d2b1db4339eb4c06f75406df5e8be393ac97155e9d745cb0fe');
  assert.deepEqual(verifyLikeSdk(body, headers['x-emailit-signature'], headers['x-emailit-timestamp'], secret), JSON.parse(body));
  assert.throws(
    () => verifyLikeSdk(body, headers['x-emailit-signature'], headers['x-emailit-timestamp'], newWebhookSecret()),
    SignatureRejected,
  );
  assert.throws(() => verifyLikeSdk(body + ' ', headers['x-emailit-signature'], headers['x-emailit-timestamp'], secret), SignatureRejected);
  assert.throws(
    () => verifyLikeSdk(body, signPayload(secret.slice(6), timestamp, body), String(timestamp), secret),
    SignatureRejected,
    'the key includes the whsec_ prefix',
  );
  assert.throws(
    () => verifyLikeSdk(body, headers['x-emailit-signature'], headers['x-emailit-timestamp'], secret, 300, (timestamp + 301) * 1000),
    SignatureRejected,
  );
});

test('batch items: compact JSON, object and data.object the same resource', () => {
  const object = { id: 'em_1', object: 'email', meta: { a: [1, 2] } };
  const body = batchBody([
    batchItem('evt_1', 'email.accepted', JSON.stringify(object)),
    batchItem('evt_2', 'email.delivered', JSON.stringify(object)),
  ]);
  const parsed = JSON.parse(body);
  assert.equal(body, JSON.stringify(parsed), 'no extra whitespace');
  assert.deepEqual(parsed, [
    { event_id: 'evt_1', type: 'email.accepted', object, data: { object } },
    { event_id: 'evt_2', type: 'email.delivered', object, data: { object } },
  ]);
});
