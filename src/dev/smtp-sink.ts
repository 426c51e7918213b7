// A "smart sink" SMTP server on loopback for tests and benchmarks: records every envelope and
// raw message, offers STARTTLS (smtp-server's built-in self-signed certificate) or implicit
// TLS, can require AUTH, answers recipients with programmed replies (by default `bounce@…` →
// 550 and `later@…` → 451, plus an optional random share of 4xx/5xx), and counts connections
// so tests can assert reuse and per-destination caps.
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface SinkReply {
  code: number;
  message: string;
}

export interface SinkRule {
  /** A full address, or a local part (`bounce`) matching it on any domain; case-insensitive. */
  match: string;
  /** When the reply is given: at RCPT TO (default) or after DATA. */
  stage?: 'rcpt' | 'data';
  reply: SinkReply;
  /** Apply only this many times, then accept (e.g. a 451 that clears on retry). */
  times?: number;
}

export interface SinkMessage {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
  /** The session used TLS (STARTTLS or implicit). */
  secure: boolean;
  /** EHLO/HELO name the client gave. */
  heloName: string;
  /** The client's address (the source address it connected from). */
  remoteAddress: string;
  connectionId: string;
  user: string | null;
}

export interface SmtpSinkOptions {
  /** Offer STARTTLS (default true). */
  starttls?: boolean;
  /** Implicit TLS from the first byte (smtps://). */
  secure?: boolean;
  /** Require AUTH with these credentials (allowed without TLS). */
  auth?: { user: string; pass: string };
  /** Replace the default rules (`bounce@` → 550, `later@` → 451). */
  rules?: SinkRule[];
  /** A random share of recipients get a 4xx/5xx (benchmarks): e.g. { temporary: 0.05, permanent: 0.01 }. */
  randomFailures?: { temporary?: number; permanent?: number; random?: () => number };
  /** SIZE limit in bytes. */
  size?: number;
  /** Answer every connection with this reply and close (e.g. 554 at the greeting). */
  rejectConnections?: SinkReply;
  /** Extra TLS server options (e.g. ciphers no client accepts, to break STARTTLS). */
  tls?: import('node:tls').TlsOptions;
  /** Loopback address to listen on (127.0.0.x lets two sinks share one port). */
  host?: string;
  port?: number;
  /** Keep raw messages (default true; benchmarks may only count). */
  keepMessages?: boolean;
  /** Behave like a receiver that throttles: more than `perSecond` recipients in any second get `reply` (421 by default). */
  throttle?: { perSecond: number; reply?: SinkReply };
}

export interface SmtpSink {
  host: string;
  port: number;
  messages: SinkMessage[];
  /** Recipients refused, with the reply given. */
  refusals: Array<{ rcpt: string; code: number; stage: 'rcpt' | 'data' }>;
  /** Connections accepted since start (or the last reset). */
  connections: number;
  /** Connections open now, and the most open at once. */
  openConnections: number;
  maxOpenConnections: number;
  /** Messages accepted, also when keepMessages is false. */
  accepted: number;
  /** When each message was accepted (ms), also when keepMessages is false: the rate the sink saw. */
  acceptedAt: number[];
  addRule(rule: SinkRule): void;
  clearRules(): void;
  reset(): void;
  /** Resolves once `count` messages have been accepted. */
  waitForMessages(count: number, timeoutMs?: number): Promise<SinkMessage[]>;
  close(): Promise<void>;
}

export const DEFAULT_SINK_RULES: SinkRule[] = [
  { match: 'bounce', reply: { code: 550, message: '5.1.1 <bounce>: Recipient address rejected: User unknown' } },
  { match: 'later', reply: { code: 451, message: '4.7.1 Greylisted, please try again later' } },
];

function ruleMatches(rule: SinkRule, address: string): boolean {
  const target = rule.match.toLowerCase();
  const lower = address.toLowerCase();
  return target.includes('@') ? lower === target : lower.split('@')[0] === target;
}

