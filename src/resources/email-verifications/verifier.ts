// One address verified (https://emailit.com/docs/api-reference/email-verifications.md): the offline
// checks of src/mail/address-checks.ts, the domain's MX records through DNS_SERVERS, its age
// through RDAP_URL when set, and in `full` mode the SMTP mailbox check; then score, risk and
// result. Lists share one DomainFacts cache per run, so the addresses of a domain cost one MX
// lookup and one RDAP lookup.
import type { Resolver } from 'node:dns/promises';
import type { Config } from '../../config.ts';
import { nowMs } from '../../platform/clock.ts';
import { lazyModule } from '../../platform/lazy-module.ts';
import { isNoRecords } from '../../platform/dns.ts';
import {
  didYouMean,
  dnsName,
  isDisposableDomain,
  isFreeProvider,
  isGibberish,
  isRoleMailbox,
  normalizeEmail,
  parseAddress,
  type AddressParts,
} from '../../mail/address-checks.ts';
import { probeMailboxes, type ConnectionLimiter, type MailboxOutcome, type MailboxProbeResult } from '../../mail/mailbox-probe.ts';
import { orderMxHosts } from '../../mail/mx.ts';
import {
  verificationResult,
  verificationRisk,
  verificationScore,
  type VerificationChecks,
  type VerificationResult,
  type VerificationRisk,
} from '../../mail/verification-score.ts';
import { lookupRegistration } from '../domains/service.ts';

// tldts (the Public Suffix List) loads with the first address verified.
const tldts = lazyModule<typeof import('tldts')>('tldts');

export type VerificationMode = 'fast' | 'full';

export interface MxRecord {
  priority: number;
  exchange: string;
}

export interface MailboxCheck {
  outcome: MailboxOutcome | 'no_mx' | 'dns_failed';
  mx_host: string | null;
  code: number | null;
  enhanced_code: string | null;
  message: string;
}

/** Everything a verification found; the stored row and the API object are made from it. */
export interface VerificationOutcome {
  email: string;
  mode: VerificationMode;
  status: 'completed' | 'failed';
  score: number;
  risk: VerificationRisk;
  result: VerificationResult;
  checks: VerificationChecks;
  address: { mailbox: string | null; domain: string | null; suffix: string | null; root: string | null };
  did_you_mean: string | null;
  mx_records: MxRecord[];
  mailbox_check: MailboxCheck | null;
}

export type MxLookup = { kind: 'records'; records: MxRecord[] } | { kind: 'none' } | { kind: 'failed'; reason: string };

export interface DomainFacts {
  mx: MxLookup;
  /** Days since registration, null when unknown. */
  domainAge: number | null;
}

export interface VerifierDeps {
  config: Config;
  resolver: Resolver;
  limiter?: ConnectionLimiter;
  /** Shared by the addresses of one list run; a fresh one per single verification. */
  facts?: DomainFactsCache;
}

/** Domain facts looked up once per domain for as long as the cache lives. */
export class DomainFactsCache {
  private readonly entries = new Map<string, Promise<DomainFacts>>();
  get(domain: string, deps: VerifierDeps): Promise<DomainFacts> {
    let entry = this.entries.get(domain);
    if (!entry) this.entries.set(domain, (entry = lookUpDomain(domain, deps)));
    return entry;
  }
}

async function lookUpDomain(domain: string, deps: VerifierDeps): Promise<DomainFacts> {
  const [mx, domainAge] = await Promise.all([lookUpMx(domain, deps.resolver), lookUpDomainAge(domain, deps)]);
  return { mx, domainAge };
}

/** The domain's MX records (a null MX is none: RFC 7505). No MX is no MX, even with an A record. */
export async function lookUpMx(domain: string, resolver: Resolver): Promise<MxLookup> {
  try {
    const records = (await resolver.resolveMx(dnsName(domain)))
      .map((record) => ({ priority: record.priority, exchange: record.exchange.replace(/\.$/, '').toLowerCase() }))
      .filter((record) => record.exchange !== '')
      .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
    return records.length > 0 ? { kind: 'records', records } : { kind: 'none' };
  } catch (error) {
    if (isNoRecords(error)) return { kind: 'none' };
    return { kind: 'failed', reason: `DNS MX lookup for ${domain} failed: ${(error as { code?: string }).code ?? String(error)}` };
  }
}

async function lookUpDomainAge(domain: string, deps: VerifierDeps): Promise<number | null> {
  if (!deps.config.rdapUrl) return null;
  const registrable = tldts().getDomain(domain, { allowPrivateDomains: false }) ?? domain;
  const found = await lookupRegistration(deps.config.rdapUrl, dnsName(registrable), {
    resolver: deps.config.dnsServers.length > 0 ? deps.resolver : null,
    timeoutMs: 5000,
  });
  if (found.kind !== 'registered') return null;
  return Math.max(0, Math.floor((nowMs() - Date.parse(found.registeredAt)) / 86_400_000));
}

const NO_MAILBOX_CHECKS = { smtp_connect: null, deliverable: null, inbox_full: null, disabled: null, catch_all: null };

/** Verifies one address. Never throws for what the address or the network does. */
export async function verifyAddress(input: string, mode: VerificationMode, deps: VerifierDeps): Promise<VerificationOutcome> {
  return (await verifyAddresses([input], mode, deps))[0];
}

/** An address with its offline and DNS checks done, waiting for its mailbox check. */
interface Prepared {
  email: string;
  parts: AddressParts | null;
  facts: DomainFacts | null;
  checks: VerificationChecks;
  mailboxCheck: MailboxCheck | null;
}

/**
 * Verifies addresses (typically of one domain: a list's share for one mail host), their
 * mailbox checks asked in shared SMTP sessions per domain. Results in the order given.
 */
