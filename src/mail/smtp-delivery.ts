// Hands one signed message for one recipient to the next hop: the recipient domain's MX hosts
// (preference order, on MX_PORT, opportunistic STARTTLS) or the SMARTHOST_URL relay. Connections
// are pooled per destination address (nodemailer's pooled SMTP transport: reuse, idle close,
// requeue when a reused connection turns out to be dead) with a per-destination connection
// cap. DNS goes through our resolver and nodemailer connects to the resolved IP.
//
// Outcomes: 2xx → delivered; 5xx → permanent (the recipient's server refused for good); 4xx,
// network errors, timeouts, DNS failures → temporary (retry later). Temporary and connection
// failures move on to the next address / MX host first.
//
// Transport security: DANE (RFC 7672, src/mail/dane*.ts) for MX hosts with authenticated TLSA
// records, else MTA-STS `enforce` (RFC 8461, src/mail/mta-sts.ts), else opportunistic STARTTLS.
// A hop that policy says must be secured is never retried in the clear.
//
// IP pools (src/mail/ip-pools.ts): a message that names a configured pool leaves from one of its
// addresses (the least used, of the destination address's family), with that address's HELO
// name; connections and traffic shaping are kept per source address.
import { classifyReason, isSenderBlock, type BounceReason } from './bounce-reasons.ts';
import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';
import { createResolver } from '../platform/dns.ts';
import { orderMxHosts, resolveAddresses, resolveMx, type MxOptions } from './mx.ts';
import { feedbackOf, type Priority, type TrafficShaper } from './shaping.ts';
import { MtaSts } from './mta-sts.ts';
import { DaneLookup } from './dane-dns.ts';
import { daneConnect } from './dane-connect.ts';
import type { TlsaRecord } from './dane.ts';
import { createHash } from 'node:crypto';
import { sendRaw } from './raw-send.ts';
import { NO_POOLS, SourcePicker, type IpPools, type PoolAddress } from './ip-pools.ts';

export type DeliveryKind = 'delivered' | 'temporary' | 'permanent';

export interface HostAttempt {
  kind: DeliveryKind;
  /** SMTP reply code, null for network / DNS failures. */
  code: number | null;
  /** RFC 3463 code from the reply (e.g. 5.1.1), or ours for failures without a reply. */
  enhancedCode: string | null;
  response: string;
  /** MX (or smarthost) host name; null when DNS failed before any host was known. */
  mxHost: string | null;
  /** IP address connected to. */
  address: string | null;
  /** The documented reason of a rejection or failure (bounce-reasons.ts); null when delivered. */
  reason?: BounceReason | null;
  /** How the session was protected: dane | mta-sts | tls | opportunistic | none; null without a session. */
  tls?: string | null;
  /** The SMTP command the reply answered (RCPT, DATA, MAIL…), when there was a reply. */
  command?: string | null;
  /** Local source address the connection was bound to (IP pools); null/absent: chosen by the OS. */
  source?: string | null;
}

export interface DeliveryOutcome extends HostAttempt {
  /** Every host tried, in order; the outcome is the decisive one. */
  attempts: HostAttempt[];
  /** Not tried at all: the destination had no slot within the wait (traffic shaping); retry soon, it is no attempt. */
  deferredUntilMs?: number;
}

export interface OutboundMessage {
  /** Envelope sender (MAIL FROM), e.g. the VERP address; '' for the null sender. */
  from: string;
  /** One recipient (RCPT TO). */
  to: string;
  /** Signed RFC 5322 message. */
  raw: Buffer;
  /** Transactional mail is served before bulk mail within a destination's allowance. */
  priority?: Priority;
  /** IP pool the message leaves from (ip-pools.ts); null, absent or unknown: the OS chooses. */
  pool?: string | null;
}

