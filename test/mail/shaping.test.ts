// Traffic shaping per destination against loopback receivers that behave like real ones: one
// that throttles with 421 above a rate (the pace falls to what it accepts, then recovers step
// by step), one that answers a reputation block (the destination is slowed and paused), the
// provider table, operator overrides and transactional-before-bulk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composeMessage } from '../../src/mail/compose.ts';
import { SmtpDelivery } from '../../src/mail/smtp-delivery.ts';
import { destinationOf, parseShapingOverrides, TrafficShaper } from '../../src/mail/shaping.ts';
import { HOLD, Pace } from '../../src/mail/shaping-pace.ts';
import { createResolver } from '../../src/platform/dns.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

async function setup(t: import('node:test').TestContext, sinkOptions: Parameters<typeof startSmtpSink>[0], shaper: TrafficShaper) {
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ rules: [], keepMessages: false, ...sinkOptions });
  const resolver = createResolver([dns.address], { timeoutMs: 300, tries: 1 });
  dns.set('rcpt.test', 'MX', [{ exchange: 'mx.rcpt.test', priority: 10 }]);
  dns.set('mx.rcpt.test', 'A', [sink.host]);
  const delivery = new SmtpDelivery({
    resolver,
    heloName: 'mta.postlane.test',
    mxPort: sink.port,
    connectionTimeoutMs: 5000,
    greetingTimeoutMs: 5000,
    socketTimeoutMs: 5000,
    shaper,
    throttleRetries: 20,
  });
  t.after(async () => {
    shaper.close();
    await delivery.close();
    await sink.close();
    await dns.close();
  });
  return { sink, delivery };
}

const raw = () =>
  composeMessage({
    from: 'Acme <news@acme.test>',
    to: ['bob@rcpt.test'],
    subject: 'Hello',
    text: 'Hi',
    messageId: `${Math.random()}@acme.test`,
  });

/** Messages per second the sink accepted between two instants. */
function rateSeen(acceptedAt: number[], from: number, to: number): number {
  return acceptedAt.filter((at) => at >= from && at < to).length / ((to - from) / 1000);
}

test('a receiver throttling with 421 above 20/s: nothing fails, the pace falls to its limit, then recovers step by step', async (t) => {
  const shaper = new TrafficShaper({ recoveryStepMs: 300 });
  const { sink, delivery } = await setup(t, { throttle: { perSecond: 20 } }, shaper);
  const message = await raw();
  const outcomes = await Promise.all(
    Array.from({ length: 120 }, (_, i) => delivery.deliver({ from: 'b@acme.test', to: `u${i}@rcpt.test`, raw: message })),
  );
  assert.deepEqual(
    [...new Set(outcomes.map((o) => o.kind))],
    ['delivered'],
    'every message delivered (throttled answers retried at the new pace)',
  );
  assert.equal(sink.accepted, 120);
  const [state] = shaper.states();
  assert.equal(state.destination, 'mx.rcpt.test');
  assert.ok(state.throttled > 0, 'the receiver did throttle');
  assert.ok(
    state.current_per_minute !== null && state.current_per_minute <= 20 * 60 * 1.5,
    `pace fell to about the limit (a probe may be just above it): ${state.current_per_minute}/min`,
  );
  // After the first throttles, the sink saw about its limit and never much more.
  const first = sink.acceptedAt[0];
  const last = sink.acceptedAt[sink.acceptedAt.length - 1];
  const steady = rateSeen(sink.acceptedAt, first + 1500, last);
  // Never above the receiver's limit; the floor only proves the pace did not collapse (a busy
  // CI machine delivers more slowly than the receiver allows).
  assert.ok(steady <= 22 && steady >= 8, `steady rate ${steady.toFixed(1)}/s near the receiver's 20/s`);

  // The receiver accepts again (we stay below its limit): every clean step raises the pace.
  const before = state.current_per_minute!;
  // The pace a probe was throttled at holds for 15 clean steps, then probing goes on.
  await new Promise((resolve) => setTimeout(resolve, 15 * 300));
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 350));
    await delivery.deliver({ from: 'b@acme.test', to: `again${i}@rcpt.test`, raw: message });
  }
  const after = shaper.states()[0].current_per_minute!;
  assert.ok(after > before, `pace recovers: ${before} → ${after}`);
});

