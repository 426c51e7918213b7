// The DNS checks of a domain's six records. Lookups go through the configured resolver
// (DNS_SERVERS); judging what came back is pure, so each rule is unit-tested on its own.
// A lookup that fails (timeout, server failure) is `unknown`: reported with an error on the
// record, never thrown, and never mistaken for a missing record.
import type { Resolver } from 'node:dns/promises';
import { isNoRecords } from '../../platform/dns.ts';
import { parseTags, publicKeyFromP, sameRsaKey } from './dkim.ts';
import {
  dkimRecordName,
  dmarcRecordName,
  inboundHost,
  returnPathDomain,
  trackingHost,
  type DomainRecordSource,
  type RecordKey,
  type RecordTargets,
} from './dns-records.ts';
import { normalizeHost } from './names.ts';

export type LookupResult<T> = { kind: 'found'; values: T[] } | { kind: 'none' } | { kind: 'failed'; message: string };

export interface RecordCheck {
  outcome: 'ok' | 'missing' | 'invalid' | 'unknown';
  error: string | null;
}

export interface MxAnswer {
  exchange: string;
  priority: number;
}

const ok = (): RecordCheck => ({ outcome: 'ok', error: null });
const missing = (error: string): RecordCheck => ({ outcome: 'missing', error });
const invalid = (error: string): RecordCheck => ({ outcome: 'invalid', error });
const unknown = (error: string): RecordCheck => ({ outcome: 'unknown', error });

const DNS_ERRORS: Record<string, string> = {
  ETIMEOUT: 'timed out',
  ESERVFAIL: 'got a server failure (SERVFAIL)',
  EREFUSED: 'was refused by the DNS server',
  ECONNREFUSED: 'could not reach the DNS server',
  ECANCELLED: 'was cancelled',
};

export function describeLookupFailure(error: unknown, type: string, name: string): string {
  const code = String((error as { code?: string })?.code ?? 'unknown error');
  return `DNS lookup of ${type} ${name} ${DNS_ERRORS[code] ?? `failed (${code})`}; the record could not be checked, try again later`;
}

async function lookup<T>(type: string, name: string, query: () => Promise<T[]>): Promise<LookupResult<T>> {
  try {
    const values = await query();
    return values.length > 0 ? { kind: 'found', values } : { kind: 'none' };
  } catch (error) {
    if (isNoRecords(error)) return { kind: 'none' };
    return { kind: 'failed', message: describeLookupFailure(error, type, name) };
  }
}

