// IP address → country and network (autonomous system), offline, from the CSV range files of
// two npm packages of the ip-location-db project (https://github.com/sapics/ip-location-db):
// `@ip-location-db/geo-whois-asn-country` (country, CC0) and `@ip-location-db/asn` (AS number
// and organization, CC BY 4.0: RouteViews, DB-IP, NRO). The data is updated by bumping their
// versions in package.json (docs/operations.md).
//
// Each file (one per dataset and address family) is read on its first lookup only, into sorted
// typed arrays (start, end, value; IPv6 as four 32-bit words), and searched by bisection: a few
// MB per table instead of objects per row, and a process that never asks never pays for it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import { isPrivateAddress } from './net.ts';

export interface Network {
  /** The autonomous system number. */
  asn: number;
  /** The organization that holds it, as the database names it. */
  organization: string;
}

const require = createRequire(import.meta.url);

/** The path of `file` inside the installed package `name`. */
function packageFile(name: string, file: string): string {
  return join(dirname(require.resolve(`${name}/package.json`)), file);
}

/** A copy of a string that does not keep the whole file's text alive (V8 slices point into it). */
const detached = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

/** A CSV field starting at `from` (a quoted one may hold commas and doubled quotes). */
function fieldAt(line: string, from: number): string {
  if (line[from] !== '"') {
    const comma = line.indexOf(',', from);
    return line.slice(from, comma === -1 ? line.length : comma);
  }
  const close = line.lastIndexOf('"');
  return line.slice(from + 1, close > from ? close : line.length).replaceAll('""', '"');
}

/** Ranges sorted by start, each with a value (an index or a number the caller gives meaning). */
interface Table {
  /** The value of the range holding the address, or -1. */
  find(address: Address): number;
}

type Address = { family: 4; value: number } | { family: 6; words: Uint32Array };

/**
 * Reads a range file of one family: each line `start,end,rest` (IPv4 as decimal numbers, from
 * the `-num.csv` files; IPv6 as text), with `valueOf(line, restAt)` turning the rest into the
 * range's value.
 */
function buildTable(path: string, family: 4 | 6, valueOf: (line: string, restAt: number) => number): Table {
  const text = readFileSync(path, 'utf8');
  const width = family === 4 ? 1 : 4; // IPv6 as four 32-bit words, most significant first
  let capacity = 1 << 16;
  let starts = new Uint32Array(capacity * width);
  let ends = new Uint32Array(capacity * width);
  let values = new Int32Array(capacity);
  let count = 0;
  const words = new Uint32Array(4);
  for (let at = 0; at < text.length; ) {
    let lineEnd = text.indexOf('\n', at);
    if (lineEnd === -1) lineEnd = text.length;
    const line = text.slice(at, text.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd);
    at = lineEnd + 1;
    const c1 = line.indexOf(',');
    const c2 = line.indexOf(',', c1 + 1);
    if (c1 <= 0 || c2 <= c1) continue;
    if (count === capacity) {
      capacity *= 2;
      starts = grow(starts, capacity * width);
      ends = grow(ends, capacity * width);
      values = grow(values, capacity);
    }
    if (family === 4) {
      starts[count] = Number(line.slice(0, c1));
      ends[count] = Number(line.slice(c1 + 1, c2));
    } else {
      if (!ipv6Words(line.slice(0, c1), words)) continue;
      starts.set(words, count * 4);
      if (!ipv6Words(line.slice(c1 + 1, c2), words)) continue;
      ends.set(words, count * 4);
    }
    values[count++] = valueOf(line, c2 + 1);
  }
  // Down to size: the doubling above leaves up to half of each array unused.
  starts = starts.slice(0, count * width);
  ends = ends.slice(0, count * width);
  values = values.slice(0, count);
  const compare = (table: Uint32Array, i: number, address: Address): number => {
    if (address.family === 4) return table[i] - address.value;
    for (let w = 0; w < 4; w++) {
      const diff = table[i * 4 + w] - address.words[w];
      if (diff !== 0) return diff;
    }
    return 0;
  };
  return {
    find(address) {
      // The last range starting at or below the address, if it also ends at or above it.
      let low = 0;
      let high = count - 1;
      let found = -1;
      while (low <= high) {
        const mid = (low + high) >>> 1;
        if (compare(starts, mid, address) <= 0) {
          found = mid;
          low = mid + 1;
        } else {
          high = mid - 1;
        }
      }
      return found !== -1 && compare(ends, found, address) >= 0 ? values[found] : -1;
    },
  };
}