export interface SmtpDeliveryOptions {
  resolver: Resolver;
  /** EHLO name (MAIL_HOSTNAME). */
  heloName: string;
  /** Port of every MX host (MX_PORT). */
  mxPort?: number;
  /** `smtp://user:pass@host:port` or `smtps://…`; `?tls.rejectUnauthorized=false` accepts any certificate. */
  smarthostUrl?: string | null;
  /** Open connections per destination address at most (default 5). */
  maxConnectionsPerDestination?: number;
  /** Messages per connection before it is replaced (default 100). */
  maxMessagesPerConnection?: number;
  /** An unused connection is closed after this long (default 10 s). */
  idleTimeoutMs?: number;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  /** Addresses tried per message across all MX hosts (default 6). */
  maxAddressesPerMessage?: number;
  /** How long MX and address answers are reused (default 60 s; 0 looks up every time). */
  dnsCacheMs?: number;
  random?: MxOptions['random'];
  /** Traffic shaping per destination (connections, messages per connection, pace, back-off). */
  shaper?: TrafficShaper | null;
  /** How long a message waits for a slot of its destination before it is deferred (default 30 s). */
  shapingMaxWaitMs?: number;
  /** Throttled answers retried at the destination's new pace within one delivery (default 8). */
  throttleRetries?: number;
  /** MTA-STS policies of recipient domains (default: looked up through `resolver`); null turns it off. */
  mtaSts?: MtaSts | null;
  /** DANE lookups (default: through `resolver`'s servers, trusting their AD bit); null turns it off. */
  dane?: DaneLookup | null;
  /** Extra CA certificates trusted when a certificate must be valid (tests). */
  tlsCa?: string | Buffer | Array<string | Buffer>;
  /** Source addresses by pool (DELIVERY_IP_POOLS); none: the OS chooses, EHLO is `heloName`. */
  ipPools?: IpPools | null;
}

interface Destination {
  key: string;
  transport: ReturnType<typeof nodemailer.createTransport>;
  inFlight: number;
  lastUsed: number;
}

interface Hop {
  host: string;
  address: string;
  port: number;
  secure: boolean;
  /** Skip STARTTLS (after a failed TLS handshake with this host). */
  plain: boolean;
  /** TLS is required (MTA-STS enforce, DANE): never in the clear. */
  requireTls?: boolean;
  /** DANE applies: STARTTLS required; the certificate must match `records` (null: only unusable records, not checked). */
  dane?: { records: TlsaRecord[] | null; domain: string };
  auth?: { user: string; pass: string };
  verifyCertificate: boolean;
  /** Local address and HELO name of the connection (IP pools); absent: the OS and `heloName`. */
  source?: PoolAddress | null;
}

const ENHANCED_CODE = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/;
// Errors about the host as a whole (greeting, EHLO, TLS, login): another MX may do better.
const HOST_LEVEL_COMMANDS = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS']);

export function enhancedCodeOf(response: string | undefined | null): string | null {
  return ENHANCED_CODE.exec((response ?? '').trim())?.[1] ?? null;
}

function replyCodeOf(response: string | undefined | null): number | null {
  const match = /^([2-5]\d\d)\b/.exec((response ?? '').trim());
  return match ? Number(match[1]) : null;
}

function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ').trim();
}

type SmtpError = Error & { code?: string; responseCode?: number; response?: string; command?: string; library?: string };

/** A failed TLS handshake or certificate check (nodemailer reports most as ESOCKET). */
export function isTlsFailure(error: SmtpError): boolean {
  return (
    error.code === 'ETLS' || error.library === 'SSL routines' || /SSL routines|certificate|TLS handshake|tlsv1 alert/i.test(error.message)
  );
}