test('providers are recognised by MX host; operators override limits; transactional mail goes first', async () => {
  assert.deepEqual(destinationOf('gmail-smtp-in.l.google.com.'), { key: 'gmail', provider: 'gmail' });
  assert.deepEqual(destinationOf('example-com.mail.protection.outlook.com'), { key: 'microsoft', provider: 'microsoft' });
  assert.deepEqual(destinationOf('mta7.am0.yahoodns.net'), { key: 'yahoo', provider: 'yahoo' });
  assert.deepEqual(destinationOf('MX.Example.ORG'), { key: 'mx.example.org', provider: null });
  assert.throws(() => parseShapingOverrides('{"gmail":{"perMinute":-1}}'), /positive number/);
  const shaper = new TrafficShaper({ overrides: parseShapingOverrides('{"gmail":{"perMinute":600},"mx.one.test":{"connections":1}}') });
  assert.equal(shaper.limitsFor('gmail', 'gmail').perMinute, 600);
  assert.equal(shaper.limitsFor('gmail', 'gmail').connections, 20);

  // One connection: whoever waits, a transactional message is served before bulk ones.
  const first = await shaper.acquire('mx.one.test', 'bulk', 1000);
  assert.ok(first);
  const order: string[] = [];
  // Each served message is delivered at once (its slot released), which serves the next.
  const serve = (name: string, priority: 'bulk' | 'transactional') =>
    shaper.acquire('mx.one.test', priority, 1000).then((slot) => {
      assert.ok(slot, `${name} got a slot`);
      order.push(name);
      slot.release('accepted');
    });
  const waiting = [serve('bulk-1', 'bulk'), serve('bulk-2', 'bulk'), serve('transactional', 'transactional')];
  assert.equal(shaper.states()[0].queued, 3);
  first.release('accepted');
  await Promise.all(waiting);
  assert.deepEqual(order, ['transactional', 'bulk-1', 'bulk-2']);
  // No slot within the wait: null (the delivery is deferred, not failed).
  const held = await shaper.acquire('mx.one.test', 'bulk', 1000);
  assert.equal(await shaper.acquire('mx.one.test', 'bulk', 50), null);
  held?.release('accepted');
  shaper.close();
});

// The pacing logic alone, driven by a fake clock (no timers, no timing assertions).
const STEP = 2_000;
/** `count` acceptances spread evenly over the second before `until`. */
function accept(pace: Pace, count: number, until: number): void {
  for (let i = count - 1; i >= 0; i--) pace.observe('accepted', until - Math.floor((i * 1000) / count) - 1);
}

test('pace: starts are spaced, lateness is made up in part, and no second ever holds more starts than the pace', () => {
  const pace = new Pace(600, STEP); // 10 per second
  let now = 0;
  const starts: number[] = [];
  for (let i = 0; i < 100; i++) {
    // A busy event loop: every seventh start comes 100 ms late.
    now = Math.max(now, pace.startAt(now)) + (i % 7 === 6 ? 100 : 0);
    while (pace.startAt(now) > now) now = pace.startAt(now);
    pace.started(now);
    starts.push(now);
  }
  for (const from of starts)
    assert.ok(starts.filter((at) => at >= from && at < from + 1000).length <= 10, `at most 10 starts in the second from ${from}`);
  const perSecond = (starts.length - 1) / ((starts[starts.length - 1] - starts[0]) / 1000);
  // Without a catch-up each lateness would be lost (7 starts in 800 ms: 8.75/s); with it, it is made up.
  assert.ok(perSecond > 9.5 && perSecond <= 10, `pace kept despite lateness: ${perSecond.toFixed(2)}/s`);
});

