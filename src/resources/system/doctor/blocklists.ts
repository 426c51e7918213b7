// The common DNS blocklists, queried as receivers query them: the address's octets (IPv4) or
// nibbles (IPv6) reversed, under the list's zone, asked for an A record; an answer in
// 127.0.0.0/8 means listed. Domain lists are asked for the domain name under their zone.
import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isNoRecords } from '../../../platform/dns.ts';
import { fail, pass, warn, type DoctorCheck } from './types.ts';

export const ADDRESS_BLOCKLISTS = ['zen.spamhaus.org', 'bl.spamcop.net', 'b.barracudacentral.org', 'psbl.surriel.com'];
export const DOMAIN_BLOCKLISTS = ['dbl.spamhaus.org', 'multi.surbl.org'];

/** `1.2.3.4` → `4.3.2.1`; an IPv6 address → its 32 nibbles reversed, dot-separated. */
export function reversedAddress(address: string): string {
  if (isIP(address) === 4) return address.split('.').reverse().join('.');
  const groups = address.split('::');
  const head = groups[0] ? groups[0].split(':') : [];
  const tail = groups.length > 1 && groups[1] ? groups[1].split(':') : [];
  const full = [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail].map((group) => group.padStart(4, '0'));
  return full.join('').split('').reverse().join('.');
}

type Listing = { list: string; answer: string } | { list: string; error: string } | null;

async function query(resolver: Resolver, name: string, list: string): Promise<Listing> {
  try {
    const answers = await resolver.resolve4(name);
    const listed = answers.find((answer) => answer.startsWith('127.'));
    if (!listed) return null;
    // Spamhaus answers 127.255.255.x when it refuses the query (public resolvers, over quota).
    if (listed.startsWith('127.255.255.'))
      return { list, error: `the list refused the query (${listed}); query it through a resolver of your own` };
    return { list, answer: listed };
  } catch (error) {
    if (isNoRecords(error)) return null;
    return { list, error: `lookup failed (${(error as { code?: string }).code ?? error})` };
  }
}

async function checkListed(
  resolver: Resolver,
  id: string,
  subject: string,
  names: Array<[string, string]>,
  fix: string,
): Promise<DoctorCheck> {
  const results = (await Promise.all(names.map(([name, list]) => query(resolver, name, list)))).filter((r) => r !== null);
  const listed = results.filter((r) => 'answer' in r);
  if (listed.length > 0) {
    return fail(id, `${subject} is listed on ${listed.map((r) => `${r.list} (${r.answer})`).join(', ')}`, fix);
  }
  const unknown = results.filter((r) => 'error' in r);
  if (unknown.length === names.length)
    return warn(
      id,
      `${subject} could not be checked: ${unknown.map((r) => `${r.list}: ${r.error}`).join('; ')}`,
      'Check DNS_SERVERS; blocklists refuse queries from large public resolvers',
    );
  return pass(
    id,
    `${subject} is on none of ${names.map(([, list]) => list).join(', ')}${unknown.length ? ` (not answered: ${unknown.map((r) => r.list).join(', ')})` : ''}`,
  );
}

export function checkAddressBlocklists(resolver: Resolver, address: string, lists = ADDRESS_BLOCKLISTS): Promise<DoctorCheck> {
  const reversed = reversedAddress(address);
  return checkListed(
    resolver,
    `blocklist:${address}`,
    address,
    lists.map((list) => [`${reversed}.${list}`, list]),
    `Find why at each list's lookup page (e.g. https://check.spamhaus.org/), stop the cause (an open relay, a compromised key, bought lists), then request removal there`,
  );
}

export function checkDomainBlocklists(resolver: Resolver, domain: string, lists = DOMAIN_BLOCKLISTS): Promise<DoctorCheck> {
  return checkListed(
    resolver,
    `domain_blocklist:${domain}`,
    domain,
    lists.map((list) => [`${domain}.${list}`, list]),
    `Request removal of ${domain} at each list (https://check.spamhaus.org/, https://surbl.org/surbl-analysis) after finding what got it listed (links in the mail you send are checked too)`,
  );
}
