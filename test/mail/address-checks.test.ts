// The offline checks of email verification, the score/result/risk rules, and the reading of
// RCPT replies: pure functions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { didYouMean, isDisposableDomain, isFreeProvider, isGibberish, isRoleMailbox, parseAddress } from '../../src/mail/address-checks.ts';
import { verificationResult, verificationRisk, verificationScore, type VerificationChecks } from '../../src/mail/verification-score.ts';
import { classifyRcptReply, ConnectionLimiter } from '../../src/mail/mailbox-probe.ts';

test('parseAddress: valid addresses in parts, with a +suffix; invalid ones are null', () => {
  assert.deepEqual(parseAddress('Jane.Doe+News@Example.COM'), {
    mailbox: 'jane.doe',
    domain: 'example.com',
    suffix: 'news',
    root: 'jane.doe@example.com',
  });
  assert.deepEqual(parseAddress('jane@mail.example.co.uk'), {
    mailbox: 'jane',
    domain: 'mail.example.co.uk',
    suffix: null,
    root: 'jane@mail.example.co.uk',
  });
  assert.deepEqual(parseAddress("o'brien@example.org")?.mailbox, "o'brien");
  assert.deepEqual(parseAddress('jöns@exämple.de')?.domain, 'exämple.de');
  for (const bad of [
    '',
    'jane',
    '@example.com',
    'jane@',
    'jane@example',
    'jane..doe@example.com',
    '.jane@example.com',
    'jane.@example.com',
    'ja ne@example.com',
    'jane@exa_mple.com',
    'jane@-example.com',
    'jane@example.123',
    `${'a'.repeat(65)}@example.com`,
    `jane@${'a'.repeat(64)}.com`,
    '"jane"@example.com',
    'jane@@example.com',
  ]) {
    assert.equal(parseAddress(bad), null, bad);
  }
});

test('lists: disposable domains (and their subdomains), role mailboxes, free providers', () => {
  assert.equal(isDisposableDomain('mailinator.com'), true);
  assert.equal(isDisposableDomain('eu.mailinator.com'), true);
  assert.equal(isDisposableDomain('10minutemail.com'), true);
  assert.equal(isDisposableDomain('gmail.com'), false);
  assert.equal(isDisposableDomain('acme.test'), false);
  for (const role of ['info', 'support', 'sales', 'admin', 'postmaster', 'noreply']) assert.equal(isRoleMailbox(role), true, role);
  for (const person of ['jane', 'john.smith', 'mike', 'anna']) assert.equal(isRoleMailbox(person), false, person);
  for (const free of ['gmail.com', 'yahoo.com', 'hotmail.com', 'gmx.de', 'outlook.com']) assert.equal(isFreeProvider(free), true, free);
  assert.equal(isFreeProvider('acme.test'), false);
});

test('gibberish: random and keyboard-typed mailboxes, not short or foreign names', () => {
  for (const name of [
    'jane',
    'mike',
    'jo',
    'nguyen',
    'maria.garcia',
    'zhang.wei',
    'schwarzenegger',
    'hirschmann',
    'user123',
    'john1990',
    'j.smith',
    'liberty',
  ]) {
    assert.equal(isGibberish(name), false, name);
  }
  for (const name of ['xkqzvbwpt', 'asdfghjkl', 'qwrtpsdf', 'a1b2c3d4e5', 'k8s9x7q2', 'qwerty.jane', 'zxcvb', 'bcdfgh.jane']) {
    assert.equal(isGibberish(name), true, name);
  }
});

test('didYouMean: misspelt big providers only', () => {
  const suggest = (email: string) => didYouMean(parseAddress(email)!, email);
  assert.equal(suggest('jane@gmial.com'), 'jane@gmail.com');
  assert.equal(suggest('jane@gmail.con'), 'jane@gmail.com');
  assert.equal(suggest('jane@hotnail.com'), 'jane@hotmail.com');
  assert.equal(suggest('jane@outlok.com'), 'jane@outlook.com');
  assert.equal(suggest('jane+x@yahooo.com'), 'jane+x@yahoo.com');
  for (const fine of ['jane@gmail.com', 'jane@gmx.at', 'jane@acme.test', 'jane@example.org', 'jane@mail.ru'])
    assert.equal(suggest(fine), null, fine);
});

const GOOD: VerificationChecks = {
  valid_syntax: true,
  disposable: false,
  role_account: false,
  free_email: false,
  gibberish: false,
  has_mx_records: true,
  domain_age: 4000,
  smtp_connect: null,
  deliverable: null,
  inbox_full: null,
  disabled: null,
  catch_all: null,
};
const FULL_OK = { ...GOOD, smtp_connect: true, deliverable: true, inbox_full: false, disabled: false, catch_all: false };

