// SIGKILL in the middle of delivering (see test/helpers/chaos.ts, duringDelivery): 4,000 sends
// and a 3,000-recipient campaign, 6 kills on SQLite (5 on PostgreSQL with BENCH_DATABASE_URL),
// the MTA answering 250 at once, each kill landing right after the server read the 250s sent so
// far, while clients keep sending with their Idempotency-Keys (12 of the 16 over the API, 4
// through the SMTP relay). Aims: 0 lost, 0 delivered twice (by Message-ID at the MTA), 0 keys
// stuck, every accepted email delivered within 60 s of the last restart. PostgreSQL restarted
// under load is the scenario `chaos-pg-restart` (a private cluster of its own).
import type { Scenario } from '../run.ts';
import type { ChaosReport } from '../../test/helpers/chaos.ts';

const onPostgres = Boolean(process.env.BENCH_DATABASE_URL);
const SENDS = Number(process.env.CHAOS_SENDS ?? 4_000);
const CAMPAIGN = Number(process.env.CHAOS_CAMPAIGN_RECIPIENTS ?? 3_000);
const KILLS = Number(process.env.CHAOS_KILLS ?? (onPostgres ? 5 : 6));
/** 12 API clients and 4 SMTP relay clients. */
const CLIENTS = 16;
const SMTP_CLIENTS = 4;

export function describe(label: string, r: ChaosReport, seconds: number): string[] {
  return [
    `${label}: ${r.sends} sends (${r.smtpSends} by SMTP) by ${CLIENTS} clients${r.campaign ? ` and a ${r.campaign.recipients}-recipient campaign` : ''}, ${r.kills} ${label.includes('restart') ? 'restarts' : 'kills'}, ${r.retries} client retries (${r.conflicts} answered 409/451) in ${seconds.toFixed(1)} s`,
    `  lost (no email for an answered key, or never answered): ${r.acceptedWithoutEmail + r.unanswered} (aim 0); accepted twice: ${r.acceptedTwice} (aim 0); keys stuck: ${r.stuckKeys} (aim 0)`,
    ...(r.campaign
      ? [
          `  campaign: ${r.campaign.emails} emails for ${r.campaign.recipients} recipients (aim: one each), ${r.campaign.sent ? 'sent' : 'NOT sent'}`,
        ]
      : []),
    `  undelivered: ${r.undelivered}; delivered twice: ${r.messagesDeliveredTwice} messages (${r.deliveredTwice} recipients or Message-IDs seen twice; aim 0); everything accepted before the last ${label.includes('restart') ? 'restart' : 'kill'} delivered ${(r.backlogDeliveredMs / 1000).toFixed(1)} s after the server was up again, everything ${(r.deliveredWithinMs / 1000).toFixed(1)} s after the clients were done (aim < 60 s)`,
    ...(label.includes('killed')
      ? [
          `  kills that came right after every 250 sent had been read: ${r.killsAfterRepliesRead} of ${r.kills}; 250s answered by the MTA: ${r.dataReceived}`,
        ]
      : []),
  ];
}

export const scenario: Scenario = {
  name: 'chaos',
  description: `${SENDS.toLocaleString('en')} sends and a ${CAMPAIGN.toLocaleString('en')}-recipient campaign, ${KILLS} SIGKILLs of the server during delivery (aims: 0 lost, 0 doubled, 0 keys stuck, delivered within 60 s of the last restart)`,
  async run() {
    // The test helpers read TEST_DATABASE_URL when loaded: set it first, then load them.
    if (onPostgres) process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
    const { runChaos } = await import('../../test/helpers/chaos.ts');
    const sendsPerClient = Math.ceil(SENDS / CLIENTS);
    // Kills spread over the time the clients need (about 20 ms a send each), each once the MTA
    // has answered some more since the last start.
    const spread = (sendsPerClient * 20) / (KILLS + 1);
    const started = performance.now();
    const killed = await runChaos({
      clients: CLIENTS - SMTP_CLIENTS,
      smtpClients: SMTP_CLIENTS,
      sendsPerClient,
      kills: KILLS,
      killEvery: [spread * 0.25, spread * 0.75],
      killAfterDeliveries: [100, 600],
      duringDelivery: true,
      campaignRecipients: CAMPAIGN,
    });
    const lines = describe(
      onPostgres ? 'PostgreSQL, Postlane killed' : 'SQLite, Postlane killed',
      killed,
      (performance.now() - started) / 1000,
    );
    return { name: this.name, lines };
  },
};