function grow<T extends Uint32Array | Int32Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (n: number) => T)(length);
  bigger.set(array);
  return bigger;
}

function lazyTable(load: () => Table): () => Table {
  let table: Table | undefined;
  return () => (table ??= load());
}

// Countries: the value is an index into the codes seen.
const countryCodes: string[] = [];
const countryIndex = new Map<string, number>();
function countryValue(line: string, restAt: number): number {
  const code = fieldAt(line, restAt);
  let index = countryIndex.get(code);
  if (index === undefined) {
    index = countryCodes.push(detached(code)) - 1;
    countryIndex.set(code, index);
  }
  return index;
}

// Networks: the value is the AS number; its organization is kept once per AS.
const organizations = new Map<number, string>();
function networkValue(line: string, restAt: number): number {
  const comma = line.indexOf(',', restAt);
  const asn = Number(line.slice(restAt, comma === -1 ? line.length : comma));
  if (!organizations.has(asn)) organizations.set(asn, comma === -1 ? '' : detached(fieldAt(line, comma + 1)));
  return asn;
}

const COUNTRY = '@ip-location-db/geo-whois-asn-country';
const ASN = '@ip-location-db/asn';
const countries = {
  4: lazyTable(() => buildTable(packageFile(COUNTRY, 'geo-whois-asn-country-ipv4-num.csv'), 4, countryValue)),
  6: lazyTable(() => buildTable(packageFile(COUNTRY, 'geo-whois-asn-country-ipv6.csv'), 6, countryValue)),
};
const networks = {
  4: lazyTable(() => buildTable(packageFile(ASN, 'asn-ipv4-num.csv'), 4, networkValue)),
  6: lazyTable(() => buildTable(packageFile(ASN, 'asn-ipv6.csv'), 6, networkValue)),
};

/** An address as its family and number (IPv4 also for IPv4-mapped IPv6), or null if it is none
 *  or not a public one: the data places some private and documentation ranges in countries. */
function parseAddress(ip: string): Address | null {
  const address = ip.trim().replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 0 || isPrivateAddress(address)) return null;
  if (family === 4) return { family: 4, value: ipv4Number(address) };
  if (family !== 6) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { family: 4, value: ipv4Number(mapped[1]) };
  const words = new Uint32Array(4);
  return ipv6Words(address, words) ? { family: 6, words } : null;
}

function ipv4Number(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const groups = new Array<number>(8);

/** Writes a textual IPv6 address into four 32-bit words; false if it is not one. */
function ipv6Words(address: string, out: Uint32Array): boolean {
  let text = address;
  // A dotted IPv4 tail (`::1.2.3.4`, `64:ff9b::1.2.3.4`) is the last two groups.
  const tail = text.includes('.') ? /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text) : null;
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number);
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const gap = text.indexOf('::');
  const head = gap === -1 ? text : text.slice(0, gap);
  const rest = gap === -1 ? '' : text.slice(gap + 2);
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  if (headGroups.length + restGroups.length > 8 || (gap === -1 && headGroups.length !== 8)) return false;
  groups.fill(0);
  for (let i = 0; i < headGroups.length; i++) groups[i] = parseInt(headGroups[i], 16);
  for (let i = 0; i < restGroups.length; i++) groups[8 - restGroups.length + i] = parseInt(restGroups[i], 16);
  for (let g = 0; g < 8; g++) if (!(groups[g] >= 0 && groups[g] <= 0xffff)) return false; // NaN fails too
  for (let w = 0; w < 4; w++) out[w] = ((groups[w * 2] << 16) | groups[w * 2 + 1]) >>> 0;
  return true;
}

/** The country (ISO 3166-1 alpha-2, upper case) the address is registered or located in; null
 *  for a private or reserved address, one in no range, or no address at all. */
export function countryOf(ip: string): string | null {
  const address = parseAddress(ip);
  if (!address) return null;
  const index = countries[address.family]().find(address);
  return index === -1 ? null : countryCodes[index];
}

/** The autonomous system that announces the address, or null. */
export function networkOf(ip: string): Network | null {
  const address = parseAddress(ip);
  if (!address) return null;
  const asn = networks[address.family]().find(address);
  return asn === -1 ? null : { asn, organization: organizations.get(asn) ?? '' };
}
