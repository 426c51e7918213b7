// Single-recipient POST /v2/emails with the sending limits lifted: the API alone (role api, so
// delivery does not compete for the CPU), at full speed and at a fixed 500 req/s, beside the
// bare-Fastify baseline answering a POST in the same run; on PostgreSQL (BENCH_DATABASE_URL)
// also beside pgbench committing the same writes as one send, at full speed and at 500 tx/s
// (its p99 shows what this machine's disk allows a commit at that rate). The 500 req/s figure is paced
// evenly (pacedLoad); autocannon's overallRate (per-second bursts) is printed beside it.
import { join } from 'node:path';
import type { Scenario } from '../run.ts';
import { describeLoad, freePort, load, pacedLoad, startChild } from '../lib.ts';
import { SEND_BODY, startSendingPostlane } from '../send-setup.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { pgbenchSendP99AtRate, pgbenchSendRate } from '../pgbench-send.ts';

export const scenario: Scenario = {
  name: 'send',
  description: `single-recipient POST /v2/emails, limits lifted, on ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}${process.env.BENCH_METRICS === '1' ? ', metrics on' : ''} (aims: >= 2,000 accepted/s; p99 < 25 ms at 500 req/s${process.env.BENCH_DATABASE_URL ? '; >= 0.5 of pgbench' : ''})`,
  async run({ seconds, connections }) {
    const dns = await startDnsServer();
    // BENCH_METRICS=1: the same with /metrics on (METRICS_PORT), to measure what counting costs.
    const metrics: Record<string, string> = process.env.BENCH_METRICS === '1' ? { METRICS_PORT: String(await freePort()) } : {};
    const { postlane, headers, url } = await startSendingPostlane(dns, metrics);
    const body = SEND_BODY;
    try {
      const port = await freePort();
      const baseline = await startChild(
        join(import.meta.dirname, '..', 'baseline-fastify.ts'),
        [],
        { BASELINE_PORT: String(port) },
        port,
        '/healthz',
      );
      try {
        await load(url, { seconds: 2, connections, headers, method: 'POST', body });
        const full = await load(url, { seconds, connections, headers, method: 'POST', body });
        const bursts = await load(url, { seconds, connections, headers, method: 'POST', body, overallRate: 500 });
        const paced = await pacedLoad(url, { seconds, connections, headers, method: 'POST', body, rate: 500 });
        const bare = await load(`${baseline.url}/v2/emails`, { seconds, connections, headers, method: 'POST', body });
        const postgresUrl = postlane.env.DATABASE_URL;
        const pgbench = postgresUrl ? await pgbenchSendRate(postgresUrl, postlane.env.DATA_DIR, connections, seconds) : null;
        const pgbenchInserts = postgresUrl ? await pgbenchSendRate(postgresUrl, postlane.env.DATA_DIR, connections, seconds, false) : null;
        const pgbenchP99 = postgresUrl ? await pgbenchSendP99AtRate(postgresUrl, postlane.env.DATA_DIR, connections, seconds, 500) : null;
        return {
          name: this.name,
          lines: [
            ...(pgbench
              ? [
                  `pgbench, the writes of one send (${connections} clients)   ${pgbench.toFixed(0).padStart(7)} tx/s`,
                  `pgbench, its four inserts alone                 ${pgbenchInserts!.toFixed(0).padStart(7)} tx/s`,
                  `ratio (postlane / pgbench): ${(full.requestsPerSecond / pgbench).toFixed(2)} (aim >= 0.5); to the inserts alone: ${(full.requestsPerSecond / pgbenchInserts!).toFixed(2)}`,
                ]
              : []),
            describeLoad('postlane POST /v2/emails (full speed)', full),
            describeLoad('postlane POST /v2/emails @ 500 req/s', paced),
            describeLoad('  the same, autocannon overallRate', bursts),
            describeLoad('bare fastify POST, same body', bare),
            `accepted emails per second: ${full.requestsPerSecond.toFixed(0)} (aim >= 2000); p99 at 500 req/s: ${paced.latencyP99} ms (aim < 25)${pgbenchP99 !== null ? `; pgbench at 500 tx/s, the writes of one send: p99 ${pgbenchP99.toFixed(1)} ms` : ''}`,
            `ratio (postlane / bare): ${(full.requestsPerSecond / bare.requestsPerSecond).toFixed(2)}`,
          ],
        };
      } finally {
        await baseline.stop();
      }
    } finally {
      await postlane.stop();
      await dns.close();
    }
  },
};