function smtpError(reply: SinkReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const rules: SinkRule[] = [...(options.rules ?? DEFAULT_SINK_RULES)];
  const keep = options.keepMessages ?? true;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const random = options.randomFailures?.random ?? Math.random;
  const rcptTimes: number[] = [];

  const sink: SmtpSink = {
    host: options.host ?? '127.0.0.1',
    port: 0,
    messages: [],
    refusals: [],
    connections: 0,
    openConnections: 0,
    maxOpenConnections: 0,
    accepted: 0,
    acceptedAt: [],
    addRule: (rule) => void rules.unshift(rule),
    clearRules: () => void rules.splice(0),
    reset() {
      sink.messages.length = 0;
      sink.refusals.length = 0;
      sink.connections = 0;
      sink.maxOpenConnections = sink.openConnections;
      sink.accepted = 0;
      sink.acceptedAt.length = 0;
    },
    waitForMessages(count, timeoutMs = 10_000) {
      if (sink.accepted >= count) return Promise.resolve(sink.messages);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`sink got ${sink.accepted} of ${count} messages`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(sink.messages)) });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  /** The programmed reply for a recipient at a stage, consuming a `times` count. */
  function replyFor(address: string, stage: 'rcpt' | 'data'): SinkReply | null {
    const index = rules.findIndex((rule) => (rule.stage ?? 'rcpt') === stage && ruleMatches(rule, address));
    if (index >= 0) {
      const rule = rules[index];
      if (rule.times !== undefined && --rule.times <= 0) rules.splice(index, 1);
      return rule.reply;
    }
    if (stage === 'rcpt' && options.randomFailures) {
      const roll = random();
      const permanent = options.randomFailures.permanent ?? 0;
      const temporary = options.randomFailures.temporary ?? 0;
      if (roll < permanent) return { code: 550, message: '5.1.1 Random permanent failure' };
      if (roll < permanent + temporary) return { code: 451, message: '4.3.0 Random temporary failure' };
    }
    return null;
  }

  function refuse(rcpt: string, reply: SinkReply, stage: 'rcpt' | 'data') {
    sink.refusals.push({ rcpt, code: reply.code, stage });
    return smtpError(reply);
  }

  const server = new SMTPServer({
    ...options.tls,
    secure: options.secure ?? false,
    hideSTARTTLS: options.starttls === false,
    disabledCommands: options.auth ? [] : ['AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    size: options.size,
    logger: false,
    banner: 'Postlane test sink',
    closeTimeout: 200, // close() drops clients that are still connected instead of waiting 10 s
    onConnect(_session, callback) {
      sink.connections++;
      sink.openConnections++;
      sink.maxOpenConnections = Math.max(sink.maxOpenConnections, sink.openConnections);
      callback(options.rejectConnections ? smtpError(options.rejectConnections) : undefined);
    },
    onClose() {
      sink.openConnections--;
    },
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) {
        return callback(null, { user: auth.username });
      }
      callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      if (options.throttle) {
        const now = Date.now();
        while (rcptTimes.length && rcptTimes[0] <= now - 1000) rcptTimes.shift();
        if (rcptTimes.length >= options.throttle.perSecond) {
          return callback(
            refuse(address.address, options.throttle.reply ?? { code: 421, message: '4.7.0 Rate limited, try again later' }, 'rcpt'),
          );
        }
        rcptTimes.push(now);
      }
      const reply = replyFor(address.address, 'rcpt');
      callback(reply && reply.code >= 400 ? refuse(address.address, reply, 'rcpt') : undefined);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
          return callback(Object.assign(new Error('5.3.4 Message exceeds the size limit'), { responseCode: 552 }));
        }
        const rcptTo = session.envelope.rcptTo.map((rcpt) => rcpt.address);
        for (const rcpt of rcptTo) {
          const reply = replyFor(rcpt, 'data');
          if (reply && reply.code >= 400) return callback(refuse(rcpt, reply, 'data'));
        }
        sink.accepted++;
        sink.acceptedAt.push(Date.now());
        const message: SinkMessage = {
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo,
          raw: keep ? Buffer.concat(chunks) : Buffer.alloc(0),
          secure: session.secure,
          heloName: session.hostNameAppearsAs,
          remoteAddress: session.remoteAddress,
          connectionId: session.id,
          user: (session.user as string | undefined) ?? null,
        };
        if (keep) sink.messages.push(message);
        for (const waiter of waiters.filter((w) => sink.accepted >= w.count)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
        callback(null, `2.0.0 Ok: queued as ${session.id}`);
      });
    },
  });
  server.on('error', () => {}); // client resets are not test failures
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, sink.host, resolve));
  sink.port = (server.server.address() as { port: number }).port;
  return sink;
}
