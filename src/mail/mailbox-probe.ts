// The mailbox check of `full` verification
// (https://emailit.com/docs/api-reference/email-verifications.md): connect to the domain's MX (in
// preference order, on MX_PORT), EHLO with MAIL_HOSTNAME, MAIL FROM a service address, RCPT TO the
// address and, when it is accepted, to a random address of the same domain (a server that accepts
// that one accepts anything: catch-all), then QUIT. Never DATA: no mail is sent. What the server
// answered is reported as it was (greylisting, timeouts, blocks), never guessed. An MX address that
// is not public (loopback, private, link-local, multicast…: the webhooks' URL guard,
// src/platform/net.ts) is never connected to unless ALLOW_PRIVATE_URLS: a domain's owner must not
// be able to make us open connections inside our own network.
//
// A small SMTP client of our own: nodemailer's SMTPConnection only sends whole messages (no
// RCPT without DATA), and the probe must use our resolver, MX_PORT and the per-MX limiter.
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Resolver } from 'node:dns/promises';
import { classifyReason, isSenderBlock } from './bounce-reasons.ts';
import { resolveAddresses, type MxHost } from './mx.ts';
import { isPrivateAddress } from '../platform/net.ts';

export type MailboxOutcome =
  | 'accepted' // 2xx to RCPT
  | 'rejected' // the mailbox does not exist (550 5.1.1 and the like)
  | 'disabled' // 5.2.1: the mailbox exists but is disabled
  | 'inbox_full' // 4.2.2 / 5.2.2: over quota
  | 'greylisted' // 4xx "try again later" to a first attempt (4.7.1, "greylisted")
  | 'temporary' // another 4xx
  | 'blocked' // a 5xx about us (policy, reputation, rate), not about the mailbox
  | 'timeout' // the server stopped answering
  | 'connection_failed' // no MX host could be reached or none greeted us
  | 'not_checked'; // every MX address is loopback, private or link-local: no connection made

export interface MailboxProbeResult {
  outcome: MailboxOutcome;
  /** A server greeted us (2xx) on some MX host. */
  connected: boolean;
  /** Accepted a random address of the domain too; null when not asked or no clear answer. */
  catchAll: boolean | null;
  mxHost: string | null;
  /** The decisive reply (or null without one). */
  code: number | null;
  enhancedCode: string | null;
  message: string;
}

export interface MailboxProbeOptions {
  resolver: Resolver;
  /** EHLO name (MAIL_HOSTNAME). */
  heloName: string;
  /** The envelope sender, a service address. */
  mailFrom: string;
  /** Port of every MX host (MX_PORT). */
  port: number;
  /** Longest wait for a connection or any reply. */
  timeoutMs: number;
  /** ALLOW_PRIVATE_URLS: connect to MX addresses that are not public (tests, local development). */
  allowPrivate: boolean;
  limiter?: ConnectionLimiter;
  /** MX hosts tried at most (default 3), each at up to two addresses. */
  maxHosts?: number;
}

/** Connections one process opens to one MX address at once, whatever the lists being verified. */
export const MAX_CONNECTIONS_PER_MX = 3;

/** Caps simultaneous connections per key (an MX address); waiters are served first come, first served. */
export class ConnectionLimiter {
  readonly perKey: number;
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  constructor(perKey: number) {
    this.perKey = perKey;
  }

  async acquire(key: string): Promise<() => void> {
    const count = this.active.get(key) ?? 0;
    if (count < this.perKey) this.active.set(key, count + 1);
    else await new Promise<void>((resolve) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), resolve]));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.waiting.get(key);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(key);
      if (next) return next(); // the slot passes on as it is
      const left = (this.active.get(key) ?? 1) - 1;
      if (left > 0) this.active.set(key, left);
      else this.active.delete(key);
    };
  }
}

/** The limiter every probe of this process shares. */
export const mxConnectionLimiter = new ConnectionLimiter(MAX_CONNECTIONS_PER_MX);

const GREYLISTED = /grey-?list|gray-?list|greylisted|try again later/i;
const ENHANCED = /^([245]\.\d{1,3}\.\d{1,3})\b/;

