// `postlane doctor` and GET /v2/system/health: is this server set up to deliver mail that the
// large receivers accept? Every lookup goes through DNS_SERVERS. Nothing here knows HTTP.
import type { Config } from '../../../config.ts';
import { createResolver } from '../../../platform/dns.ts';
import type { Db } from '../../../platform/db/database.ts';
import { nowIso } from '../../../platform/clock.ts';
import { checkEveryDomainNow } from '../../domains/service.ts';
import { checkAddressBlocklists, checkDomainBlocklists } from './blocklists.ts';
import { checkCertificate } from './certificate.ts';
import { checkDomain } from './domains.ts';
import { checkIdentity } from './identity.ts';
import { checkMailHostname, checkPublicUrl } from './names.ts';
import { checkOutboundPort } from './outbound.ts';
import { checkClock, checkDatabase, checkDisk } from './runtime.ts';
import type { DoctorCheck, DoctorReport } from './types.ts';

export type { DoctorCheck, DoctorReport, CheckStatus } from './types.ts';

/** `workspaceId`: check only that workspace's domains (the HTTP report); otherwise every workspace's (the CLI). */
export async function runDoctor(deps: { db: Db; config: Config }, workspaceId?: string): Promise<DoctorReport> {
  const { config, db } = deps;
  const resolver = createResolver(config.dnsServers, { timeoutMs: config.dnsTimeoutMs, tries: 2 });
  const smarthost = config.smarthostUrl !== null;
  const hostname = checkMailHostname(config.mailHostname);
  const publicUrl = checkPublicUrl(config.publicUrl);
  const certificate = checkCertificate(config.smtpTlsCert, config.smtpTlsKey, config.mailHostname);

  const [identity, outbound, clock, disk, database, domains] = await Promise.all([
    checkIdentity(resolver, config.mailHostname, config.publicAddresses, smarthost),
    checkOutboundPort(resolver, config.doctorProbeDomain, config.mxPort, smarthost),
    checkClock(config.doctorTimeUrl),
    checkDisk(config.dataDir),
    checkDatabase(db),
    checkEveryDomainNow(deps, workspaceId).catch(() => []),
  ]);
  const context = {
    resolver,
    hostname: config.mailHostname,
    sendingAddresses: identity.sendingAddresses,
    httpsLinks: publicUrl.status === 'pass',
    spfIncludeHost: config.spfIncludeHost,
  };
  const [addressListings, domainChecks] = await Promise.all([
    Promise.all(identity.sendingAddresses.map((address) => checkAddressBlocklists(resolver, address))),
    Promise.all(
      domains.map(async (report) => [...(await checkDomain(context, report)), await checkDomainBlocklists(resolver, report.name)]),
    ),
  ]);
  const checks: DoctorCheck[] = [
    hostname,
    publicUrl,
    ...identity.checks,
    outbound,
    certificate,
    ...addressListings,
    ...domainChecks.flat(),
    clock,
    disk,
    database,
  ];
  const status = checks.some((c) => c.status === 'fail') ? 'fail' : checks.some((c) => c.status === 'warn') ? 'warn' : 'pass';
  return { status, checked_at: nowIso(), checks };
}

/** The blockers of a report, one readable line each (what `postlane serve` prints at start). */
export function blockerLines(report: DoctorReport): string[] {
  return report.checks.filter((c) => c.status === 'fail').map((c) => `doctor: BLOCKER ${c.id}: ${c.found}. Fix: ${c.fix}`);
}
