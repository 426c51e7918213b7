// SIGKILL under load (issue 20): 10,000 sends and 5 kills on SQLite (5,000 and 3 on PostgreSQL
// with BENCH_DATABASE_URL), clients retrying with their Idempotency-Keys. Aims: 0 lost, 0
// doubled, 0 keys stuck, every accepted email delivered within 60 s of the last restart.
// 12 of the 16 clients send over the API, 4 through the SMTP relay. PostgreSQL restarted under
// load is the scenario `chaos-pg-restart` (a private cluster of its own).
import type { Scenario } from '../run.ts';
import type { ChaosReport } from '../../test/helpers/chaos.ts';

const onPostgres = Boolean(process.env.BENCH_DATABASE_URL);
const SENDS = Number(process.env.CHAOS_SENDS ?? (onPostgres ? 5_000 : 10_000));
const KILLS = Number(process.env.CHAOS_KILLS ?? (onPostgres ? 3 : 5));
/** 12 API clients and 4 SMTP relay clients. */
const CLIENTS = 16;
const SMTP_CLIENTS = 4;

export function describe(label: string, r: ChaosReport, seconds: number): string[] {
  return [
    `${label}: ${r.sends} sends (${r.smtpSends} by SMTP) by ${CLIENTS} clients, ${r.kills} ${label.includes('restart') ? 'restarts' : 'kills'}, ${r.retries} client retries (${r.conflicts} answered 409/451) in ${seconds.toFixed(1)} s`,
    `  lost (no email for an answered key, or never answered): ${r.acceptedWithoutEmail + r.unanswered} (aim 0); accepted twice: ${r.acceptedTwice} (aim 0); keys stuck: ${r.stuckKeys} (aim 0)`,
    `  undelivered: ${r.undelivered}; delivered twice: ${r.deliveredTwice} (aim 0); all delivered ${(r.deliveredWithinMs / 1000).toFixed(1)} s after the last kill or restart (aim < 60 s)`,
  ];
}

export const scenario: Scenario = {
  name: 'chaos',
  description: `${SENDS.toLocaleString('en')} sends, ${KILLS} SIGKILLs of the server (aims: 0 lost, 0 doubled, 0 keys stuck, delivered within 60 s of the last restart)`,
  async run() {
    // The test helpers read TEST_DATABASE_URL when loaded: set it first, then load them.
    if (onPostgres) process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
    const { runChaos } = await import('../../test/helpers/chaos.ts');
    const sendsPerClient = Math.ceil(SENDS / CLIENTS);
    // Kills spread over the time the clients need (about 20 ms a send each).
    const spread = (sendsPerClient * 20) / (KILLS + 1);
    const started = performance.now();
    const killed = await runChaos({ clients: CLIENTS - SMTP_CLIENTS, smtpClients: SMTP_CLIENTS, sendsPerClient, kills: KILLS, killEvery: [spread * 0.5, spread * 1.5] });
    const lines = describe(onPostgres ? 'PostgreSQL, Postlane killed' : 'SQLite, Postlane killed', killed, (performance.now() - started) / 1000);
    return { name: this.name, lines };
  },
};