/** What a reply to RCPT TO says about the mailbox. */
export function classifyRcptReply(code: number, text: string): MailboxOutcome {
  if (code >= 200 && code < 300) return 'accepted';
  const enhanced = ENHANCED.exec(text.trim())?.[1] ?? null;
  const temporary = code >= 400 && code < 500;
  if (temporary && (enhanced === '4.7.1' || GREYLISTED.test(text))) {
    // "4.2.2 mailbox full, try again later" is a full mailbox, not greylisting.
    if (classifyReason({ status: enhanced ?? String(code), diagnostic: text, command: 'RCPT' }).reason !== 'mailbox_full')
      return 'greylisted';
  }
  const { reason } = classifyReason({ status: enhanced ?? String(code), diagnostic: text, command: 'RCPT' });
  if (reason === 'mailbox_full') return 'inbox_full';
  if (reason === 'suspended') return 'disabled';
  if (temporary) return 'temporary';
  // qmail's answer for a domain it does not receive mail for: nobody has that address there.
  if (/allowed rcpthosts/i.test(text)) return 'rejected';
  if (isSenderBlock(reason) || reason === 'content_spam') return 'blocked';
  if (reason === 'user_unknown' || reason === 'host_unknown') return 'rejected';
  // A bare 550/551/553 to RCPT is how most servers say "no such user".
  return code === 550 || code === 551 || code === 553 ? 'rejected' : 'blocked';
}

interface Reply {
  code: number;
  text: string;
}

class ProbeTimeout extends Error {}

/** One SMTP conversation: commands out, whole (multi-line) replies in, each awaited with a timeout. */
class SmtpConversation {
  private buffer = '';
  private lines: string[] = [];
  private readonly replies: Reply[] = [];
  private waiter: { resolve(reply: Reply): void; reject(error: Error): void } | null = null;
  private failure: Error | null = null;
  private readonly socket: Socket;
  private readonly timeoutMs: number;

  constructor(socket: Socket, timeoutMs: number) {
    this.socket = socket;
    this.timeoutMs = timeoutMs;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the server closed the connection')));
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > 64 * 1024) return this.fail(new Error('reply too long'));
    let end: number;
    while ((end = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, end).replace(/\r$/, '');
      this.buffer = this.buffer.slice(end + 1);
      this.lines.push(line);
      // "250-…" continues a reply, "250 …" (or a bare code) ends it.
      if (/^\d{3}(?: |$)/.test(line)) {
        const code = Number(line.slice(0, 3));
        const text = this.lines
          .map((l) => l.slice(4))
          .join(' ')
          .trim();
        this.lines = [];
        this.deliver({ code, text });
      }
    }
  }

  private deliver(reply: Reply): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve(reply);
    } else this.replies.push(reply);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    if (this.waiter) {
      const { reject } = this.waiter;
      this.waiter = null;
      reject(this.failure);
    }
  }

  reply(): Promise<Reply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new ProbeTimeout(`no reply within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiter = {
        resolve: (reply) => (clearTimeout(timer), resolve(reply)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      };
    });
  }

  command(line: string): Promise<Reply> {
    if (!this.failure) this.socket.write(`${line}\r\n`);
    return this.reply();
  }
}

function openSocket(address: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ProbeTimeout(`no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

const enhancedOf = (text: string) => ENHANCED.exec(text.trim())?.[1] ?? null;
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 500);

function result(
  outcome: MailboxOutcome,
  connected: boolean,
  mxHost: string | null,
  reply: Reply | null,
  message?: string,
): MailboxProbeResult {
  return {
    outcome,
    connected,
    catchAll: null,
    mxHost,
    code: reply?.code ?? null,
    enhancedCode: reply ? enhancedOf(reply.text) : null,
    message: oneLine(message ?? (reply ? `${reply.code} ${reply.text}` : '')),
  };
}

/** A local part no real mailbox has. */
function randomLocalPart(): string {
  return `postlane-check-${randomBytes(6).toString('hex')}`;
}

/** Addresses asked in one SMTP session at most (RFC 5321 §4.5.3.1.8: servers take 100 recipients). */
export const ADDRESSES_PER_SESSION = 20;

/** Asks the domain's MX hosts about `address`; `hosts` in the order to try them. */
export async function probeMailbox(
  address: string,
  domain: string,
  hosts: MxHost[],
  options: MailboxProbeOptions,
): Promise<MailboxProbeResult> {
  return (await probeMailboxes([address], domain, hosts, options))[0];
}

/**
 * Asks about several addresses of one domain, in sessions of up to ADDRESSES_PER_SESSION (one
 * connection, greeting and MAIL FROM for many RCPTs, one random RCPT for catch-all). Results in
 * the order of `addresses`. A session that breaks after some answers is followed by a new one
 * for the rest; what is left when a server stops answering gets that failure as its result.
 */
