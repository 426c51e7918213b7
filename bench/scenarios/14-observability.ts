// What observability costs a send: single-recipient POST /v2/emails at full speed (role api),
// the same run, four servers measured in turn: nothing configured; metrics on
// (METRICS_PORT); tracing configured but disabled (an OTLP endpoint with OTEL_SDK_DISABLED=true,
// so no SDK loads); tracing on, exporting every request's spans (OTLP/HTTP protobuf) to a
// collector stand-in on loopback that reads and drops them. Aims: metrics on and tracing
// configured-but-off within 5 % of nothing configured.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Scenario } from '../run.ts';
import { freePort, load, type LoadResult } from '../lib.ts';
import { SEND_BODY, startSendingPostlane } from '../send-setup.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';

/** Accepts OTLP posts and drops them; counts the bytes received. */
async function startDroppingCollector() {
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => bytes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const scenario: Scenario = {
  name: 'observability',
  description: `POST /v2/emails at full speed with metrics and tracing off, metrics on, tracing configured but off, tracing on, on ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'} (aims: metrics on and tracing off within 5 % of all off)`,
  async run({ seconds, connections }) {
    const dns = await startDnsServer();
    const collector = await startDroppingCollector();
    const variants: Array<{ label: string; env: () => Promise<Record<string, string>> }> = [
      { label: 'nothing configured', env: async () => ({}) },
      { label: 'metrics on (METRICS_PORT)', env: async () => ({ METRICS_PORT: String(await freePort()) }) },
      {
        label: 'tracing configured, disabled',
        env: async () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' }),
      },
      { label: 'tracing on, exporting', env: async () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }) },
    ];
    // All four run side by side (idle between their turns), measured in turn, round after
    // round: a machine whose load drifts during the run then weighs on each alike. The median
    // round of each is reported.
    const rounds = Number(process.env.BENCH_OBSERVABILITY_ROUNDS ?? 3);
    const servers: Array<Awaited<ReturnType<typeof startSendingPostlane>>> = [];
    const runs: LoadResult[][] = variants.map(() => []);
    try {
      for (const variant of variants) servers.push(await startSendingPostlane(dns, await variant.env()));
      for (const { headers, url } of servers) await load(url, { seconds: 2, connections, headers, method: 'POST', body: SEND_BODY });
      for (let round = 0; round < rounds; round++) {
        for (const [i, { headers, url }] of servers.entries())
          runs[i].push(await load(url, { seconds, connections, headers, method: 'POST', body: SEND_BODY }));
      }
    } finally {
      for (const { postlane } of servers) await postlane.stop();
      await collector.close();
      await dns.close();
    }
    const median = (list: LoadResult[]) => [...list].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(list.length / 2)];
    const results = variants.map((variant, i) => ({
      label: variant.label,
      result: median(runs[i]),
      all: runs[i].map((r) => r.requestsPerSecond.toFixed(0)).join(', '),
    }));
    const base = results[0].result.requestsPerSecond;
    return {
      name: this.name,
      lines: [
        `median of ${rounds} rounds (every round's req/s in brackets)`,
        ...results.map(
          ({ label, result, all }) =>
            `${label.padEnd(30)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.latencyP50} ms  p99 ${result.latencyP99} ms  errors ${result.errors}  non-2xx ${result.non2xx}  ratio ${(result.requestsPerSecond / base).toFixed(3)}  [${all}]`,
        ),
        `OTLP bytes the collector stand-in received: ${collector.received()}`,
      ],
    };
  },
};
