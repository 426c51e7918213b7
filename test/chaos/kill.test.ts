// Chaos as a test (docs/performance.md), bounded for npm test on both dialects; the `chaos` bench
// scenario runs the same with larger counts. See test/helpers/chaos.ts for what happens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from '../helpers/chaos.ts';

test('SIGKILL at random moments while accepting (API and SMTP relay) and delivering: nothing lost, nothing twice, no key stuck', {
  timeout: 170_000,
}, async (t) => {
  const report = await runChaos({ clients: 6, smtpClients: 3, sendsPerClient: 20, kills: 3, killEvery: [300, 1000] });
  t.diagnostic(JSON.stringify(report));
  assert.ok(report.sends >= 180);
  assert.ok(report.smtpSends >= 60, 'relayed messages are part of it');
  assert.ok(report.retries > 0, 'the kills landed while clients were sending');
  assert.ok(report.smtpRetries > 0, 'and while relay clients were sending');
  assert.deepEqual(
    {
      unanswered: report.unanswered,
      acceptedTwice: report.acceptedTwice,
      acceptedWithoutEmail: report.acceptedWithoutEmail,
      stuckKeys: report.stuckKeys,
      undelivered: report.undelivered,
      deliveredTwice: report.deliveredTwice,
    },
    { unanswered: 0, acceptedTwice: 0, acceptedWithoutEmail: 0, stuckKeys: 0, undelivered: 0, deliveredTwice: 0 },
  );
  // Every recipient and Message-ID was counted once (deliveredTwice is 0), and all of them arrived.
  assert.ok(report.dataReceived >= report.sends);
});