export async function probeMailboxes(
  addresses: string[],
  domain: string,
  hosts: MxHost[],
  options: MailboxProbeOptions,
): Promise<MailboxProbeResult[]> {
  const answers = new Map<string, MailboxProbeResult>();
  let pending = [...new Set(addresses)];
  let last: MailboxProbeResult = result('connection_failed', false, null, null, 'no MX host to connect to');
  hosts: for (const host of hosts.slice(0, options.maxHosts ?? 3)) {
    const ips = await resolveAddresses(host.exchange, options.resolver);
    if (ips.kind !== 'addresses') {
      last = result('connection_failed', false, host.exchange, null, ips.reason);
      continue;
    }
    const usable = options.allowPrivate ? ips.addresses : ips.addresses.filter((ip) => !isPrivateAddress(ip));
    if (usable.length === 0) {
      const message = `${host.exchange} resolves to ${ips.addresses.slice(0, 4).join(', ')}, not a public address: not connected to`;
      // A failure met at another host says more than this host's refusal.
      if (last.mxHost === null) last = result('not_checked', false, host.exchange, null, message);
      continue;
    }
    for (const ip of usable.slice(0, 2)) {
      while (pending.length > 0) {
        const session = await probeSession(pending.slice(0, ADDRESSES_PER_SESSION), domain, host.exchange, ip, options);
        for (const [address, answer] of session.answers) answers.set(address, answer);
        pending = pending.filter((address) => !answers.has(address));
        if (session.failure === null) continue;
        last = session.failure;
        // Never greeted: another address or host may do better. Greeted, then silent or gone:
        // a new session for the rest only if this one got somewhere.
        if (!session.failure.connected) break;
        if (session.answers.size === 0) break hosts;
      }
      if (pending.length === 0) break hosts;
    }
  }
  return addresses.map((address) => answers.get(address) ?? { ...last });
}

/** One connection to one MX address; `failure` is why it ended before every address was answered. */
async function probeSession(
  addresses: string[],
  domain: string,
  host: string,
  ip: string,
  options: MailboxProbeOptions,
): Promise<{ answers: Map<string, MailboxProbeResult>; failure: MailboxProbeResult | null }> {
  const answers = new Map<string, MailboxProbeResult>();
  const release = await (options.limiter ?? mxConnectionLimiter).acquire(ip);
  let socket: Socket | null = null;
  let connected = false;
  try {
    try {
      socket = await openSocket(ip, options.port, options.timeoutMs);
    } catch (error) {
      const timedOut = error instanceof ProbeTimeout;
      return {
        answers,
        failure: result(timedOut ? 'timeout' : 'connection_failed', false, host, null, `${host} (${ip}): ${(error as Error).message}`),
      };
    }
    const smtp = new SmtpConversation(socket, options.timeoutMs);
    const greeting = await smtp.reply();
    if (greeting.code !== 220) return { answers, failure: result('connection_failed', false, host, greeting) };
    connected = true;
    let hello = await smtp.command(`EHLO ${options.heloName}`);
    if (hello.code >= 500) hello = await smtp.command(`HELO ${options.heloName}`);
    const refused = hello.code !== 250 ? hello : await smtp.command(`MAIL FROM:<${options.mailFrom}>`);
    if (refused.code >= 300) {
      // Refused before any recipient: the answer for every address of this session.
      for (const address of addresses) answers.set(address, result(refused.code >= 500 ? 'blocked' : 'temporary', true, host, refused));
      return { answers, failure: null };
    }
    let catchAll: boolean | null | undefined;
    for (const address of addresses) {
      const rcpt = await smtp.command(`RCPT TO:<${address}>`);
      // 421: the server is closing the session; this address is still unanswered.
      if (rcpt.code === 421) return { answers, failure: result('temporary', true, host, rcpt) };
      const answer = result(classifyRcptReply(rcpt.code, rcpt.text), true, host, rcpt);
      answers.set(address, answer);
      if (answer.outcome === 'accepted' && catchAll === undefined) {
        // Once per session: a server that takes an address no one has takes anything.
        const other = await smtp.command(`RCPT TO:<${randomLocalPart()}@${domain}>`);
        const otherOutcome = classifyRcptReply(other.code, other.text);
        catchAll = otherOutcome === 'accepted' ? true : otherOutcome === 'rejected' ? false : null;
      }
    }
    for (const answer of answers.values()) {
      if (answer.outcome === 'accepted') answer.catchAll = catchAll ?? null;
      // The server tells mailboxes apart, so it does not accept everything.
      else if (answer.outcome === 'rejected' || answer.outcome === 'disabled' || answer.outcome === 'inbox_full') answer.catchAll = false;
    }
    await smtp.command('QUIT').catch(() => undefined);
    return { answers, failure: null };
  } catch (error) {
    const outcome: MailboxOutcome = error instanceof ProbeTimeout ? 'timeout' : 'connection_failed';
    // An address asked but not answered stays unanswered: its RCPT is what broke the session.
    return { answers, failure: result(outcome, connected, host, null, `${host} (${ip}): ${(error as Error).message}`) };
  } finally {
    socket?.destroy();
    release();
  }
}
