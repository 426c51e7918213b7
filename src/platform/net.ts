// Outbound HTTP to URLs that users give us (webhook endpoints, attachment URLs), safe against
// server-side request forgery:
// - the hostname is resolved through our resolver (DNS_SERVERS), and every address it resolves
//   to is checked: loopback, private, link-local, shared, multicast and reserved ranges are
//   refused unless ALLOW_PRIVATE_URLS;
// - the connection is then made to the address that was checked (the socket's lookup is
//   pinned), with the URL's name in the Host header and TLS SNI, so a second, different DNS
//   answer (DNS rebinding) can never redirect the request;
// - redirects are never followed (a 3xx is returned as it is), time and size are capped.
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { Resolver } from 'node:dns/promises';
import { isNoRecords } from './dns.ts';

// ---------------------------------------------------------------------------------------
// Address classification

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (with an optional embedded dotted IPv4 tail). */
export function ipv6Bytes(address: string): number[] | null {
  let text = address.split('%')[0].toLowerCase();
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    tail.push(...v4[1].split('.').map(Number));
    text = text.slice(0, -v4[1].length) + '0:0';
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - rest.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const all = [...head, ...Array(fill).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const group of all) {
    const value = parseInt(group, 16);
    if (!/^[0-9a-f]{1,4}$/.test(group) || Number.isNaN(value)) return null;
    bytes.push(value >> 8, value & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  if (!b) return null;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), 64:ff9b::a.b.c.d (NAT64)
  const mapped = zero(0, 10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0));
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12);
  if (mapped || nat64) return b.slice(12, 16).join('.');
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.'); // 2002:aabb:ccdd::/48 (6to4)
  return null;
}

/** True for any address that is not a public unicast address (or not an IP at all). */
export function isPrivateAddress(ip: string): boolean {
  const address = ip.replace(/^\[|\]$/g, '');
  const family = isIP(address.split('%')[0]);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner !== null && blocked.check(inner, 'ipv4')) return true;
    return blocked.check(address.split('%')[0], 'ipv6');
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Resolution

export type UrlRefusal = 'invalid' | 'unresolvable' | 'private';

/** A URL that may not be fetched, with a message fit for an API error. */
export class UrlRefusedError extends Error {
  readonly reason: UrlRefusal;
  constructor(reason: UrlRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Every A and AAAA address of `hostname` through `resolver` (no records: an empty list). */
async function resolveAll(resolver: Resolver, hostname: string): Promise<ResolvedAddress[]> {
  const lookups = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
  const found: ResolvedAddress[] = [];
  let failure: unknown = null;
  lookups.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') for (const address of outcome.value) found.push({ address, family: i === 0 ? 4 : 6 });
    else if (!isNoRecords(outcome.reason)) failure = outcome.reason;
  });
  if (found.length === 0 && failure) {
    const code = (failure as { code?: string }).code ?? 'error';
    throw new UrlRefusedError('unresolvable', `The hostname ${hostname} could not be resolved (${code})`);
  }
  return found;
}

/**
 * Resolves a URL's hostname (or takes an IP literal) and returns the address to connect to.
 * Refused when it does not resolve, or, unless `allowPrivate`, when ANY of its addresses is
 * not public (a name with one public and one private address could otherwise be used to
 * reach the private one).
 */
export async function resolvePublicAddress(resolver: Resolver, hostname: string, allowPrivate: boolean): Promise<ResolvedAddress> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  if (literal) {
    if (!allowPrivate && isPrivateAddress(host)) throw new UrlRefusedError('private', `The address ${host} is not a public address`);
    return { address: host, family: literal as 4 | 6 };
  }
  if (isLocalhostName(host)) {
    if (!allowPrivate) throw new UrlRefusedError('private', `The hostname ${host} is not a public host`);
    return { address: '127.0.0.1', family: 4 };
  }
  const addresses = await resolveAll(resolver, host);
  if (addresses.length === 0) throw new UrlRefusedError('unresolvable', `The hostname ${host} does not resolve to any address`);
  if (!allowPrivate) {
    const inside = addresses.find((a) => isPrivateAddress(a.address));
    if (inside) throw new UrlRefusedError('private', `The hostname ${host} resolves to ${inside.address}, which is not a public address`);
  }
  return addresses.find((a) => a.family === 4) ?? addresses[0];
}

/** Parses a user-given http(s) URL; refuses other schemes and missing hosts. */
export function parseHttpUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UrlRefusedError('invalid', 'The URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefusedError('invalid', 'The URL must use http or https');
  if (!url.hostname) throw new UrlRefusedError('invalid', 'The URL must have a hostname');
  return url;
}

// ---------------------------------------------------------------------------------------
// Pinned HTTP

export type FetchFailure = 'timeout' | 'connection' | 'tls' | 'too_large' | 'protocol';

