// Address fields of a send: `addr`, `Name <addr>`, arrays, and comma-separated strings, parsed
// with nodemailer's RFC 5322 address parser (quoted display names may contain commas).
import addressparser from 'nodemailer/lib/addressparser';

export interface ParsedAddress {
  address: string; // lowercase domain, local part as given
  name: string;
}

// Deliberately practical: one @, no spaces or angle brackets, a dotted domain of valid labels.
const ADDRESS = /^[^\s@<>()",;:\\[\]]+@([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}$/;

export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && ADDRESS.test(value);
}

function normalize(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/** Parses one address field; returns the addresses and the entries that are not addresses. */
export function parseAddressField(value: unknown): { addresses: ParsedAddress[]; invalid: string[] } {
  const entries = Array.isArray(value) ? value : [value];
  const addresses: ParsedAddress[] = [];
  const invalid: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      invalid.push(String(entry));
      continue;
    }
    if (entry.trim() === '') continue;
    const plain = plainAddress(entry);
    if (plain) {
      addresses.push(plain);
      continue;
    }
    for (const parsed of flatten(addressparser(entry) as Parsed[])) {
      const address = parsed.address.trim();
      if (isEmailAddress(address)) addresses.push({ address: normalize(address), name: parsed.name });
      else invalid.push(address && parsed.name ? `${parsed.name} <${address}>` : address || parsed.name || entry.trim());
    }
  }
  return { addresses, invalid };
}

// `addr` or `Plain Name <addr>` (words of letters and digits, one space apart): what nearly every
// request sends, and exactly what addressparser would return for it, without its tokenizer
// (about 8 KB of garbage and a tenth of a send's CPU for one address).
const NAMED = /^([A-Za-z0-9]+(?: [A-Za-z0-9]+)*) <([^<>\s]+)>$/;

function plainAddress(entry: string): ParsedAddress | null {
  if (isEmailAddress(entry)) return { address: normalize(entry), name: '' };
  const named = NAMED.exec(entry);
  return named && isEmailAddress(named[2]) ? { address: normalize(named[2]), name: named[1] } : null;
}

type Parsed = { address: string; name: string; group?: Parsed[] };
function flatten(list: Parsed[]): Parsed[] {
  return list.flatMap((item) => (item.group ? flatten(item.group) : [item]));
}

/** `Name <addr>` or `addr`, as a From or Reply-To header value. */
export function formatAddress(parsed: ParsedAddress): string {
  return parsed.name ? `${parsed.name} <${parsed.address}>` : parsed.address;
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}