/** What a nodemailer error means for this message. `hostLevel`: worth trying another host. */
export function classifySmtpError(error: SmtpError): Omit<HostAttempt, 'mxHost' | 'address'> & { hostLevel: boolean } {
  const code = typeof error.responseCode === 'number' && error.responseCode >= 200 ? error.responseCode : null;
  if (code !== null) {
    const response = oneLine(error.response || error.message);
    // 503 is a session-state error, not a verdict on the message.
    const permanent = code >= 500 && code !== 503;
    const hostLevel = HOST_LEVEL_COMMANDS.has(error.command ?? '') || error.code === 'EAUTH';
    // A refused login at a smarthost is our configuration, not the recipient: retry later. A 5xx
    // that is about the sender (reputation, blocklist, policy, rate) is a block, not a bounce:
    // retried later and never a reason to suppress the recipient (docs/delivery.md, "Blocks are not
    // bounces").
    const reason = classifyReason({
      status: enhancedCodeOf(response) ?? String(code),
      diagnostic: response,
      command: error.command ?? null,
    }).reason;
    const senderBlock = isSenderBlock(reason);
    const kind: DeliveryKind = permanent && error.code !== 'EAUTH' && !senderBlock ? 'permanent' : 'temporary';
    return {
      kind,
      code,
      enhancedCode: enhancedCodeOf(response) ?? (kind === 'permanent' ? '5.0.0' : '4.0.0'),
      response,
      hostLevel,
      reason,
      command: error.command ?? null,
    };
  }
  // No reply: TLS failed (X.7.5 cryptographic failure), the connection failed or timed out
  // (X.4.1 no answer from host), or it broke midway (X.4.2 bad connection).
  const tls = isTlsFailure(error);
  return {
    kind: 'temporary',
    code: null,
    enhancedCode: tls ? '4.7.5' : error.command === 'CONN' ? '4.4.1' : '4.4.2',
    response: oneLine(error.message),
    hostLevel: true,
    reason: tls ? 'policy_block' : 'network_error',
  };
}

/** How a session to `hop` is protected: dane (TLSA-verified), mta-sts (required, verified), tls (implicit, or required unverified), none, or opportunistic STARTTLS. */
function tlsOf(hop: Hop): string {
  if (hop.plain) return 'none';
  if (hop.dane) return hop.dane.records ? 'dane' : 'tls';
  if (hop.secure) return 'tls';
  return hop.requireTls ? 'mta-sts' : 'opportunistic';
}

/** A parsed SMARTHOST_URL. */
export function parseSmarthostUrl(url: string): {
  host: string;
  port: number;
  secure: boolean;
  auth?: { user: string; pass: string };
  verifyCertificate: boolean;
} {
  const parsed = new URL(url);
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new Error('SMARTHOST_URL must start with smtp:// or smtps://');
  const secure = parsed.protocol === 'smtps:';
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    ...(user || pass ? { auth: { user, pass } } : {}),
    verifyCertificate: parsed.searchParams.get('tls.rejectUnauthorized') !== 'false',
  };
}

/** Successful DNS answers, kept briefly: a burst to one domain costs one lookup, not thousands. */
class AnswerCache<T> {
  private readonly entries = new Map<string, { expires: number; value: Promise<T> }>();
  private readonly ttlMs: number;
  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  /** The cached answer for `key`, or `load()`'s; answers failing `keep` are not cached. */
  get(key: string, load: () => Promise<T>, keep: (value: T) => boolean): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    if (this.entries.size >= 10_000) this.entries.clear();
    // The promise itself is cached, so concurrent lookups of one name share a query.
    const value = load().then((answer) => {
      if (!keep(answer)) this.entries.delete(key);
      return answer;
    });
    this.entries.set(key, { expires: now + this.ttlMs, value });
    return value;
  }
}

