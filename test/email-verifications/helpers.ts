// A Postlane whose DNS, RDAP and recipients' mail servers are loopback servers:
// - 127.0.0.2: a mail server for acme.test (jane, info, full, fullhard, disabled exist),
//   catchall.test (accepts anything), grey.test (greylists), stall.test (stops answering at
//   RCPT) and the free and disposable providers the checks know (gmail.com, mailinator.com);
// - 127.0.0.3: a server that accepts connections and never greets (silent.test);
// - nomx.test has only an A record, nullmx.test a null MX, gone.test does not exist;
// - RDAP: acme.test registered ten years ago, fresh.test five days ago.
// Every server listens on the same port, MX_PORT.
import { startTestApp, freePort, type TestApp, type TestAppOptions } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startRdapServer, type TestRdapServer } from '../helpers/rdap-server.ts';
import { startMailboxServer, startSilentServer, type MailboxServer, type SilentServer } from '../helpers/mailbox-servers.ts';

export interface VerificationApp extends TestApp {
  dns: TestDnsServer;
  rdap: TestRdapServer;
  mx: MailboxServer;
  silent: SilentServer;
  /** Points `domain`'s MX at the mail server (127.0.0.2). */
  routeToMx(domain: string): void;
}

export const MX_IP = '127.0.0.2';
export const SILENT_IP = '127.0.0.3';
export const DAY_MS = 86_400_000;

/** Loopback servers on one port (MX_PORT), retried when another process took it meanwhile. */
async function startServers(rcptDelayMs?: number): Promise<{ mx: MailboxServer; silent: SilentServer }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const mx = await startMailboxServer({
        host: MX_IP,
        port,
        rcptDelayMs,
        domains: {
          'acme.test': {
            mailboxes: {
              jane: 'exists',
              info: 'exists',
              full: 'full',
              fullhard: 'full-permanent',
              disabled: 'disabled',
              xkqzvbwpt: 'exists',
            },
          },
          'fresh.test': { mailboxes: { jane: 'exists' } },
          'catchall.test': { catchAll: true },
          'grey.test': { greylist: true, mailboxes: { jane: 'exists' } },
          'stall.test': { stallAtRcpt: true },
          'gmail.com': { mailboxes: { 'jane.doe': 'exists', xkqzvbwpt: 'exists' } },
          'mailinator.com': { catchAll: true },
        },
      });
      try {
        return { mx, silent: await startSilentServer({ host: SILENT_IP, port }) };
      } catch (error) {
        await mx.close();
        throw error;
      }
    } catch (error) {
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt >= 10) throw error;
    }
  }
}

export function publishMailDns(dns: TestDnsServer): void {
  for (const domain of ['acme.test', 'fresh.test', 'catchall.test', 'grey.test', 'stall.test', 'gmail.com', 'mailinator.com']) {
    dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
    dns.set(`mx.${domain}`, 'A', [MX_IP]);
  }
  dns.set('silent.test', 'MX', [{ exchange: 'mx.silent.test', priority: 10 }]);
  dns.set('mx.silent.test', 'A', [SILENT_IP]);
  dns.set('nomx.test', 'A', ['127.0.0.9']);
  dns.set('nullmx.test', 'MX', [{ exchange: '', priority: 0 }]);
}

export async function startVerificationApp(options: TestAppOptions & { rcptDelayMs?: number } = {}): Promise<VerificationApp> {
  const dns = await startDnsServer();
  const rdap = await startRdapServer();
  const { mx, silent } = await startServers(options.rcptDelayMs);
  publishMailDns(dns);
  rdap.register('acme.test', new Date(Date.now() - 3650 * DAY_MS));
  rdap.register('fresh.test', new Date(Date.now() - 5 * DAY_MS));
  let app: TestApp;
  try {
    app = await startTestApp({
      workspace: { credits: 100_000 },
      ...options,
      env: {
        DNS_SERVERS: dns.address,
        MX_PORT: String(mx.port),
        RDAP_URL: rdap.url,
        MAIL_HOSTNAME: 'mail.postlane.test',
        VERIFY_SMTP_TIMEOUT_MS: '1000',
        DNS_TIMEOUT_MS: '500',
        // The mail servers are on loopback, which only ALLOW_PRIVATE_URLS lets the check reach.
        ALLOW_PRIVATE_URLS: 'true',
        ...options.env,
      },
    });
  } catch (error) {
    await Promise.all([dns.close(), rdap.close(), mx.close(), silent.close()]);
    throw error;
  }
  return {
    ...app,
    dns,
    rdap,
    mx,
    silent,
    routeToMx(domain) {
      dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
      dns.set(`mx.${domain}`, 'A', [MX_IP]);
    },
    async close() {
      await app.close();
      await Promise.all([dns.close(), rdap.close(), mx.close(), silent.close()]);
    },
  };
}
