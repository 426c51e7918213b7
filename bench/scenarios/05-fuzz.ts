// 100,000 hostile requests over every operation of /openapi.json (issue 20): how many answered
// 5xx (aim: 0), how many leaked a stack trace or SQL (aim: 0), and whether the server stayed up.
import type { Scenario } from '../run.ts';
import { startPostlane } from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { hostileRequests, LEAK, operationsOf, type FuzzRequest } from '../../test/helpers/fuzz.ts';

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const CONCURRENCY = 10;

export const scenario: Scenario = {
  name: 'fuzz',
  description: `${TOTAL.toLocaleString('en')} hostile requests over every operation of /openapi.json (aim: 0 answers of 5xx, nothing leaked)`,
  async run() {
    // Lookups the hostile requests cause (domains, webhook URLs, verifications) go to a loopback
    // DNS server that knows no name: answered at once, never the machine's resolver's timeouts.
    const dns = await startDnsServer();
    const postlane = await startPostlane({ DNS_SERVERS: dns.address });
    try {
      const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
      const operations = operationsOf(await (await fetch(`${postlane.url}/openapi.json`)).json());
      const perOperation = Math.ceil(TOTAL / operations.length);
      const statuses = new Map<number, number>();
      const failures: string[] = [];
      let sent = 0;
      let leaks = 0;
      const started = performance.now();
      // Generated per seed in slices, so memory stays small whatever the total.
      for (let seed = 1; sent < TOTAL; seed++) {
        const slice = hostileRequests(operations, Math.min(50, perOperation), seed * 7919).slice(0, TOTAL - sent);
        let next = 0;
        const worker = async () => {
          for (let request: FuzzRequest | undefined; (request = slice[next++]); ) {
            let status = 0;
            let text = '';
            try {
              const res = await fetch(postlane.url + request.url, { method: request.method, headers, ...(request.body !== undefined ? { body: request.body } : {}) });
              status = res.status;
              text = await res.text();
            } catch (error) {
              failures.push(`${request.method} ${request.url.slice(0, 120)}: ${(error as Error).message}`);
            }
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (status >= 500 && failures.length < 10) failures.push(`${request.method} ${request.url.slice(0, 120)} → ${status}`);
            if (status >= 400 && LEAK.test(text)) leaks++;
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, worker));
        sent += slice.length;
      }
      const seconds = (performance.now() - started) / 1000;
      const fiveHundreds = [...statuses].filter(([s]) => s >= 500 || s === 0).reduce((n, [, c]) => n + c, 0);
      const up = (await fetch(`${postlane.url}/healthz`).catch(() => null))?.status === 200;
      const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([s, c]) => `${s || 'no answer'}: ${c}`).join(', ');
      return {
        name: this.name,
        lines: [
          `requests: ${sent} over ${operations.length} operations in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)} req/s)`,
          `answers by status: ${byStatus}`,
          `5xx or no answer: ${fiveHundreds} (aim 0); bodies leaking a stack trace or SQL: ${leaks} (aim 0); server up afterwards: ${up ? 'yes' : 'NO'}`,
          ...failures.slice(0, 10).map((f) => `  ${f}`),
        ],
      };
    } finally {
      await postlane.stop();
      await dns.close();
    }
  },
};