export class SmtpDelivery {
  readonly options: Required<Omit<SmtpDeliveryOptions, 'smarthostUrl' | 'random' | 'shaper' | 'mtaSts' | 'dane' | 'tlsCa' | 'ipPools'>> &
    Pick<SmtpDeliveryOptions, 'random' | 'shaper' | 'tlsCa'>;
  private readonly sources: SourcePicker;
  private readonly mtaSts: MtaSts | null;
  private readonly dane: DaneLookup | null;
  private readonly smarthost: ReturnType<typeof parseSmarthostUrl> | null;
  private readonly destinations = new Map<string, Destination>();
  private readonly mxCache: AnswerCache<Awaited<ReturnType<typeof resolveMx>>>;
  private readonly addressCache: AnswerCache<Awaited<ReturnType<typeof resolveAddresses>>>;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(options: SmtpDeliveryOptions) {
    this.options = {
      resolver: options.resolver,
      heloName: options.heloName,
      mxPort: options.mxPort ?? 25,
      maxConnectionsPerDestination: options.maxConnectionsPerDestination ?? 5,
      maxMessagesPerConnection: options.maxMessagesPerConnection ?? 100,
      idleTimeoutMs: options.idleTimeoutMs ?? 10_000,
      connectionTimeoutMs: options.connectionTimeoutMs ?? 30_000,
      greetingTimeoutMs: options.greetingTimeoutMs ?? 60_000,
      socketTimeoutMs: options.socketTimeoutMs ?? 120_000,
      maxAddressesPerMessage: options.maxAddressesPerMessage ?? 6,
      dnsCacheMs: options.dnsCacheMs ?? 60_000,
      random: options.random,
      shaper: options.shaper ?? null,
      shapingMaxWaitMs: options.shapingMaxWaitMs ?? 30_000,
      throttleRetries: options.throttleRetries ?? 8,
      tlsCa: options.tlsCa,
    };
    this.mtaSts = options.mtaSts === undefined ? new MtaSts({ resolver: options.resolver, ca: options.tlsCa }) : options.mtaSts;
    this.dane =
      options.dane === undefined
        ? new DaneLookup({ servers: options.resolver.getServers(), cacheMs: this.options.dnsCacheMs })
        : options.dane;
    this.mxCache = new AnswerCache(this.options.dnsCacheMs);
    this.addressCache = new AnswerCache(this.options.dnsCacheMs);
    this.smarthost = options.smarthostUrl ? parseSmarthostUrl(options.smarthostUrl) : null;
    this.sources = new SourcePicker(options.ipPools ?? NO_POOLS);
    // Drops pools nobody used for a while, so the map does not grow with every domain ever seen.
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, this.options.idleTimeoutMs)).unref();
  }

  /** Delivers `message` to its one recipient; never throws for delivery failures. */
  async deliver(message: OutboundMessage): Promise<DeliveryOutcome> {
    if (this.closed) throw new Error('SmtpDelivery is closed');
    const attempts: HostAttempt[] = [];
    const finish = (decisive: HostAttempt): DeliveryOutcome => ({ ...decisive, attempts });
    const fail = (kind: DeliveryKind, enhancedCode: string, response: string, mxHost: string | null): DeliveryOutcome => {
      const attempt: HostAttempt = {
        kind,
        code: null,
        enhancedCode,
        response,
        mxHost,
        address: null,
        reason: classifyReason({ status: enhancedCode, diagnostic: response }).reason,
      };
      attempts.push(attempt);
      return finish(attempt);
    };

    let hosts: Array<Omit<Hop, 'address' | 'plain'>>;
    let domain = '';
    let stsEnforce: ((host: string) => boolean) | null = null;
    let daneDomain = false;
    if (this.smarthost) {
      hosts = [this.smarthost];
    } else {
      const at = message.to.lastIndexOf('@');
      domain = at > 0 ? domainToASCII(message.to.slice(at + 1).toLowerCase()) : '';
      if (!domain) return fail('permanent', '5.1.3', `Bad recipient address syntax: ${message.to}`, null);
      const mx = await this.mxCache.get(
        domain,
        () => resolveMx(domain, this.options.resolver, { random: this.options.random }),
        (answer) => answer.kind === 'hosts',
      );
      if (mx.kind !== 'hosts') return fail(mx.kind, mx.enhancedCode, mx.reason, null);
      // Ties are reshuffled per message, also when the answer came from the cache.
      hosts = orderMxHosts(mx.hosts, this.options.random).map((mxHost) => ({
        host: mxHost.exchange,
        port: this.options.mxPort,
        secure: false,
        verifyCertificate: false,
      }));
      // DANE needs an authenticated MX answer; then each MX host's TLSA records decide (below).
      // MTA-STS enforce: only the MX hosts the policy names, over TLS with a valid certificate
      // (for hosts where DANE does not apply: DANE takes precedence, RFC 8461 §2).
      const [secureMx, policy] = await Promise.all([
        this.dane ? this.dane.mxSecure(domain) : false,
        this.mtaSts ? this.mtaSts.policyFor(domain) : null,
      ]);
      daneDomain = secureMx;
      if (policy?.mode === 'enforce') stsEnforce = (host) => MtaSts.allows(policy, host);
    }

    let budget = this.options.maxAddressesPerMessage;
    let stsRefused = 0;
    const pooled = this.sources.has(message.pool);
    let unreachable = 0;
    for (let target of hosts) {
      if (budget <= 0) break;
      const security = await this.securityOf(target.host, target.port, domain, daneDomain, stsEnforce);
      if (security.kind === 'temporary') {
        attempts.push({
          kind: 'temporary',
          code: null,
          enhancedCode: '4.4.3',
          response: security.reason,
          mxHost: target.host,
          address: null,
          reason: 'network_error',
        });
        continue;
      }
      if (security.kind === 'refused') {
        stsRefused++;
        continue;
      }
      if (security.kind === 'dane') target = { ...target, requireTls: true, verifyCertificate: false, dane: security.dane };
      if (security.kind === 'mta-sts') target = { ...target, requireTls: true, verifyCertificate: true };
      const resolved = await this.addressesOf(target.host);
      if (resolved.kind !== 'addresses') {
        attempts.push({
          kind: 'temporary',
          code: null,
          enhancedCode: resolved.kind === 'none' ? '4.4.4' : '4.4.3',
          response: resolved.reason,
          mxHost: target.host,
          address: null,
          reason: 'network_error',
        });
        continue;
      }
      for (const address of resolved.addresses) {
        if (budget <= 0) break;
        const source = pooled ? this.sources.acquire(message.pool, isIP(address)) : null;
        // A pool without an address of this family cannot reach it (IPv4 pool, IPv6 MX address).
        if (pooled && !source) {
          unreachable++;
          continue;
        }
        budget--;
        try {
          const hop: Hop = { ...target, address, plain: false, source };
          const shaped = await this.shapedAttempt(hop, message, attempts);
          if ('deferredUntilMs' in shaped) return { ...shaped, attempts };
          let attempt = shaped;
          // A STARTTLS handshake that fails is retried in clear text: TLS here is opportunistic.
          // Never when a policy requires TLS (MTA-STS enforce): that delivery waits for a valid TLS session.
          if (attempt.tlsFailed && !this.smarthost && !hop.requireTls) {
            attempts.push(attempt.result);
            attempt = await this.attempt({ ...hop, plain: true }, message);
          }
          // A relay that refuses us as a whole (greeting, login) is our configuration, not the recipient.
          if (this.smarthost && attempt.hostLevel && attempt.result.kind === 'permanent') attempt.result.kind = 'temporary';
          attempts.push(attempt.result);
          if (attempt.result.kind === 'delivered') return finish(attempt.result);
          if (attempt.result.kind === 'permanent' && !attempt.hostLevel) return finish(attempt.result);
        } finally {
          source?.release();
        }
      }
    }
    if (attempts.length === 0 && unreachable > 0)
      return fail(
        'temporary',
        '4.4.4',
        `IP pool ${message.pool} has no source address of the family of any address of the delivery hosts`,
        null,
      );
    if (attempts.length === 0 && stsRefused > 0) {
      const outcome = fail('temporary', '4.7.5', `MTA-STS policy of ${domain} (enforce) names none of its MX hosts`, null);
      outcome.reason = outcome.attempts[0].reason = 'policy_block';
      return outcome;
    }
    if (attempts.length === 0) return fail('temporary', '4.4.3', 'No delivery host could be tried', null);
    // Nothing delivered: a permanent answer from any host wins, else the last answer with an
    // SMTP reply (more telling than a later connection failure), else the last attempt.
    const decisive =
      attempts.find((a) => a.kind === 'permanent') ?? [...attempts].reverse().find((a) => a.code !== null) ?? attempts[attempts.length - 1];
    return finish(decisive);
  }

  /** The destination (shaping key) mail to `to` goes to: the provider or first MX host; null when DNS has none. */
  async destinationKeyOf(to: string): Promise<string | null> {
    if (this.smarthost) return this.options.shaper ? this.options.shaper.keyOf(this.smarthost.host) : this.smarthost.host;
    const at = to.lastIndexOf('@');
    const domain = at > 0 ? domainToASCII(to.slice(at + 1).toLowerCase()) : '';
    if (!domain) return null;
    const mx = await this.mxCache.get(
      domain,
      () => resolveMx(domain, this.options.resolver, { random: this.options.random }),
      (answer) => answer.kind === 'hosts',
    );
    if (mx.kind !== 'hosts') return null;
    const host = mx.hosts[0].exchange;
    return this.options.shaper ? this.options.shaper.keyOf(host) : host;
  }

  /** Closes every pooled connection (in-flight messages finish first). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const destination of this.destinations.values()) destination.transport.close();
    this.destinations.clear();
  }

  /**
   * How a session to MX `host` must be protected: DANE when the MX answer and the host's TLSA
   * records are authenticated (usable records: verified; only unusable ones: TLS required,
   * unverified), else MTA-STS enforce (`refused`: the policy does not name the host), else
   * opportunistic. `temporary`: the TLSA lookup failed in a signed zone (RFC 7672 §2.1.1).
   */
  private async securityOf(
    host: string,
    port: number,
    domain: string,
    daneDomain: boolean,
    stsEnforce: ((host: string) => boolean) | null,
  ) {
    if (daneDomain && this.dane) {
      const tlsa = await this.dane.tlsaFor(host, port);
      if (tlsa.kind === 'temporary') return { kind: 'temporary' as const, reason: tlsa.reason };
      if (tlsa.kind === 'dane') return { kind: 'dane' as const, dane: { records: tlsa.records, domain } };
      if (tlsa.kind === 'unusable' && !stsEnforce) return { kind: 'dane' as const, dane: { records: null, domain } };
    }
    if (stsEnforce) return stsEnforce(host) ? { kind: 'mta-sts' as const } : { kind: 'refused' as const };
    return { kind: 'opportunistic' as const };
  }

  private async addressesOf(host: string) {
    // RFC 6761: "localhost" is always loopback, whatever DNS says (local smarthosts).
    if (this.smarthost && host.toLowerCase() === 'localhost') return { kind: 'addresses' as const, addresses: ['127.0.0.1'] };
    return this.addressCache.get(
      host,
      () => resolveAddresses(host, this.options.resolver),
      (answer) => answer.kind === 'addresses',
    );
  }

  /**
   * One attempt at `hop` within its destination's allowance: waits for a slot, reports the
   * answer to the shaper, and retries a throttled answer at the new pace (a few times).
   */
  private async shapedAttempt(
    hop: Hop,
    message: OutboundMessage,
    attempts: HostAttempt[],
  ): Promise<Awaited<ReturnType<SmtpDelivery['attempt']>> | (HostAttempt & { deferredUntilMs: number })> {
    const shaper = this.options.shaper;
    if (!shaper) return this.attempt(hop, message);
    for (let tries = 0; ; tries++) {
      const slot = await shaper.acquire(hop.host, message.priority ?? 'transactional', this.options.shapingMaxWaitMs, hop.source?.address);
      if (!slot) {
        const key = shaper.keyOf(hop.host);
        return {
          kind: 'temporary',
          code: null,
          enhancedCode: '4.4.5',
          mxHost: hop.host,
          address: null,
          reason: 'rate_limited',
          response: `Deferred by traffic shaping: ${key}${hop.source ? ` (from ${hop.source.address})` : ''} has no free slot within ${this.options.shapingMaxWaitMs} ms`,
          deferredUntilMs: Date.now() + 5_000,
        };
      }
      const attempt = await this.attempt(hop, message);
      const feedback = feedbackOf(attempt.result);
      slot.release(feedback);
      if (feedback !== 'throttled' || tries >= this.options.throttleRetries) return attempt;
      attempts.push(attempt.result);
    }
  }

  private async attempt(hop: Hop, message: OutboundMessage): Promise<{ result: HostAttempt; hostLevel: boolean; tlsFailed: boolean }> {
    const destination = this.destinationFor(hop);
    destination.inFlight++;
    try {
      const info = await sendRaw(destination.transport, { from: message.from || '', to: [message.to] }, message.raw);
      const response = oneLine(info.response ?? '');
      const code = replyCodeOf(response) ?? 250;
      return {
        result: {
          kind: 'delivered',
          code,
          enhancedCode: enhancedCodeOf(response),
          response,
          mxHost: hop.host,
          address: hop.address,
          tls: tlsOf(hop),
          ...sourceOf(hop),
        },
        hostLevel: false,
        tlsFailed: false,
      };
    } catch (error) {
      const { hostLevel, ...classified } = classifySmtpError(error as SmtpError);
      return {
        result: {
          ...classified,
          mxHost: hop.host,
          address: hop.address,
          tls: tlsOf(hop),
          ...sourceOf(hop),
          ...(hop.requireTls && isTlsFailure(error as SmtpError) ? { reason: 'policy_block' as const } : {}),
        },
        hostLevel,
        tlsFailed: isTlsFailure(error as SmtpError) && !hop.plain && !hop.secure,
      };
    } finally {
      destination.inFlight--;
      destination.lastUsed = Date.now();
    }
  }

  private destinationFor(hop: Hop): Destination {
    // Keyed by address, not MX name: domains sharing MX hosts share connections and the cap.
    const key = `${hop.source ? `${hop.source.address}>` : ''}${hop.address}|${hop.port}|${hop.dane ? `dane|${hop.host}|${fingerprintOf(hop.dane.records)}|${hop.dane.domain}` : hop.secure ? 'tls' : hop.plain ? 'plain' : hop.requireTls ? `sts|${hop.host}` : 'starttls'}`;
    let destination = this.destinations.get(key);
    if (!destination && hop.dane) {
      destination = { key, transport: this.daneTransport(hop, hop.dane), inFlight: 0, lastUsed: Date.now() };
      this.destinations.set(key, destination);
    }
    if (!destination) {
      const servername = isIP(hop.host) ? undefined : hop.host;
      const transport = nodemailer.createTransport({
        pool: true,
        host: hop.address,
        port: hop.port,
        secure: hop.secure,
        name: hop.source?.helo ?? this.options.heloName,
        ...(hop.source ? { localAddress: hop.source.address } : {}),
        ignoreTLS: hop.plain,
        opportunisticTLS: !hop.requireTls,
        requireTLS: Boolean(hop.requireTls),
        servername,
        tls: { rejectUnauthorized: hop.verifyCertificate, servername, ...(this.options.tlsCa ? { ca: this.options.tlsCa } : {}) },
        auth: hop.auth,
        maxConnections: this.options.shaper
          ? this.options.shaper.connections(hop.host, hop.source?.address)
          : this.options.maxConnectionsPerDestination,
        maxMessages: this.options.shaper
          ? this.options.shaper.messagesPerConnection(hop.host, hop.source?.address)
          : this.options.maxMessagesPerConnection,
        // A 421 on a reused connection would be retried inside the pool, unseen by the shaper and
        // outside its pace (a retry storm); the shaper retries it at the destination's pace instead.
        ...(this.options.shaper ? { maxRequeues: 0 } : {}),
        idleTimeout: this.options.idleTimeoutMs,
        connectionTimeout: this.options.connectionTimeoutMs,
        greetingTimeout: this.options.greetingTimeoutMs,
        socketTimeout: this.options.socketTimeoutMs,
        logger: false,
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      transport.on('error', () => {}); // failures reach the sendMail callers
      destination = { key, transport, inFlight: 0, lastUsed: Date.now() };
      this.destinations.set(key, destination);
    }
    return destination;
  }

  /** A pool whose connections start with daneConnect: STARTTLS and the TLSA check done before nodemailer takes over. */
  private daneTransport(hop: Hop, dane: NonNullable<Hop['dane']>): ReturnType<typeof nodemailer.createTransport> {
    const setupTimeoutMs = this.options.connectionTimeoutMs + this.options.greetingTimeoutMs;
    const transport = nodemailer.createTransport({
      pool: true,
      host: hop.address,
      port: hop.port,
      secure: true, // the socket getSocket hands over is already TLS: no second STARTTLS
      name: hop.source?.helo ?? this.options.heloName,
      getSocket: (
        _options: unknown,
        callback: (error: Error | null, socket?: { connection: import('node:net').Socket; secured: boolean }) => void,
      ) => {
        daneConnect({
          address: hop.address,
          port: hop.port,
          host: hop.host,
          alsoNames: [dane.domain],
          heloName: hop.source?.helo ?? this.options.heloName,
          localAddress: hop.source?.address,
          records: dane.records,
          timeoutMs: setupTimeoutMs,
        }).then(
          (connection) => callback(null, { connection, secured: true }),
          (error) => callback(error),
        );
      },
      maxConnections: this.options.shaper
        ? this.options.shaper.connections(hop.host, hop.source?.address)
        : this.options.maxConnectionsPerDestination,
      maxMessages: this.options.shaper
        ? this.options.shaper.messagesPerConnection(hop.host, hop.source?.address)
        : this.options.maxMessagesPerConnection,
      // A 421 on a reused connection would be retried inside the pool, unseen by the shaper and
      // outside its pace (a retry storm); the shaper retries it at the destination's pace instead.
      ...(this.options.shaper ? { maxRequeues: 0 } : {}),
      idleTimeout: this.options.idleTimeoutMs,
      connectionTimeout: setupTimeoutMs,
      greetingTimeout: this.options.greetingTimeoutMs,
      socketTimeout: this.options.socketTimeoutMs,
      logger: false,
      disableFileAccess: true,
      disableUrlAccess: true,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    transport.on('error', () => {}); // failures reach the sendMail callers
    return transport;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.options.idleTimeoutMs;
    for (const [key, destination] of this.destinations) {
      if (destination.inFlight === 0 && destination.lastUsed < cutoff) {
        destination.transport.close();
        this.destinations.delete(key);
      }
    }
  }
}

/** The source address of an attempt, when a pool chose it. */
function sourceOf(hop: Hop): { source?: string } {
  return hop.source ? { source: hop.source.address } : {};
}

/** Pools are per TLSA RRset: new records (key rollover) start new connections. */
function fingerprintOf(records: TlsaRecord[] | null): string {
  if (!records) return 'unusable';
  const hash = createHash('sha256');
  for (const record of records) hash.update(`${record.usage} ${record.selector} ${record.matchingType} ${record.data.toString('hex')};`);
  return hash.digest('hex').slice(0, 16);
}

/** A delivery client configured from the environment (MAIL_HOSTNAME, MX_PORT, SMARTHOST_URL, DELIVERY_IP_POOLS). */
export function createSmtpDelivery(
  config: Pick<Config, 'mailHostname' | 'mxPort' | 'smarthostUrl'> & Partial<Pick<Config, 'ipPools'>>,
  resolver: Resolver,
  overrides: Partial<SmtpDeliveryOptions> = {},
): SmtpDelivery {
  return new SmtpDelivery({
    resolver,
    heloName: config.mailHostname,
    mxPort: config.mxPort,
    smarthostUrl: config.smarthostUrl,
    ipPools: config.ipPools,
    ...overrides,
  });
}

/** The service's own outbound client: createSmtpDelivery resolving through DNS_SERVERS (DNS_TIMEOUT_MS). */
export function createOutboundDelivery(
  config: Pick<Config, 'mailHostname' | 'mxPort' | 'smarthostUrl' | 'dnsServers' | 'dnsTimeoutMs'> & Partial<Pick<Config, 'ipPools'>>,
  overrides: Partial<SmtpDeliveryOptions> = {},
): SmtpDelivery {
  const resolver = createResolver(config.dnsServers, { timeoutMs: config.dnsTimeoutMs });
  return createSmtpDelivery(config, resolver, {
    dane: new DaneLookup({ servers: resolver.getServers(), timeoutMs: config.dnsTimeoutMs, cacheMs: overrides.dnsCacheMs }),
    ...overrides,
  });
}
