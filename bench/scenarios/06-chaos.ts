// SIGKILL under load (issue 20): 10,000 sends and 5 kills on SQLite (5,000 and 3 on PostgreSQL
// with BENCH_DATABASE_URL), clients retrying with their Idempotency-Keys. Aims: 0 lost, 0
// doubled, 0 keys stuck, every accepted email delivered within 60 s of the last restart.
import { execFileSync } from 'node:child_process';
import type { Scenario } from '../run.ts';
import type { ChaosReport } from '../../test/helpers/chaos.ts';

const onPostgres = Boolean(process.env.BENCH_DATABASE_URL);
const SENDS = Number(process.env.CHAOS_SENDS ?? (onPostgres ? 5_000 : 10_000));
const KILLS = Number(process.env.CHAOS_KILLS ?? (onPostgres ? 3 : 5));
/** 12 API clients and 4 SMTP relay clients. */
const CLIENTS = 16;
const SMTP_CLIENTS = 4;
/** `pg_ctlcluster <version> <name> restart` for the PostgreSQL under test, e.g. "15 main"
 *  (only with BENCH_DATABASE_URL): a third phase restarts PostgreSQL twice under load. */
const PG_CLUSTER = process.env.CHAOS_PG_CLUSTER;

function describe(label: string, r: ChaosReport, seconds: number): string[] {
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
    let started = performance.now();
    const killed = await runChaos({ clients: CLIENTS - SMTP_CLIENTS, smtpClients: SMTP_CLIENTS, sendsPerClient, kills: KILLS, killEvery: [spread * 0.5, spread * 1.5] });
    const lines = describe(onPostgres ? 'PostgreSQL, Postlane killed' : 'SQLite, Postlane killed', killed, (performance.now() - started) / 1000);
    if (onPostgres && PG_CLUSTER) {
      const [version, name] = PG_CLUSTER.split(' ');
      const restart = async () => {
        execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'restart'], { stdio: 'ignore' });
      };
      started = performance.now();
      const restarted = await runChaos({ clients: CLIENTS - SMTP_CLIENTS, smtpClients: SMTP_CLIENTS, sendsPerClient: Math.ceil(sendsPerClient / 2), kills: 2, killEvery: [spread * 0.5, spread], restartDatabase: restart });
      lines.push(...describe('PostgreSQL restarted under load, Postlane left running', restarted, (performance.now() - started) / 1000));
    }
    return { name: this.name, lines };
  },
};