export class FetchError extends Error {
  readonly kind: FetchFailure;
  readonly code: string | undefined;
  constructor(kind: FetchFailure, message: string, code?: string) {
    super(message);
    this.kind = kind;
    this.code = code;
  }
}

export interface FetchPinnedOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole exchange, connect to last body byte (default 30 s). */
  timeoutMs?: number;
  /** Largest response body read (default 25 MB). */
  maxBytes?: number;
  /** true: keep the first maxBytes and stop reading; false (default): fail with `too_large`. */
  truncate?: boolean;
}

export interface PinnedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  durationMs: number;
}

// Connections are kept alive per host: webhook batches to one endpoint reuse their socket.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/;

function describe(error: NodeJS.ErrnoException): FetchError {
  if (error instanceof FetchError) return error;
  const code = error.code ?? '';
  if (TLS_CODES.test(code) || /certificate|SSL|TLS/i.test(error.message)) return new FetchError('tls', `TLS error: ${error.message}`, code);
  if (code === 'HPE_INVALID_CONSTANT' || code.startsWith('HPE_'))
    return new FetchError('protocol', `Invalid HTTP response: ${error.message}`, code);
  const text: Record<string, string> = {
    ECONNREFUSED: 'Connection refused',
    ECONNRESET: 'Connection reset by peer',
    EHOSTUNREACH: 'Host unreachable',
    ENETUNREACH: 'Network unreachable',
    ETIMEDOUT: 'Connection timed out',
    EPIPE: 'Connection closed while sending',
  };
  return new FetchError('connection', text[code] ?? error.message, code || undefined);
}

function once(
  url: URL,
  target: ResolvedAddress,
  options: FetchPinnedOptions,
  deadline: number,
  fresh: boolean,
): Promise<PinnedResponse & { reused: boolean }> {
  const started = performance.now();
  const maxBytes = options.maxBytes ?? 25 * 1024 * 1024;
  const transport = url.protocol === 'https:' ? https : http;
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    let settled = false;
    let reused = false;
    const finish = (error: Error | null, value?: PinnedResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(Object.assign(describe(error as NodeJS.ErrnoException), { reused }));
      else resolve({ ...value!, reused });
    };
    const request = transport.request({
      protocol: url.protocol,
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: options.method ?? 'GET',
      headers,
      auth: url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
      agent: fresh ? false : agents[url.protocol as 'http:' | 'https:'],
      // The connection goes to the address that was checked, whatever DNS says now.
      lookup: (_hostname, lookupOptions, callback) => {
        if ((lookupOptions as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
        else (callback as (e: null, a: string, f: number) => void)(null, target.address, target.family);
      },
    });
    const timer = setTimeout(
      () => {
        finish(new FetchError('timeout', `No complete response within ${Math.round((options.timeoutMs ?? 30_000) / 1000)} seconds`));
        request.destroy();
      },
      Math.max(0, deadline - performance.now()),
    );
    request.on('socket', () => (reused = request.reusedSocket));
    request.on('error', (error) => finish(error));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const done = () =>
        finish(null, {
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          truncated,
          durationMs: Math.round(performance.now() - started),
        });
      response.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (size + chunk.length > maxBytes) {
          if (!options.truncate) {
            finish(new FetchError('too_large', `The response is larger than ${maxBytes} bytes`));
            request.destroy();
            return;
          }
          chunks.push(chunk.subarray(0, maxBytes - size));
          size = maxBytes;
          truncated = true;
          done();
          request.destroy();
          return;
        }
        size += chunk.length;
        chunks.push(chunk);
      });
      response.on('end', done);
      response.on('error', (error) => finish(error));
      response.on('close', () => {
        if (!response.complete) finish(new FetchError('connection', 'The connection closed before the response was complete'));
      });
    });
    request.end(body);
  });
}

/**
 * One HTTP request to `url`, connecting to `address` (from resolvePublicAddress) with the
 * URL's hostname as Host and TLS server name. Redirects are returned, never followed.
 * A request that fails on a kept-alive socket the server had just closed is sent again
 * once on a fresh connection (the usual keep-alive race), within the same time limit.
 */
export async function fetchPinned(url: URL | string, address: ResolvedAddress, options: FetchPinnedOptions = {}): Promise<PinnedResponse> {
  const target = typeof url === 'string' ? parseHttpUrl(url) : url;
  const started = performance.now();
  const deadline = started + (options.timeoutMs ?? 30_000);
  try {
    return strip(await once(target, address, options, deadline, false));
  } catch (error) {
    const e = error as FetchError & { reused?: boolean };
    const stale = e.reused && (e.code === 'ECONNRESET' || e.code === 'EPIPE' || /socket hang up/i.test(e.message));
    if (!stale || performance.now() >= deadline) throw error;
    const response = strip(await once(target, address, options, deadline, true));
    return { ...response, durationMs: Math.round(performance.now() - started) };
  }
}

function strip({ reused: _reused, ...response }: PinnedResponse & { reused: boolean }): PinnedResponse {
  return response;
}