test('score, result and risk: the documented order of results; deductions add up', () => {
  const rate = (checks: VerificationChecks, mode: 'fast' | 'full') => {
    const score = verificationScore(checks, mode);
    const result = verificationResult(checks, score);
    return [score, result, verificationRisk(result, score)];
  };
  assert.deepEqual(rate(GOOD, 'fast'), [100, 'safe', 'low']);
  assert.deepEqual(rate(FULL_OK, 'full'), [100, 'safe', 'low']);
  assert.deepEqual(rate({ ...GOOD, valid_syntax: false }, 'fast'), [0, 'invalid', 'high']);
  assert.deepEqual(rate({ ...GOOD, has_mx_records: false }, 'fast'), [0, 'invalid', 'high']);
  // invalid comes before disposable, disposable before disabled, and so on down the table.
  assert.deepEqual(rate({ ...GOOD, has_mx_records: false, disposable: true }, 'fast'), [0, 'invalid', 'high']);
  assert.deepEqual(rate({ ...FULL_OK, disposable: true, deliverable: false, disabled: true }, 'full'), [0, 'disposable', 'high']);
  assert.deepEqual(rate({ ...FULL_OK, deliverable: false, disabled: true, role_account: true }, 'full'), [0, 'disabled', 'high']);
  assert.deepEqual(rate({ ...FULL_OK, deliverable: false, inbox_full: true, role_account: true }, 'full'), [30, 'inbox_full', 'high']);
  assert.deepEqual(rate({ ...FULL_OK, deliverable: false, inbox_full: true }, 'full'), [50, 'inbox_full', 'medium']);
  assert.deepEqual(rate({ ...GOOD, role_account: true }, 'fast'), [80, 'role', 'medium']);
  assert.deepEqual(rate({ ...GOOD, free_email: true }, 'fast'), [90, 'safe', 'low']);
  assert.deepEqual(rate({ ...GOOD, free_email: true, gibberish: true }, 'fast'), [65, 'unknown', 'medium']);
  assert.deepEqual(rate({ ...GOOD, domain_age: 3 }, 'fast'), [80, 'safe', 'low']);
  assert.deepEqual(rate({ ...GOOD, domain_age: null }, 'fast'), [100, 'safe', 'low']);
  assert.deepEqual(rate({ ...FULL_OK, catch_all: true }, 'full'), [65, 'unknown', 'medium']);
  assert.deepEqual(rate({ ...FULL_OK, deliverable: false }, 'full'), [0, 'unknown', 'high']);
  assert.deepEqual(rate({ ...GOOD, smtp_connect: true }, 'full'), [65, 'unknown', 'medium']);
  assert.deepEqual(rate({ ...GOOD, has_mx_records: null }, 'full'), [65, 'unknown', 'medium']);
  // Mailbox checks do not count in fast mode (they are null there anyway).
  assert.equal(verificationScore({ ...GOOD, deliverable: false }, 'fast'), 100);
  assert.equal(
    verificationScore({ ...GOOD, disposable: true, role_account: true, free_email: true, gibberish: true, domain_age: 1 }, 'fast'),
    0,
  );
});

test('classifyRcptReply: what real servers answer at RCPT', () => {
  const cases: Array<[number, string, string]> = [
    [250, '2.1.5 Ok', 'accepted'],
    [251, 'User not local; will forward', 'accepted'],
    [550, '5.1.1 <x@y>: Recipient address rejected: User unknown in virtual mailbox table', 'rejected'],
    [550, '5.1.1 The email account that you tried to reach does not exist.', 'rejected'],
    [550, 'Requested action not taken: mailbox unavailable', 'rejected'],
    [550, '', 'rejected'],
    [553, "sorry, that domain isn't in my list of allowed rcpthosts", 'rejected'],
    [550, '5.2.1 The email account that you tried to reach is disabled.', 'disabled'],
    [452, '4.2.2 The email account that you tried to reach is over quota.', 'inbox_full'],
    [552, '5.2.2 Mailbox full', 'inbox_full'],
    [451, '4.7.1 Greylisted, please try again later', 'greylisted'],
    [450, '4.2.0 <x@y>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/', 'greylisted'],
    [451, '4.3.0 Temporary lookup failure', 'temporary'],
    [421, '4.7.0 Too many connections', 'temporary'],
    [554, '5.7.1 Service unavailable; client host blocked using zen.spamhaus.org', 'blocked'],
    [554, '5.7.1 <x@y>: Relay access denied', 'blocked'],
    [550, '5.7.1 Message rejected due to local policy', 'blocked'],
  ];
  for (const [code, text, outcome] of cases) assert.equal(classifyRcptReply(code, text), outcome, `${code} ${text}`);
});

test('ConnectionLimiter: at most perKey holders per key, the rest wait their turn; keys are independent', async () => {
  const limiter = new ConnectionLimiter(2);
  const order: string[] = [];
  const a1 = await limiter.acquire('a');
  const a2 = await limiter.acquire('a');
  const b1 = await limiter.acquire('b');
  const waiting = limiter.acquire('a').then((release) => (order.push('a3'), release));
  await new Promise((r) => setImmediate(r));
  assert.equal(order.length, 0, 'the third holder waits');
  a1();
  a1(); // a second release of the same slot changes nothing
  const a3 = await waiting;
  assert.deepEqual(order, ['a3']);
  const fourth = limiter.acquire('a').then((release) => (order.push('a4'), release));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['a3']);
  a2();
  (await fourth)();
  a3();
  b1();
  // All released: two fresh holders at once again.
  const [x, y] = await Promise.all([limiter.acquire('a'), limiter.acquire('a')]);
  x();
  y();
});
