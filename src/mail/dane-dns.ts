// DNSSEC-authenticated lookups for DANE (RFC 7672 §2.1, §2.2). Node's resolver hides the AD
// (Authenticated Data) bit, so these queries are built with dns-packet and sent to the same
// DNS_SERVERS (UDP, TCP when the answer is truncated). Like Postfix with
// `smtp_dns_support_level = dnssec`, we do not validate signatures ourselves: we trust the AD bit
// of the configured resolver, which must therefore validate DNSSEC (a local unbound, say) and be
// reached over a trusted path (loopback). A resolver that does not validate never sets AD, so
// DANE simply never applies.
import { createSocket } from 'node:dgram';
import { connect, isIP } from 'node:net';
import { randomInt } from 'node:crypto';
import * as packet from 'dns-packet';
import { usableTlsa, type TlsaRecord } from './dane.ts';

export interface SecureAnswer {
  /** NOERROR, NXDOMAIN, SERVFAIL, … */
  rcode: string;
  /** The resolver vouches for the answer (AD bit). */
  authenticated: boolean;
  answers: packet.Answer[];
}

/** `1.2.3.4`, `1.2.3.4:5353`, `::1`, `[::1]:5353` (node's getServers() forms) → host and port. */
export function parseServer(server: string): { host: string; port: number } {
  if (isIP(server)) return { host: server, port: 53 };
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  if (bracketed) return { host: bracketed[1], port: Number(bracketed[2] ?? 53) };
  const [host, port] = server.split(':');
  return { host, port: Number(port ?? 53) };
}

function query(name: string, type: string): { id: number; bytes: Buffer } {
  const id = randomInt(0, 65536);
  // AD in the query asks for AD in the answer (RFC 6840 §5.7); DO asks for DNSSEC processing.
  const bytes = packet.encode({
    id,
    type: 'query',
    flags: packet.RECURSION_DESIRED | packet.AUTHENTIC_DATA,
    questions: [{ name, type: type as 'A' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: packet.DNSSEC_OK } as packet.Answer],
  });
  return { id, bytes };
}

function overUdp(server: { host: string; port: number }, bytes: Buffer, id: number, timeoutMs: number): Promise<packet.Packet> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    const timer = setTimeout(() => finish(new Error('DNS query timed out')), timeoutMs);
    const finish = (error: Error | null, answer?: packet.Packet) => {
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(answer!);
    };
    socket.on('error', (error) => finish(error));
    socket.on('message', (message) => {
      try {
        const answer = packet.decode(message);
        if (answer.id === id) finish(null, answer); // others are strays or spoofing attempts
      } catch {
        // not DNS: keep waiting
      }
    });
    socket.send(bytes, server.port, server.host);
  });
}

