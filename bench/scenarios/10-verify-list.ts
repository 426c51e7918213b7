// A 10,000-address verification list spread over 200 loopback domains, hosted five to a mail
// server on 40 loopback MX servers (127.0.0.10–49, all on MX_PORT) that answer as real ones do,
// early-talker greeting delay included (smtp-server waits 100 ms before its 220): existing,
// unknown, full and disabled mailboxes, and every tenth domain catch-all. Measured from the
// POST until the list is `completed`: addresses verified per second, and the greatest number
// of simultaneous TCP connections any one MX saw (the limit is 3 per MX per process).
// Postlane runs in a child process (role all, SQLite unless BENCH_DATABASE_URL).
import type { Scenario } from '../run.ts';
import { startPostlane } from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { startMailboxFarm, type MailboxState, type MailDomain } from '../../test/helpers/mailbox-servers.ts';

const ADDRESSES = Number(process.env.BENCH_VERIFY_COUNT ?? 10_000);
const DOMAINS = 200;
const SERVERS = 40;
const TIMEOUT_MS = Number(process.env.BENCH_VERIFY_TIMEOUT_MS ?? 600_000);

function mailboxesOf(perDomain: number): Record<string, MailboxState> {
  const mailboxes: Record<string, MailboxState> = {};
  for (let j = 0; j < perDomain; j++) {
    const state = (['missing', 'full', 'disabled'] as const)[j % 10] ?? 'exists';
    if (state !== 'missing') mailboxes[`user${j}`] = state;
  }
  return mailboxes;
}

export const scenario: Scenario = {
  name: 'verify-list',
  description: `a ${ADDRESSES.toLocaleString('en')}-address verification list over ${DOMAINS} loopback domains on ${SERVERS} MX servers: addresses verified per second, most simultaneous connections at one MX`,
  async run() {
    const perDomain = Math.ceil(ADDRESSES / DOMAINS);
    const dns = await startDnsServer();
    const farm = await startMailboxFarm(SERVERS, (server) => {
      const domains: Record<string, MailDomain> = {};
      for (let d = server; d < DOMAINS; d += SERVERS)
        domains[`d${d}.bench.test`] = d % 10 === 0 ? { catchAll: true } : { mailboxes: mailboxesOf(perDomain) };
      return domains;
    });
    for (let d = 0; d < DOMAINS; d++) {
      dns.set(`d${d}.bench.test`, 'MX', [{ exchange: `mx${d}.bench.test`, priority: 10 }]);
      dns.set(`mx${d}.bench.test`, 'A', [farm.servers[d % SERVERS].host]);
    }
    const postlane = await startPostlane({
      DNS_SERVERS: dns.address,
      MX_PORT: String(farm.port),
      MAIL_HOSTNAME: 'mail.bench.test',
      ALLOW_PRIVATE_URLS: 'true',
    });
    try {
      const workspace = JSON.parse(postlane.cli('workspace', 'list', '--json'))[0];
      postlane.cli('workspace', 'update', workspace.id, '--credits', String(ADDRESSES * 5));
      const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
      const emails: string[] = [];
      for (let j = 0; emails.length < ADDRESSES; j++)
        for (let d = 0; d < DOMAINS && emails.length < ADDRESSES; d++) emails.push(`user${j}@d${d}.bench.test`);

      const start = performance.now();
      const response = await fetch(`${postlane.url}/v2/email-verification-lists`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'bench', emails }),
      });
      const created = await response.json();
      if (response.status !== 201) throw new Error(`POST /v2/email-verification-lists: ${response.status} ${JSON.stringify(created)}`);
      const createMs = performance.now() - start;
      let list: any = created;
      while (list.status !== 'completed') {
        if (performance.now() - start > TIMEOUT_MS) throw new Error(`not completed after ${TIMEOUT_MS} ms: ${JSON.stringify(list.stats)}`);
        await new Promise((r) => setTimeout(r, 100));
        list = await (await fetch(`${postlane.url}/v2/email-verification-lists/${created.id}`, { headers })).json();
      }
      const totalMs = performance.now() - start;
      const most = Math.max(...farm.servers.map((server) => server.maxOpenConnections));
      const connections = farm.servers.reduce((sum, server) => sum + server.connections, 0);
      return {
        name: this.name,
        lines: [
          `${(ADDRESSES / (totalMs / 1000)).toFixed(0).padStart(6)} addresses/s   ${ADDRESSES} verified in ${(totalMs / 1000).toFixed(1)} s (create ${(createMs / 1000).toFixed(1)} s)   ${connections} connections in all`,
          `most simultaneous connections at one MX: ${most} (limit 3 per MX per process)   results ${JSON.stringify(list.stats.results)}`,
        ],
      };
    } catch (error) {
      throw new Error(`${(error as Error).message}\npostlane output:\n${postlane.output().slice(-4000)}`);
    } finally {
      await postlane.stop();
      await farm.close();
      await dns.close();
    }
  },
};
