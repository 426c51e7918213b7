// Shared by the domain tests: an app wired to a loopback DNS server, and publishing a
// domain's records the way a user would at their DNS provider.
import { startTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';

export interface DomainTestApp extends TestApp {
  dns: TestDnsServer;
}

export const HOSTS = {
  RETURN_PATH_HOST: 'bounces.postlane.test',
  SPF_INCLUDE_HOST: '_spf.postlane.test',
  TRACKING_CNAME_TARGET: 'track.postlane.test',
  INBOUND_MX_HOST: 'inbound.postlane.test',
  MAIL_HOSTNAME: 'postlane.test',
};

export async function startDomainApp(options: TestAppOptions = {}): Promise<DomainTestApp> {
  const dns = await startDnsServer();
  const app = await startTestApp({
    ...options,
    env: { DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '300', ...HOSTS, ...options.env },
  });
  const closeApp = app.close;
  return Object.assign(app, {
    dns,
    async close() {
      await closeApp();
      await dns.close();
    },
  });
}

type Record = { type: string; name: string; value: string; priority: number | null; required: boolean };
export type RecordKind = 'return_path' | 'spf' | 'dkim' | 'dmarc' | 'tracking' | 'inbound';
const KINDS: RecordKind[] = ['return_path', 'spf', 'dkim', 'dmarc', 'tracking', 'inbound'];

/** Publishes the domain's records (all six, or those named) exactly as `dns_records` shows them. */
export function publish(dns: TestDnsServer, domain: { dns_records: Record[] }, kinds: RecordKind[] = KINDS): void {
  domain.dns_records.forEach((record, index) => {
    if (!kinds.includes(KINDS[index])) return;
    if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
    else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
    else dns.set(record.name, 'TXT', [record.value]);
  });
}

export const REQUIRED: RecordKind[] = ['return_path', 'spf', 'dkim'];