test('pace: the first throttle teaches what the receiver took; jitter leaves the pace; a real share of refusals lowers it, a tenth at most', () => {
  const pace = new Pace(null, STEP);
  assert.equal(pace.rate, null, 'no limit before any lesson');
  accept(pace, 50, 10_000);
  pace.observe('throttled', 10_000);
  assert.equal(pace.ceiling, 50 * 60);
  assert.equal(pace.rate, 50 * 60 * HOLD, 'held just under what it took');
  assert.ok(pace.startAt(10_000) > 10_000, 'a beat is skipped');

  // Jitter: one refusal among many acceptances, seconds later.
  accept(pace, 48, 14_000);
  pace.observe('throttled', 14_000);
  assert.equal(pace.rate, 50 * 60 * HOLD, 'jitter does not lower the pace');

  // The receiver now takes 30/s and refuses the rest: a real share of refusals.
  accept(pace, 30, 20_000);
  for (let i = 0; i < 18; i++) pace.observe('throttled', 19_100 + i * 50);
  // Throttles are judged once a second: the next one weighs the refusals of the last two.
  pace.observe('throttled', 20_200);
  assert.equal(pace.ceiling, 50 * 60 * 0.9, 'lowered a tenth at most per lesson');
  accept(pace, 30, 21_500);
  for (let i = 0; i < 18; i++) pace.observe('throttled', 21_000 + i * 30);
  assert.ok(pace.ceiling < 50 * 60 * 0.9, 'lowered again by a further lesson');
  assert.ok(pace.rate! <= pace.ceiling * HOLD + 1e-9);
});

test('pace: acceptances read just after the first throttle still count toward what the receiver took', () => {
  const pace = new Pace(null, STEP);
  // A busy machine: the 421 is read first, then the 250s of the 20 messages taken before it.
  accept(pace, 2, 10_000);
  pace.observe('throttled', 10_000);
  assert.equal(pace.ceiling, 2 * 60);
  for (let i = 0; i < 18; i++) pace.observe('accepted', 10_010 + i * 10);
  assert.equal(pace.ceiling, 20 * 60, 'the late answers raise what it took');
  assert.equal(pace.rate, 20 * 60 * HOLD);
  // A second later they are no longer late: acceptances at the pace change nothing.
  accept(pace, 25, 12_000);
  assert.equal(pace.ceiling, 20 * 60);
});

test('pace: after a lesson it probes higher each clean step; a throttled probe returns to the pace before it and holds', () => {
  const pace = new Pace(null, STEP);
  accept(pace, 40, 10_000);
  pace.observe('throttled', 10_000); // measured low (a busy machine)
  const learned = pace.rate!;
  let now = 10_000;
  const clean = () => {
    now += STEP;
    pace.observe('accepted', now);
  };
  clean();
  clean();
  assert.ok(pace.rate! > learned * 1.1, `probing upwards: ${learned} → ${pace.rate}`);
  const beforeProbe = pace.rate!;
  clean(); // probes once more
  const probe = pace.rate!;
  assert.ok(probe > beforeProbe);
  // The probe is refused for a real share of its messages.
  for (let i = 0; i < 5; i++) pace.observe('throttled', now + 100 + i);
  assert.equal(pace.rate, beforeProbe, 'back to the pace before the probe');
  // It holds there for a while (a few clean steps), then probes in small steps.
  now += 100;
  clean();
  assert.equal(pace.rate, beforeProbe);
  for (let i = 0; i < 10 && pace.rate === beforeProbe; i++) clean();
  assert.ok(pace.rate! > beforeProbe && pace.rate! < beforeProbe * 1.05, `small probe: ${beforeProbe} → ${pace.rate}`);
});

test('pace: a block halves the pace and pauses; clean steps bring it back to the configured limit', () => {
  const pace = new Pace(1200, STEP);
  pace.observe('blocked', 1_000);
  pace.pause(61_000);
  assert.equal(pace.rate, 600);
  assert.equal(pace.startAt(1_000), 61_000, 'paused');
  let now = 61_000;
  for (let i = 0; i < 10; i++) {
    now += STEP;
    pace.observe('accepted', now);
  }
  assert.equal(pace.rate, 1200, 'recovered step by step to the limit, never above it');
});
