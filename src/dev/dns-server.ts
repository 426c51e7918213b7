// A small authoritative DNS server on loopback (UDP and TCP) for tests and the demo: set records, point
// the app's DNS_SERVERS at it. Unknown names answer NXDOMAIN; `hang(name)` makes a name
// never answer, to exercise timeouts. `sign(zone)` plays a validating resolver for DANE: answers
// for names in that zone carry the AD (Authenticated Data) bit; `fail(name)` answers SERVFAIL.
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import * as packet from 'dns-packet';

export type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'TLSA' | 'PTR';
export interface MxValue {
  exchange: string;
  priority: number;
}
export interface TlsaValue {
  usage: number;
  selector: number;
  matchingType: number;
  data: Buffer;
}
type Value = string | MxValue | string[] | TlsaValue;

export interface TestDnsServer {
  address: string; // ip:port for DNS_SERVERS
  port: number;
  set(name: string, type: RecordType, values: Value[]): void;
  add(name: string, type: RecordType, value: Value): void;
  remove(name: string, type?: RecordType): void;
  hang(name: string): void;
  /** Answers for `zone` and the names below it carry the AD bit (as from a validating resolver); `false` undoes it. */
  sign(zone: string, signed?: boolean): void;
  /** `name` answers SERVFAIL (a validating resolver's answer to a broken signature, say); `false` undoes it. */
  fail(name: string, failing?: boolean): void;
  queries: Array<{ name: string; type: string; authenticated?: boolean }>;
  close(): Promise<void>;
}

function answersFor(records: Map<string, Map<string, Value[]>>, name: string, type: string): packet.Answer[] {
  const byType = records.get(name.toLowerCase());
  const values = byType?.get(type) ?? [];
  return values.map((value) => {
    if (type === 'MX')
      return { type: 'MX', name, ttl: 60, data: { exchange: (value as MxValue).exchange, preference: (value as MxValue).priority } };
    if (type === 'TLSA') {
      const tlsa = value as TlsaValue;
      return {
        type: 'TLSA',
        name,
        ttl: 60,
        data: { usage: tlsa.usage, selector: tlsa.selector, matchingType: tlsa.matchingType, certificate: tlsa.data },
      };
    }
    if (type === 'TXT') {
      // A TXT record is one or more character-strings (each at most 255 bytes): a string[]
      // value is sent as separate strings, a long string is split into 255-byte chunks.
      const parts = Array.isArray(value) ? value : chunk(value as string);
      return { type: 'TXT', name, ttl: 60, data: parts.map((p) => Buffer.from(p)) };
    }
    return { type: type as 'A', name, ttl: 60, data: value as string };
  }) as packet.Answer[];
}

function chunk(text: string): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += 255) parts.push(text.slice(i, i + 255));
  return parts.length ? parts : [''];
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const records = new Map<string, Map<string, Value[]>>();
  const hanging = new Set<string>();
  const signedZones = new Set<string>();
  const failing = new Set<string>();
  const isSigned = (name: string) => {
    const labels = name.toLowerCase().replace(/\.$/, '').split('.');
    return labels.some((_, i) => signedZones.has(labels.slice(i).join('.')));
  };
  const queries: TestDnsServer['queries'] = [];

  function respond(message: Buffer): Buffer | null {
    const query = packet.decode(message);
    const question = query.questions?.[0];
    if (!question) return null;
    // `authenticated`: the query asked for DNSSEC-authenticated data (AD bit), as DANE's lookups do.
    queries.push({
      name: question.name,
      type: question.type,
      ...((query.flags ?? 0) & packet.AUTHENTIC_DATA ? { authenticated: true } : {}),
    });
    if (hanging.has(question.name.toLowerCase())) return null;
    if (failing.has(question.name.toLowerCase())) {
      return packet.encode({
        id: query.id,
        type: 'response',
        flags: ((query.flags ?? 0) & packet.RECURSION_DESIRED) | 2,
        questions: [question],
      }); // rcode 2 = SERVFAIL
    }
    const answers = answersFor(records, question.name, question.type);
    const known = records.has(question.name.toLowerCase());
    const authenticated = isSigned(question.name) ? packet.AUTHENTIC_DATA : 0;
    return packet.encode({
      id: query.id,
      type: 'response',
      flags: packet.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & packet.RECURSION_DESIRED) | authenticated | (known ? 0 : 3), // rcode 3 = NXDOMAIN
      questions: [question],
      answers,
    });
  }

  function answerUdp(udp: Socket) {
    udp.on('message', (message, remote) => {
      try {
        const reply = respond(message);
        if (reply) udp.send(reply, remote.port, remote.address);
      } catch {
        // malformed query: ignore
      }
    });
  }

  // TCP on the same port, for answers too large for UDP.
  const tcp: Server = createServer((socket) => {
    let buffer = Buffer.alloc(0);
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      while (buffer.length >= 2) {
        const length = buffer.readUInt16BE(0);
        if (buffer.length < 2 + length) break;
        const reply = respond(buffer.subarray(2, 2 + length));
        buffer = buffer.subarray(2 + length);
        if (reply) {
          const framed = Buffer.alloc(2 + reply.length);
          framed.writeUInt16BE(reply.length, 0);
          reply.copy(framed, 2);
          socket.write(framed);
        }
      }
    });
    socket.on('error', () => {});
  });

  const { udp, port } = await bindPair(tcp, answerUdp);

  const typesOf = (name: string) => {
    const key = name.toLowerCase();
    let byType = records.get(key);
    if (!byType) records.set(key, (byType = new Map()));
    return byType;
  };
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set: (name, type, values) => void typesOf(name).set(type, [...values]),
    add: (name, type, value) => {
      const byType = typesOf(name);
      byType.set(type, [...(byType.get(type) ?? []), value]);
    },
    remove: (name, type) => {
      if (!type) records.delete(name.toLowerCase());
      else records.get(name.toLowerCase())?.delete(type);
    },
    hang: (name) => void hanging.add(name.toLowerCase()),
    sign: (zone, signed = true) => void (signed ? signedZones.add(zone.toLowerCase()) : signedZones.delete(zone.toLowerCase())),
    fail: (name, fails = true) => void (fails ? failing.add(name.toLowerCase()) : failing.delete(name.toLowerCase())),
    close: () =>
      new Promise<void>((resolve) => {
        udp.close();
        tcp.close(() => resolve());
      }),
  };
}

/** Binds a UDP socket to a free port and `tcp` to the same port number. The port the system
 *  gives the UDP socket may be taken on TCP (an outgoing connection's local port, say), so a
 *  taken port is let go and another one tried; any failure rejects rather than leaving the
 *  caller waiting forever. */
async function bindPair(tcp: Server, setUp: (udp: Socket) => void): Promise<{ udp: Socket; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp = createSocket('udp4');
    setUp(udp);
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => {
        udp.off('error', reject);
        resolve();
      });
    });
    const port = udp.address().port;
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, port };
    } catch (error) {
      udp.close();
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt >= 20) throw error;
    }
  }
}
