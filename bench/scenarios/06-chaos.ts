// SIGKILL under load (issue 20): 10,000 sends and 5 kills on SQLite (5,000 and 3 on PostgreSQL
// with BENCH_DATABASE_URL), clients retrying with their Idempotency-Keys. Aims: 0 lost, 0
// doubled, 0 keys stuck, every accepted email delivered within 60 s of the last restart.
import type { Scenario } from '../run.ts';

const onPostgres = Boolean(process.env.BENCH_DATABASE_URL);
const SENDS = Number(process.env.CHAOS_SENDS ?? (onPostgres ? 5_000 : 10_000));
const KILLS = Number(process.env.CHAOS_KILLS ?? (onPostgres ? 3 : 5));
const CLIENTS = 16;

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
    const r = await runChaos({ clients: CLIENTS, sendsPerClient, kills: KILLS, killEvery: [spread * 0.5, spread * 1.5] });
    const seconds = (performance.now() - started) / 1000;
    return {
      name: this.name,
      lines: [
        `${onPostgres ? 'PostgreSQL' : 'SQLite'}: ${r.sends} sends by ${CLIENTS} clients, ${r.kills} kills, ${r.retries} client retries (${r.conflicts} answered 409) in ${seconds.toFixed(1)} s`,
        `lost (no email for an answered key, or never answered): ${r.acceptedWithoutEmail + r.unanswered} (aim 0); accepted twice: ${r.acceptedTwice} (aim 0); keys stuck: ${r.stuckKeys} (aim 0)`,
        `undelivered: ${r.undelivered}; delivered twice: ${r.deliveredTwice} (aim 0); all delivered ${(r.deliveredWithinMs / 1000).toFixed(1)} s after the last restart (aim < 60 s)`,
      ],
    };
  },
};
