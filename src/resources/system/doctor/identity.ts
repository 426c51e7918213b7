// The sending host's identity as receivers check it: MAIL_HOSTNAME resolves to the addresses
// mail leaves from, and each address's PTR names MAIL_HOSTNAME back (forward-confirmed reverse
// DNS). Gmail, Microsoft and Yahoo refuse or junk mail from an address without it.
import type { Resolver } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { isNoRecords } from '../../../platform/dns.ts';
import { isPrivateAddress } from '../../../platform/net.ts';
import { fail, pass, skip, warn, type DoctorCheck } from './types.ts';

const sameName = (a: string, b: string) => a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');

/** The public addresses of this host's network interfaces. */
export function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((item) => item && !item.internal && !isPrivateAddress(item.address.replace(/%.*$/, '')))
    .map((item) => item!.address);
}

async function addressesOf(resolver: Resolver, hostname: string): Promise<{ addresses: string[]; error: string | null }> {
  const results = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
  const addresses = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
  const failures = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected' && !isNoRecords(result.reason));
  return {
    addresses,
    error: failures.length > 0 && addresses.length === 0 ? String(failures[0].reason?.code ?? failures[0].reason) : null,
  };
}

export interface IdentityResult {
  checks: DoctorCheck[];
  /** The addresses mail leaves from, as far as the doctor could tell (for the blocklist and SPF checks). */
  sendingAddresses: string[];
}

export async function checkIdentity(
  resolver: Resolver,
  hostname: string,
  configured: string[],
  smarthost: boolean,
): Promise<IdentityResult> {
  const own = configured.length > 0 ? configured : interfaceAddresses();
  const source = configured.length > 0 ? 'PUBLIC_ADDRESSES' : 'the network interfaces';
  const forward = await addressesOf(resolver, hostname);
  const checks: DoctorCheck[] = [];
  if (forward.error) {
    checks.push(
      warn(
        'forward_dns',
        `The A/AAAA lookup of ${hostname} failed (${forward.error})`,
        "Check DNS_SERVERS and that the name's DNS servers answer; then run the doctor again",
      ),
    );
    return { checks, sendingAddresses: own };
  }
  if (forward.addresses.length === 0) {
    checks.push(
      fail(
        'forward_dns',
        `${hostname} has no A or AAAA record`,
        `Publish an A record (and AAAA if the host sends over IPv6): ${hostname} → this server's public address`,
      ),
    );
    return { checks, sendingAddresses: own };
  }
  const sending = own.length > 0 ? own : forward.addresses;
  if (own.length === 0) {
    checks.push(
      warn(
        'forward_dns',
        `${hostname} resolves to ${forward.addresses.join(', ')}; this host's public address could not be told from its interfaces (behind NAT?)`,
        'Set PUBLIC_ADDRESSES to the address(es) mail leaves from, so the doctor can compare them with DNS',
      ),
    );
  } else {
    const missingFromDns = own.filter((address) => !forward.addresses.includes(address));
    if (missingFromDns.length > 0) {
      checks.push(
        fail(
          'forward_dns',
          `${hostname} resolves to ${forward.addresses.join(', ')}, not to ${missingFromDns.join(', ')} (this host's public address per ${source})`,
          `Point the A/AAAA records of ${hostname} at ${own.join(', ')}, or set PUBLIC_ADDRESSES to the addresses mail really leaves from`,
        ),
      );
    } else {
      checks.push(pass('forward_dns', `${hostname} resolves to ${forward.addresses.join(', ')}`));
    }
  }
  if (smarthost) {
    checks.push(skip('reverse_dns', "Mail is relayed through SMARTHOST_URL; the relay's reverse DNS is what receivers see"));
    return { checks, sendingAddresses: [] };
  }
  for (const address of sending) checks.push(await checkPtr(resolver, hostname, address));
  return { checks, sendingAddresses: sending };
}

async function checkPtr(resolver: Resolver, hostname: string, address: string): Promise<DoctorCheck> {
  const id = `reverse_dns:${address}`;
  const fixPtr = `Ask the owner of ${address} (your hosting provider: the "reverse DNS" or "PTR" setting of the server) to set its PTR record to ${hostname}`;
  let names: string[];
  try {
    names = await resolver.reverse(address);
  } catch (error) {
    if (!isNoRecords(error))
      return warn(
        id,
        `The PTR lookup of ${address} failed (${(error as { code?: string }).code ?? error})`,
        'Check DNS_SERVERS; then run the doctor again',
      );
    names = [];
  }
  if (names.length === 0)
    return fail(
      id,
      `${address} has no PTR record; receivers such as Gmail and Outlook refuse mail from addresses without reverse DNS`,
      fixPtr,
    );
  if (!names.some((name) => sameName(name, hostname))) {
    return fail(id, `The PTR record of ${address} names ${names.join(', ')}, not ${hostname}`, fixPtr);
  }
  const back = await addressesOf(resolver, hostname);
  if (!back.addresses.includes(address))
    return fail(
      id,
      `The PTR of ${address} names ${hostname}, but ${hostname} does not resolve back to ${address}`,
      `Add ${address} to the A/AAAA records of ${hostname}`,
    );
  return pass(id, `${address} → ${hostname} → ${address} (forward-confirmed reverse DNS)`);
}
