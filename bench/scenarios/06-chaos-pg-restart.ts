// PostgreSQL restarted under load (docs/performance.md): a private throwaway cluster (initdb/pg_ctl
// in a temporary directory on a free port; the shared server is never touched) is restarted three
// times, cleanly and as a crash in turn, while 12 API and 4 SMTP relay clients send with retries
// and the one Postlane process keeps running. The MTA answers 250 at once, so deliveries answered
// while the database is away must be recorded once it is back, never sent again. Aims as for
// `chaos`: 0 lost, 0 doubled, 0 keys stuck, and Postlane never exits.
import type { Scenario } from '../run.ts';
import { describe } from './06-chaos.ts';
import { startPrivatePostgres } from '../../test/helpers/private-postgres.ts';

const SENDS = Number(process.env.CHAOS_SENDS ?? 3_000);
const RESTARTS = Number(process.env.CHAOS_KILLS ?? 3);
const CLIENTS = 16;
const SMTP_CLIENTS = 4;

export const scenario: Scenario = {
  name: 'chaos-pg-restart',
  description: `${SENDS.toLocaleString('en')} sends while a private PostgreSQL is restarted ${RESTARTS} times under Postlane (aims: 0 lost, 0 doubled, 0 keys stuck, no Postlane restart)`,
  async run() {
    const postgres = await startPrivatePostgres();
    if (!postgres) return { name: this.name, lines: ['skipped: initdb (PostgreSQL server binaries) not installed'] };
    try {
      // The test helpers read TEST_DATABASE_URL when loaded: set it first, then load them.
      process.env.TEST_DATABASE_URL = postgres.url;
      const { runChaos } = await import('../../test/helpers/chaos.ts');
      const sendsPerClient = Math.ceil(SENDS / CLIENTS);
      const spread = (sendsPerClient * 20) / (RESTARTS + 1);
      let restarts = 0;
      const started = performance.now();
      const report = await runChaos({
        clients: CLIENTS - SMTP_CLIENTS,
        smtpClients: SMTP_CLIENTS,
        sendsPerClient,
        kills: RESTARTS,
        killEvery: [spread * 0.5, spread * 1.5],
        restartDatabase: () => postgres.restart(restarts++ % 2 === 0 ? 'fast' : 'immediate'),
        duringDelivery: true,
      });
      return {
        name: this.name,
        lines: describe('PostgreSQL restarted under load, Postlane left running', report, (performance.now() - started) / 1000),
      };
    } finally {
      await postgres.stop();
    }
  },
};
