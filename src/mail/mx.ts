// Where mail for a domain goes (RFC 5321 §5.1): its MX hosts in preference order, ties
// shuffled to spread load; no MX → the domain itself (implicit MX); a null MX (RFC 7505) or a
// domain that does not exist → permanent failure; DNS that does not answer → try again later.
// Every lookup goes through the resolver of src/platform/dns.ts (DNS_SERVERS).
import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface MxHost {
  /** Lowercase host name without the trailing dot (or an IP literal a broken zone names). */
  exchange: string;
  priority: number;
}

export type MxResolution =
  | { kind: 'hosts'; hosts: MxHost[]; implicit: boolean }
  | { kind: 'permanent' | 'temporary'; enhancedCode: string; reason: string };

export interface MxOptions {
  /** Random source for shuffling equal priorities (tests pass a fixed one). */
  random?: () => number;
}

const errorCode = (error: unknown) => String((error as { code?: string })?.code ?? 'EUNKNOWN');
/** The domain (or name) does not exist. */
const isNxDomain = (error: unknown) => errorCode(error) === 'ENOTFOUND';
/** The name exists but has no record of the asked type. */
const isNoData = (error: unknown) => errorCode(error) === 'ENODATA';

const normalizeHost = (name: string) => name.trim().replace(/\.$/, '').toLowerCase();

/** Sorts by priority (lowest first) and shuffles hosts of equal priority; a repeated host keeps its best priority. */
export function orderMxHosts(records: Array<{ exchange: string; priority: number }>, random: () => number = Math.random): MxHost[] {
  const hosts = records
    .map((record) => ({ exchange: normalizeHost(record.exchange), priority: record.priority, tiebreak: random() }))
    .filter((host) => host.exchange !== '')
    .sort((a, b) => a.priority - b.priority || a.tiebreak - b.tiebreak);
  const seen = new Set<string>();
  return hosts
    .filter((host) => !seen.has(host.exchange) && seen.add(host.exchange))
    .map(({ exchange, priority }) => ({ exchange, priority }));
}

function dnsFailure(error: unknown, name: string, type: string): MxResolution {
  return { kind: 'temporary', enhancedCode: '4.4.3', reason: `DNS ${type} lookup for ${name} failed: ${errorCode(error)}` };
}

/** The delivery hosts of `domain`, or why there are none. */
export async function resolveMx(domain: string, resolver: Resolver, options: MxOptions = {}): Promise<MxResolution> {
  const name = normalizeHost(domain);
  let records: Array<{ exchange: string; priority: number }>;
  try {
    records = await resolver.resolveMx(name);
  } catch (error) {
    if (isNxDomain(error)) return { kind: 'permanent', enhancedCode: '5.1.2', reason: `Domain ${name} does not exist (NXDOMAIN)` };
    if (!isNoData(error)) return dnsFailure(error, name, 'MX');
    records = [];
  }
  if (records.length > 0) {
    // A null MX is "." (node reports an empty exchange). RFC 7505 forbids mixing it with real
    // MX records; if a zone does anyway, the real ones are used.
    const real = records.filter((record) => normalizeHost(record.exchange) !== '');
    if (real.length === 0) return { kind: 'permanent', enhancedCode: '5.1.10', reason: `Domain ${name} does not accept mail (null MX)` };
    return { kind: 'hosts', hosts: orderMxHosts(real, options.random), implicit: false };
  }
  // No MX: the domain itself is the mail host when it has an address (RFC 5321 §5.1).
  const addresses = await resolveAddresses(name, resolver);
  if (addresses.kind === 'addresses') return { kind: 'hosts', hosts: [{ exchange: name, priority: 0 }], implicit: true };
  if (addresses.kind === 'temporary') return { kind: 'temporary', enhancedCode: '4.4.3', reason: addresses.reason };
  return { kind: 'permanent', enhancedCode: '5.1.2', reason: `Domain ${name} has no MX, A or AAAA record` };
}

export type AddressResolution = { kind: 'addresses'; addresses: string[] } | { kind: 'none' | 'temporary'; reason: string };

/**
 * IPv4 then IPv6 addresses of a host (IPv4 first: many hosts have no working IPv6 route).
 * `none` when the name has no address, `temporary` when DNS failed for both families.
 */
export async function resolveAddresses(host: string, resolver: Resolver): Promise<AddressResolution> {
  const name = normalizeHost(host);
  if (isIP(name)) return { kind: 'addresses', addresses: [name] };
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
  if (addresses.length > 0) return { kind: 'addresses', addresses };
  const failures = [v4, v6].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  const hardMiss = failures.every((error) => isNxDomain(error) || isNoData(error));
  if (hardMiss) return { kind: 'none', reason: `Host ${name} has no A or AAAA record` };
  const failure = failures.find((error) => !isNxDomain(error) && !isNoData(error));
  return { kind: 'temporary', reason: `DNS address lookup for ${name} failed: ${errorCode(failure)}` };
}