/** TXT records with their 255-byte character-strings joined, as RFC 7208 and 6376 read them. */
export function lookupTxt(resolver: Resolver, name: string): Promise<LookupResult<string>> {
  return lookup('TXT', name, async () => (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')));
}

export function lookupMx(resolver: Resolver, name: string): Promise<LookupResult<MxAnswer>> {
  return lookup('MX', name, () => resolver.resolveMx(name));
}

export function lookupCname(resolver: Resolver, name: string): Promise<LookupResult<string>> {
  return lookup('CNAME', name, () => resolver.resolveCname(name));
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** SPF at `<selector>.<domain>`: exactly one `v=spf1` record, including the SPF host. */
export function judgeSpf(result: LookupResult<string>, name: string, includeHost: string): RecordCheck {
  if (result.kind === 'failed') return unknown(result.message);
  const records = result.kind === 'found' ? result.values.filter((r) => /^v=spf1(\s|$)/i.test(r.trim())) : [];
  if (records.length === 0) return missing(`No SPF record (TXT starting with v=spf1) found at ${name}`);
  if (records.length > 1)
    return invalid(`Found ${records.length} SPF records at ${name}; publish exactly one (several SPF records are an SPF error)`);
  const wanted = normalizeHost(includeHost);
  const includes = records[0]
    .trim()
    .split(/\s+/)
    .some((term) => {
      const match = /^\+?include:(.+)$/i.exec(term);
      return match !== null && normalizeHost(match[1]) === wanted;
    });
  return includes ? ok() : invalid(`The SPF record at ${name} does not include include:${includeHost}`);
}

/** DKIM at `<selector>._domainkey.<domain>`: one key record whose p= is this domain's public key. */
export function judgeDkim(result: LookupResult<string>, name: string, publicKeyBase64: string): RecordCheck {
  if (result.kind === 'failed') return unknown(result.message);
  const records = (result.kind === 'found' ? result.values : [])
    .map((record) => parseTags(record))
    .filter((tags) => tags.has('p') || /^dkim1$/i.test(tags.get('v') ?? ''));
  if (records.length === 0) return missing(`No DKIM record found at ${name}`);
  if (records.length > 1) return invalid(`Found ${records.length} DKIM records at ${name}; publish exactly one`);
  const tags = records[0];
  const keyType = (tags.get('k') ?? 'rsa').toLowerCase();
  if (keyType !== 'rsa') return invalid(`The DKIM record at ${name} has key type k=${keyType}; this domain's key is RSA`);
  const p = (tags.get('p') ?? '').replace(/\s+/g, '');
  if (p === '') return invalid(`The DKIM record at ${name} has an empty p= (a revoked key); publish this domain's public key`);
  if (!publicKeyFromP(p)) return invalid(`The p= value of the DKIM record at ${name} is not a valid public key`);
  if (!sameRsaKey(p, publicKeyBase64))
    return invalid(`The public key (p=) of the DKIM record at ${name} does not match this domain's DKIM key`);
  return ok();
}

/** Return path at `<selector>.<domain>`: exactly one MX record, pointing to the return-path host. */
export function judgeReturnPath(result: LookupResult<MxAnswer>, name: string, host: string): RecordCheck {
  if (result.kind === 'failed') return unknown(result.message);
  if (result.kind === 'none') return missing(`No MX record found at ${name}`);
  if (result.values.length > 1) {
    return invalid(`Found ${plural(result.values.length, 'MX record')} at ${name}; exactly one, pointing to ${host}, is required`);
  }
  const exchange = normalizeHost(result.values[0].exchange);
  return exchange === normalizeHost(host) ? ok() : invalid(`The MX record at ${name} points to ${exchange || '.'} instead of ${host}`);
}

/** DMARC at `_dmarc.<domain>`: one `v=DMARC1` record with a policy; with reports on, it must send them to us. */
export function judgeDmarc(result: LookupResult<string>, name: string, reportAddress: string | null): RecordCheck {
  if (result.kind === 'failed') return unknown(result.message);
  const records = result.kind === 'found' ? result.values.filter((r) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(r.trim())) : [];
  if (records.length === 0) return missing(`No DMARC record (TXT starting with v=DMARC1) found at ${name}`);
  if (records.length > 1) return invalid(`Found ${records.length} DMARC records at ${name}; publish exactly one`);
  const tags = parseTags(records[0]);
  const policy = (tags.get('p') ?? '').toLowerCase();
  if (!['none', 'quarantine', 'reject'].includes(policy)) {
    return invalid(`The DMARC record at ${name} has no valid policy (p=none, p=quarantine or p=reject)`);
  }
  if (reportAddress) {
    const rua = (tags.get('rua') ?? '').split(',').map((uri) => uri.trim().replace(/!.*$/, '').toLowerCase());
    if (!rua.includes(`mailto:${reportAddress.toLowerCase()}`)) {
      return invalid(
        `The DMARC record at ${name} does not send aggregate reports to mailto:${reportAddress} (rua), so reports cannot be collected`,
      );
    }
  }
  return ok();
}

/** Tracking at `<tracking_key>.<domain>`: a CNAME to the tracking host. */
export function judgeTracking(result: LookupResult<string>, name: string, target: string): RecordCheck {
  if (result.kind === 'failed') return unknown(result.message);
  if (result.kind === 'none') return missing(`No CNAME record found at ${name}`);
  const value = normalizeHost(result.values[0]);
  return value === normalizeHost(target) ? ok() : invalid(`The CNAME record at ${name} points to ${value} instead of ${target}`);
}

/** Inbound at `<inbound_key>.<domain>`: MX records, all pointing to the inbound host. */
export function judgeInbound(result: LookupResult<MxAnswer>, name: string, host: string): RecordCheck {
  if (result.kind === 'failed') return unknown(result.message);
  if (result.kind === 'none') return missing(`No MX record found at ${name}`);
  const others = result.values.map((mx) => normalizeHost(mx.exchange)).filter((exchange) => exchange !== normalizeHost(host));
  if (others.length > 0) return invalid(`The MX records at ${name} point to ${others.join(', ')}; the only MX host must be ${host}`);
  return ok();
}

export type CheckResults = Record<RecordKey, RecordCheck>;

/** Queries all six records at once and judges each. */
export async function checkRecords(resolver: Resolver, domain: DomainRecordSource, targets: RecordTargets): Promise<CheckResults> {
  const rp = returnPathDomain(domain);
  const [spf, returnPath, dkim, dmarc, tracking, inbound] = await Promise.all([
    lookupTxt(resolver, rp),
    lookupMx(resolver, rp),
    lookupTxt(resolver, dkimRecordName(domain)),
    lookupTxt(resolver, dmarcRecordName(domain)),
    lookupCname(resolver, trackingHost(domain)),
    lookupMx(resolver, inboundHost(domain)),
  ]);
  return {
    spf: judgeSpf(spf, rp, targets.spfIncludeHost),
    return_path: judgeReturnPath(returnPath, rp, targets.returnPathHost),
    dkim: judgeDkim(dkim, dkimRecordName(domain), domain.dkim_public_key),
    dmarc: judgeDmarc(dmarc, dmarcRecordName(domain), domain.dmarc_reports ? domain.dmarc_address : null),
    tracking: judgeTracking(tracking, trackingHost(domain), targets.trackingCnameTarget),
    inbound: judgeInbound(inbound, inboundHost(domain), targets.inboundMxHost),
  };
}
