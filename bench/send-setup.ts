// A Postlane (role api) ready for POST /v2/emails at full speed: sending limits lifted, a
// verified bench.test whose records the loopback DNS server publishes. Used by the send
// scenarios.
import { startPostlane } from './lib.ts';
import type { TestDnsServer } from '../test/helpers/dns-server.ts';

export const SEND_BODY = JSON.stringify({
  from: 'Bench <hello@bench.test>',
  to: 'someone@example.org',
  subject: 'Benchmark',
  html: '<p>Hello from the benchmark</p>',
  text: 'Hello from the benchmark',
});

export async function startSendingPostlane(dns: TestDnsServer, env: Record<string, string> = {}) {
  const postlane = await startPostlane({ DNS_SERVERS: dns.address, ...env }, 'api');
  try {
    const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
    const workspace = JSON.parse(postlane.cli('workspace', 'list', '--json'))[0];
    postlane.cli('workspace', 'update', workspace.id, '--send-rate', '1000000', '--daily-limit', '1000000000', '--credits', '1000000000');
    const created = await (
      await fetch(`${postlane.url}/v2/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench.test' }) })
    ).json();
    for (const record of created.dns_records) {
      if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
      else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
      else dns.set(record.name, 'TXT', [record.value]);
    }
    const verified = await (await fetch(`${postlane.url}/v2/domains/${created.id}/verify`, { method: 'POST', headers })).json();
    if (verified.verification_status !== 'verified' && !verified.verified_at)
      throw new Error(`domain not verified: ${JSON.stringify(verified)}`);
    return { postlane, headers, url: `${postlane.url}/v2/emails` };
  } catch (error) {
    await postlane.stop();
    throw error;
  }
}