function overTcp(server: { host: string; port: number }, bytes: Buffer, id: number, timeoutMs: number): Promise<packet.Packet> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    let buffer = Buffer.alloc(0);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('DNS query timed out')));
    socket.on('error', reject);
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes])));
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      if (buffer.length < 2 || buffer.length < 2 + buffer.readUInt16BE(0)) return;
      socket.end();
      try {
        const answer = packet.decode(buffer.subarray(2, 2 + buffer.readUInt16BE(0)));
        if (answer.id === id) resolve(answer);
        else reject(new Error('DNS answer for another query'));
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

/** Asks each server in turn; a server that times out or answers SERVFAIL gives way to the next. Throws when none answers. */
export async function querySecure(servers: string[], name: string, type: string, timeoutMs: number): Promise<SecureAnswer> {
  let last: SecureAnswer | null = null;
  let failure: unknown = null;
  for (const server of servers.map(parseServer)) {
    try {
      const { id, bytes } = query(name, type);
      let answer = await overUdp(server, bytes, id, timeoutMs);
      if ((answer.flags ?? 0) & packet.TRUNCATED_RESPONSE) answer = await overTcp(server, bytes, id, timeoutMs);
      const result: SecureAnswer = {
        rcode: (answer as packet.Packet & { rcode?: string }).rcode ?? 'NOERROR',
        authenticated: Boolean((answer.flags ?? 0) & packet.AUTHENTIC_DATA),
        answers: (answer.answers ?? []).filter((record) => record.type === type),
      };
      if (result.rcode !== 'SERVFAIL') return result;
      last = result;
    } catch (error) {
      failure = error;
    }
  }
  if (last) return last;
  throw failure ?? new Error('no DNS server configured');
}

export type TlsaLookup =
  /** No DANE for this host: insecure MX or address, no TLSA records, or an unauthenticated answer. */
  | { kind: 'none'; why: string }
  /** Authenticated TLSA records, at least one usable: STARTTLS required, certificate must match. */
  | { kind: 'dane'; records: TlsaRecord[] }
  /** Authenticated TLSA records, none usable: STARTTLS required, not authenticated (RFC 7672 §2.2). */
  | { kind: 'unusable' }
  /** The lookup failed in a signed zone: do not deliver to this host now (RFC 7672 §2.1.1). */
  | { kind: 'temporary'; reason: string };

export interface DaneLookupOptions {
  /** DNS servers in node's getServers() form (those of DNS_SERVERS). */
  servers: string[];
  timeoutMs?: number;
  /** How long answers are reused (default 60 s; 0 asks every time). */
  cacheMs?: number;
}

/** DANE lookups with a short cache; never throws. */
export class DaneLookup {
  private readonly options: Required<DaneLookupOptions>;
  private readonly cache = new Map<string, { expires: number; value: Promise<unknown> }>();

  constructor(options: DaneLookupOptions) {
    this.options = { servers: options.servers, timeoutMs: options.timeoutMs ?? 5000, cacheMs: options.cacheMs ?? 60_000 };
  }

  /** Whether the MX RRset of `domain` (or its absence: implicit MX) is authenticated. Only then can DANE apply. */
  mxSecure(domain: string): Promise<boolean> {
    return this.cached(
      `mx|${domain}`,
      async () => {
        try {
          const answer = await querySecure(this.options.servers, domain, 'MX', this.options.timeoutMs);
          return answer.authenticated && answer.rcode === 'NOERROR';
        } catch {
          return false; // the delivery's own MX lookup decides what a DNS failure means
        }
      },
      () => true,
    );
  }

  /** The TLSA records of `host` on `port` (`_25._tcp.<host>`), when its address and TLSA answers are authenticated. */
  tlsaFor(host: string, port: number): Promise<TlsaLookup> {
    return this.cached(
      `tlsa|${host}|${port}`,
      () => this.lookUp(host, port),
      (value) => value.kind !== 'temporary',
    );
  }

  private async lookUp(host: string, port: number): Promise<TlsaLookup> {
    const { servers, timeoutMs } = this.options;
    // TLSA records are only looked up for a host whose address records are secure (RFC 7672 §2.2.2).
    try {
      let address = await querySecure(servers, host, 'A', timeoutMs);
      if (address.rcode === 'NOERROR' && address.answers.length === 0) address = await querySecure(servers, host, 'AAAA', timeoutMs);
      if (address.rcode === 'SERVFAIL') return { kind: 'temporary', reason: `DNS address lookup for ${host} failed: SERVFAIL` };
      if (!address.authenticated) return { kind: 'none', why: 'insecure address records' };
    } catch (error) {
      return { kind: 'temporary', reason: `DNS address lookup for ${host} failed: ${(error as Error).message}` };
    }
    const name = `_${port}._tcp.${host}`;
    let answer: SecureAnswer;
    try {
      answer = await querySecure(servers, name, 'TLSA', timeoutMs);
    } catch (error) {
      return { kind: 'temporary', reason: `DANE: TLSA lookup for ${name} failed: ${(error as Error).message}` };
    }
    if (answer.rcode === 'SERVFAIL') return { kind: 'temporary', reason: `DANE: TLSA lookup for ${name} failed: SERVFAIL` };
    if (answer.rcode !== 'NOERROR' || answer.answers.length === 0) return { kind: 'none', why: 'no TLSA records' };
    if (!answer.authenticated) return { kind: 'none', why: 'unauthenticated TLSA answer' };
    const records = answer.answers.map((record) => {
      const data = (record as packet.TlsaAnswer).data as { usage: number; selector: number; matchingType: number; certificate: Buffer };
      return { usage: data.usage, selector: data.selector, matchingType: data.matchingType, data: data.certificate };
    });
    return usableTlsa(records).length > 0 ? { kind: 'dane', records } : { kind: 'unusable' };
  }

  private cached<T>(key: string, load: () => Promise<T>, keep: (value: T) => boolean): Promise<T> {
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) return hit.value as Promise<T>;
    if (this.options.cacheMs <= 0) return load();
    if (this.cache.size >= 10_000) this.cache.clear();
    const value = load().then((result) => {
      if (!keep(result)) this.cache.delete(key);
      return result;
    });
    this.cache.set(key, { expires: now + this.options.cacheMs, value });
    return value;
  }
}