export async function verifyAddresses(inputs: string[], mode: VerificationMode, deps: VerifierDeps): Promise<VerificationOutcome[]> {
  const facts = deps.facts ?? new DomainFactsCache();
  const prepared = await Promise.all(inputs.map((input) => prepare(input, mode, facts, deps)));
  if (mode === 'full') {
    const byDomain = new Map<string, Prepared[]>();
    for (const item of prepared) {
      if (!item.parts || item.facts?.mx.kind !== 'records') continue;
      let items = byDomain.get(item.parts.domain);
      if (!items) byDomain.set(item.parts.domain, (items = []));
      items.push(item);
    }
    await Promise.all(
      [...byDomain].map(async ([domain, items]) => {
        const records = (items[0].facts!.mx as { records: MxRecord[] }).records;
        const probes = await probeMailboxes(
          items.map((item) => item.email),
          dnsName(domain),
          orderMxHosts(records),
          {
            resolver: deps.resolver,
            heloName: deps.config.mailHostname,
            mailFrom: `verify@${deps.config.mailHostname}`,
            port: deps.config.mxPort,
            timeoutMs: deps.config.verifySmtpTimeoutMs,
            allowPrivate: deps.config.allowPrivateUrls,
            limiter: deps.limiter,
          },
        );
        items.forEach((item, i) => {
          const probe = probes[i];
          Object.assign(item.checks, mailboxChecks(probe));
          item.mailboxCheck = {
            outcome: probe.outcome,
            mx_host: probe.mxHost,
            code: probe.code,
            enhanced_code: probe.enhancedCode,
            message: probe.message,
          };
        });
      }),
    );
  }
  return prepared.map((item) => finish(item, mode));
}

async function prepare(input: string, mode: VerificationMode, cache: DomainFactsCache, deps: VerifierDeps): Promise<Prepared> {
  const email = normalizeEmail(input);
  const parts = parseAddress(email);
  if (!parts) {
    // Bad syntax: nothing else is asked, and mail cannot reach it.
    const checks: VerificationChecks = {
      valid_syntax: false,
      disposable: false,
      role_account: false,
      free_email: false,
      gibberish: false,
      has_mx_records: false,
      domain_age: null,
      ...NO_MAILBOX_CHECKS,
      ...(mode === 'full' ? { smtp_connect: false, deliverable: false } : {}),
    };
    const mailboxCheck: MailboxCheck | null =
      mode === 'full' ? { outcome: 'no_mx', mx_host: null, code: null, enhanced_code: null, message: 'not a valid address' } : null;
    return { email, parts: null, facts: null, checks, mailboxCheck };
  }
  const facts = await cache.get(parts.domain, deps);
  const checks: VerificationChecks = {
    valid_syntax: true,
    disposable: isDisposableDomain(parts.domain),
    role_account: isRoleMailbox(parts.mailbox),
    free_email: isFreeProvider(parts.domain),
    gibberish: isGibberish(parts.mailbox),
    has_mx_records: facts.mx.kind === 'failed' ? null : facts.mx.kind === 'records',
    domain_age: facts.domainAge,
    ...NO_MAILBOX_CHECKS,
  };
  let mailboxCheck: MailboxCheck | null = null;
  if (mode === 'full' && facts.mx.kind === 'none') {
    Object.assign(checks, { smtp_connect: false, deliverable: false });
    mailboxCheck = { outcome: 'no_mx', mx_host: null, code: null, enhanced_code: null, message: `${parts.domain} has no MX records` };
  } else if (mode === 'full' && facts.mx.kind === 'failed') {
    mailboxCheck = { outcome: 'dns_failed', mx_host: null, code: null, enhanced_code: null, message: facts.mx.reason };
  }
  return { email, parts, facts, checks, mailboxCheck };
}

/** The mailbox checks a probe answers; null where the server said nothing about the mailbox. */
export function mailboxChecks(
  probe: MailboxProbeResult,
): Pick<VerificationChecks, 'smtp_connect' | 'deliverable' | 'inbox_full' | 'disabled' | 'catch_all'> {
  const definite = { accepted: true, rejected: false, disabled: false, inbox_full: false } as Partial<Record<MailboxOutcome, boolean>>;
  const answered = probe.outcome in definite;
  return {
    // Not connected to at all (an MX that is not public) is not a failed connection.
    smtp_connect: probe.outcome === 'not_checked' ? null : probe.connected,
    deliverable: answered ? definite[probe.outcome]! : null,
    inbox_full: answered ? probe.outcome === 'inbox_full' : null,
    disabled: answered ? probe.outcome === 'disabled' : null,
    catch_all: probe.catchAll,
  };
}

function finish(item: Prepared, mode: VerificationMode): VerificationOutcome {
  const { email, parts, facts, checks } = item;
  const score = verificationScore(checks, mode);
  const result = verificationResult(checks, score);
  const at = email.lastIndexOf('@');
  const address = parts
    ? { mailbox: parts.mailbox, domain: parts.domain, suffix: parts.suffix, root: parts.root }
    : at > 0
      ? { mailbox: email.slice(0, at), domain: email.slice(at + 1) || null, suffix: null, root: null }
      : { mailbox: null, domain: null, suffix: null, root: null };
  return {
    email,
    mode,
    status: facts?.mx.kind === 'failed' ? 'failed' : 'completed',
    score,
    risk: verificationRisk(result, score),
    result,
    checks,
    address,
    did_you_mean: parts ? didYouMean(parts, email) : null,
    mx_records: facts?.mx.kind === 'records' ? facts.mx.records : [],
    mailbox_check: item.mailboxCheck,
  };
}
