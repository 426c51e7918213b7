// SIGKILL in the middle of delivering: the MTA answers 250 at once, and each kill lands right
// after the server has read the 250s sent so far (test/helpers/chaos.ts, duringDelivery), while
// API and relay clients keep sending and a campaign fans out. An answer read before the kill
// must never lead to a second send after the restart (the outcome journal,
// src/resources/emails/delivery/journal.ts); nothing may be lost, and everything is delivered
// within 60 s of the last restart. Bounded for npm test on both dialects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from '../helpers/chaos.ts';

test('SIGKILL right after 250s were read, while sending and a campaign deliver: no email delivered twice, none lost', {
  timeout: 240_000,
}, async (t) => {
  const report = await runChaos({
    clients: 4,
    smtpClients: 2,
    sendsPerClient: 15,
    kills: 2,
    killEvery: [0, 200],
    killAfterDeliveries: [100, 300],
    duringDelivery: true,
    campaignRecipients: 1500,
  });
  t.diagnostic(JSON.stringify(report));
  assert.ok(report.sends >= 90);
  assert.ok(report.killsAfterRepliesRead >= 2, 'kills landed while the MTA was answering');
  assert.deepEqual(
    {
      deliveredTwice: report.deliveredTwice,
      undelivered: report.undelivered,
      unanswered: report.unanswered,
      acceptedTwice: report.acceptedTwice,
      acceptedWithoutEmail: report.acceptedWithoutEmail,
      stuckKeys: report.stuckKeys,
      campaign: report.campaign,
    },
    {
      deliveredTwice: 0,
      undelivered: 0,
      unanswered: 0,
      acceptedTwice: 0,
      acceptedWithoutEmail: 0,
      stuckKeys: 0,
      campaign: { recipients: 1500, emails: 1500, sent: true },
    },
  );
  assert.ok(
    report.backlogDeliveredMs < 60_000,
    `what was accepted before the last kill was delivered ${report.backlogDeliveredMs} ms after the restart`,
  );
  assert.ok(report.deliveredWithinMs < 60_000, `everything delivered ${report.deliveredWithinMs} ms after the clients were done`);
});
