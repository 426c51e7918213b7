// Each sending domain as receivers evaluate it: SPF of the envelope sender's domain for the
// addresses mail leaves from (mailauth, as an MTA would run it), the DKIM key, DMARC, and the
// bulk-sender rules Gmail, Yahoo and Microsoft enforce (aligned SPF or DKIM, a DMARC record,
// one-click unsubscribe on bulk mail, TLS).
import type { Resolver } from 'node:dns/promises';
import type { DomainDnsReport } from '../../domains/service.ts';
import { fail, pass, warn, type DoctorCheck } from './types.ts';

export interface DomainContext {
  resolver: Resolver;
  hostname: string;
  sendingAddresses: string[];
  /** PUBLIC_URL is HTTPS on a public name (one-click unsubscribe links work). */
  httpsLinks: boolean;
  spfIncludeHost: string;
}

const publish = (report: DomainDnsReport, key: string) => {
  const record = report.expected.find((item) => item.key === key)!;
  return `Publish ${record.type} ${record.name} "${record.value}"`;
};

async function receiverSpf(context: DomainContext, report: DomainDnsReport, address: string): Promise<string> {
  // mailauth (about 9 MB of heap) loads only when a doctor evaluates SPF.
  const { spf } = await import('mailauth/lib/spf/index.js');
  const result = await spf({
    sender: `postmaster@${report.returnPathDomain}`,
    ip: address,
    helo: context.hostname,
    mta: context.hostname,
    resolver: (name: string, type: string) => context.resolver.resolve(name, type) as Promise<never>,
    maxElapsedTime: 10_000,
  });
  return String(result.status?.result ?? 'none');
}

export async function checkDomain(context: DomainContext, report: DomainDnsReport): Promise<DoctorCheck[]> {
  const { name, results } = report;
  const checks: DoctorCheck[] = [];

  const retry = 'Check DNS_SERVERS and run the doctor again';
  let spfAligned = false;
  if (results.spf.outcome === 'unknown') {
    checks.push(warn(`spf:${name}`, results.spf.error ?? 'SPF could not be checked', retry));
  } else if (results.spf.outcome !== 'ok') {
    checks.push(
      fail(`spf:${name}`, results.spf.error ?? `SPF at ${report.returnPathDomain} is ${results.spf.outcome}`, publish(report, 'spf')),
    );
  } else if (context.sendingAddresses.length === 0) {
    spfAligned = true;
    checks.push(
      pass(
        `spf:${name}`,
        `The SPF record at ${report.returnPathDomain} includes ${context.spfIncludeHost} (no sending address known to evaluate it with)`,
      ),
    );
  } else {
    const outcomes = await Promise.all(
      context.sendingAddresses.map(
        async (address) => [address, await receiverSpf(context, report, address).catch((e) => `error (${e.message})`)] as const,
      ),
    );
    const failing = outcomes.filter(([, result]) => result !== 'pass');
    spfAligned = failing.length === 0;
    checks.push(
      failing.length === 0
        ? pass(`spf:${name}`, `Receivers evaluate SPF for ${report.returnPathDomain} from ${context.sendingAddresses.join(', ')} as pass`)
        : fail(
            `spf:${name}`,
            `Receivers evaluate SPF for ${report.returnPathDomain} from ${failing.map(([address, result]) => `${address} as ${result}`).join(', ')}`,
            `Publish TXT ${context.spfIncludeHost} "v=spf1 ${context.sendingAddresses.map((address) => `${address.includes(':') ? 'ip6' : 'ip4'}:${address}`).join(' ')} -all" (the host every domain's SPF includes)`,
          ),
    );
  }

  const dkimOk = results.dkim.outcome === 'ok';
  checks.push(
    results.dkim.outcome === 'unknown'
      ? warn(`dkim:${name}`, results.dkim.error ?? 'DKIM could not be checked', retry)
      : dkimOk
        ? pass(`dkim:${name}`, `The DKIM key at ${report.expected.find((r) => r.key === 'dkim')!.name} matches this domain's signing key`)
        : fail(`dkim:${name}`, results.dkim.error ?? `DKIM is ${results.dkim.outcome}`, publish(report, 'dkim')),
  );

  const dmarcOk = results.dmarc.outcome === 'ok';
  checks.push(
    dmarcOk
      ? pass(`dmarc:${name}`, `A DMARC policy is published at _dmarc.${name}`)
      : warn(
          `dmarc:${name}`,
          `${results.dmarc.error ?? `DMARC is ${results.dmarc.outcome}`}; Gmail, Yahoo and Microsoft require DMARC of bulk senders`,
          publish(report, 'dmarc'),
        ),
  );

  const unmet: string[] = [];
  if (!spfAligned && !dkimOk) unmet.push('neither SPF nor DKIM passes aligned with the From domain');
  if (!dmarcOk) unmet.push('no DMARC record');
  if (!context.httpsLinks) unmet.push('one-click unsubscribe links need PUBLIC_URL on HTTPS');
  checks.push(
    unmet.length === 0
      ? pass(
          `bulk_sender_rules:${name}`,
          'Aligned authentication, DMARC, one-click unsubscribe (List-Unsubscribe-Post on campaign mail) and TLS: the Gmail, Yahoo and Microsoft bulk-sender rules are met',
        )
      : warn(
          `bulk_sender_rules:${name}`,
          `Gmail, Yahoo and Microsoft bulk-sender rules unmet: ${unmet.join('; ')}`,
          'Fix the SPF, DKIM, DMARC and PUBLIC_URL checks above; the rules apply from 5,000 messages a day to their users',
        ),
  );
  return checks;
}
