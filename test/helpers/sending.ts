// A Postlane ready to send: a loopback DNS server behind DNS_SERVERS, and verified sending
// domains made the way a user makes them (create, publish the records, verify).
import assert from 'node:assert/strict';
import { startTestApp, type ApiClient, type TestApp, type TestAppOptions } from './app.ts';
import { startDnsServer, type TestDnsServer } from './dns-server.ts';

export interface SendingApp extends TestApp {
  dns: TestDnsServer;
  /** Creates `name` in the workspace of `api` (default: the first), publishes its records
   *  (all but the `skip` ones: 'tracking', 'inbound', 'dmarc') and verifies it. */
  verifiedDomain(name: string, api?: ApiClient, skip?: string[]): Promise<{ id: string; name: string; [key: string]: unknown }>;
}

interface DnsRecord {
  type: string;
  name: string;
  value: string;
  priority: number | null;
}

export function publishRecords(dns: TestDnsServer, records: DnsRecord[]): void {
  for (const record of records) {
    if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
    else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
    else dns.set(record.name, 'TXT', [record.value]);
  }
}

export async function startSendingApp(options: TestAppOptions = {}): Promise<SendingApp> {
  const dns = await startDnsServer();
  let app: TestApp;
  try {
    app = await startTestApp({
      ...options,
      env: { DNS_SERVERS: dns.address, ALLOW_PRIVATE_URLS: 'true', MAIL_HOSTNAME: 'mail.postlane.test', ...options.env },
    });
  } catch (error) {
    await dns.close(); // a failed start must not leave a socket holding the test process open
    throw error;
  }
  return {
    ...app,
    dns,
    async verifiedDomain(name, api = app.api, skip = []) {
      const created = await api.post('/v2/domains', { name });
      assert.equal(created.status, 201, `creating ${name}: ${created.text}`);
      const kinds: Record<string, (r: DnsRecord) => boolean> = {
        tracking: (r) => r.type === 'CNAME',
        inbound: (r) => r.type === 'MX' && r.name.startsWith('inbound.'),
        dmarc: (r) => r.name.startsWith('_dmarc.'),
      };
      publishRecords(
        dns,
        created.body.dns_records.filter((r: DnsRecord) => !skip.some((kind) => kinds[kind]?.(r))),
      );
      const verified = await api.post(`/v2/domains/${created.body.id}/verify`);
      assert.equal(verified.status, 200, verified.text);
      const domain = (await api.get(`/v2/domains/${created.body.id}`)).body;
      assert.ok(domain.verified_at, `${name} verified: ${JSON.stringify(domain)}`);
      return domain;
    },
    async close() {
      await app.close();
      await dns.close();
    },
  };
}
