// Password guessing is slowed without letting anyone lock the owner out, after OWASP's "Slow
// Down Online Guessing Attacks with Device Cookies"
// (https://owasp.org/www-community/Slow_Down_Online_Guessing_Attacks_with_Device_Cookies):
// - a successful sign-in leaves a device cookie: the user's id and a nonce, signed with a key
//   derived from the encryption key (so every server sharing it accepts the cookie);
// - an attempt with a valid device cookie for the account is counted against that cookie only:
//   after SIGN_IN_PER_DEVICE failures that browser waits out the window, no one else does;
// - an attempt without one (an untrusted client) is counted against its network (one IPv4
//   address, one IPv6 /64): SIGN_IN_PER_IP per window, then 429 until the window frees a slot;
// - after SIGN_IN_PER_ACCOUNT failed untrusted attempts on an account, every untrusted attempt
//   on it must carry a solved proof-of-work challenge (ALTCHA, as public forms use) that grows
//   harder as failures go on. A flood from elsewhere never refuses the owner's own browser, and
//   a new browser of the owner's gets in after a few seconds of work instead of 15 minutes.
// The counts live in this process's memory, capped in keys; with several processes each keeps
// its own, so a guesser spread over N of them gets N times the attempts before the challenge.
import { createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { createChallenge, randomInt, verifySolution, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { hmacSha256, subkey } from '../../platform/hmac.ts';
import { ipv6Bytes } from '../../platform/net.ts';

export const DEVICE_COOKIE = 'postlane_device';
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Untrusted attempts per client network per window. */
export const SIGN_IN_PER_IP = 30;
/** Failed untrusted attempts on an account before untrusted clients must solve a challenge. */
export const SIGN_IN_PER_ACCOUNT = 8;
/** Failed attempts with one device cookie before that cookie waits out the window. */
export const SIGN_IN_PER_DEVICE = 8;
export const DEVICE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;
/** Keys each count keeps at most (addresses, accounts, device cookies). */
export const MAX_TRACKED_KEYS = 10_000;
const CHALLENGE_SECONDS = 300;
/** Counter range of the first challenge (tens of milliseconds in a browser), doubled for each further SIGN_IN_PER_ACCOUNT failures, up to 2^MAX_LEVEL times. */
const COUNTER_MIN = 5_000;
const COUNTER_MAX = 20_000;
const MAX_LEVEL = 4;

/**
 * Times of recent events by key in a sliding window. Bounded: each key keeps its last `keep`
 * times, and past `maxKeys` keys the expired go first, then those below `protectAt` (so a
 * flood of new keys cannot wash out a count that matters), then the oldest.
 */
export class EventWindow {
  private readonly times = new Map<string, number[]>();
  private readonly windowMs: number;
  private readonly keep: number;
  private readonly maxKeys: number;
  private readonly protectAt: number;

  constructor(options: { windowMs: number; keep: number; maxKeys: number; protectAt: number }) {
    this.windowMs = options.windowMs;
    this.keep = options.keep;
    this.maxKeys = options.maxKeys;
    this.protectAt = options.protectAt;
  }

  get size(): number {
    return this.times.size;
  }

  count(key: string, now = Date.now()): number {
    return this.recent(key, now).length;
  }

  record(key: string, now = Date.now()): number {
    const times = [...this.recent(key, now), now].slice(-this.keep);
    this.times.delete(key); // re-inserted last: the map's order is the order of last use
    this.times.set(key, times);
    if (this.times.size > this.maxKeys) this.shrink(now);
    return times.length;
  }

  clear(key: string): void {
    this.times.delete(key);
  }

  /** Takes back one event recorded at `time`. */
  forget(key: string, time: number): void {
    const times = this.times.get(key);
    const at = times?.lastIndexOf(time) ?? -1;
    if (!times || at < 0) return;
    times.splice(at, 1);
    if (times.length === 0) this.times.delete(key);
  }

  /** Seconds until fewer than `limit` events are in the window (at least 1). */
  retryAfter(key: string, limit: number, now = Date.now()): number {
    const times = this.recent(key, now);
    const freeing = times[times.length - limit] ?? now;
    return Math.max(1, Math.ceil((freeing + this.windowMs - now) / 1000));
  }

  private recent(key: string, now: number): number[] {
    const times = this.times.get(key);
    if (!times) return [];
    const fresh = times.filter((t) => t > now - this.windowMs);
    if (fresh.length === 0) this.times.delete(key);
    else if (fresh.length !== times.length) this.times.set(key, fresh);
    return fresh;
  }

  /** Down to 90% of the cap, so a flood of new keys pays for this scan once per thousand. */
  private shrink(now: number): void {
    const target = Math.floor(this.maxKeys * 0.9);
    for (const [key, times] of this.times) if (times[times.length - 1] <= now - this.windowMs) this.times.delete(key);
    for (const [key, times] of this.times) {
      if (this.times.size <= target) return;
      if (times.length < this.protectAt) this.times.delete(key);
    }
    for (const key of this.times.keys()) {
      if (this.times.size <= target) return;
      this.times.delete(key);
    }
  }
}

/** The client network an address counts for: an IPv4 address, or an IPv6 /64 (one host's usual share). */
export function clientNetwork(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const bytes = ipv6Bytes(ip);
  if (!bytes) return ip;
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return bytes.slice(12).join('.');
  return `${Buffer.from(bytes.slice(0, 8)).toString('hex')}::/64`;
}

export interface Proof {
  challenge: { parameters: Record<string, unknown>; signature?: string };
  solution: { counter: number; derivedKey: string };
}

export interface DeviceCookie {
  userId: string;
  nonce: string;
}

/** Why an attempt may not go ahead: a 429 the route sends as it is. */
export class SignInRefused extends Error {
  readonly body: { error: 'too_many_attempts' | 'challenge_required'; message: string; retry_after?: number; challenge?: Challenge };
  constructor(body: SignInRefused['body']) {
    super(body.message);
    this.body = body;
  }
}

/** An attempt let through, already counted as a failure (so that attempts running at once all count) until it succeeds. */
export interface Admission {
  device: DeviceCookie | null;
  account: string;
  at: number;
}

export class SignInGuard {
  readonly byNetwork = new EventWindow({
    windowMs: SIGN_IN_WINDOW_MS,
    keep: SIGN_IN_PER_IP,
    maxKeys: MAX_TRACKED_KEYS,
    protectAt: SIGN_IN_PER_IP,
  });
  readonly untrustedFailures = new EventWindow({
    windowMs: SIGN_IN_WINDOW_MS,
    keep: SIGN_IN_PER_ACCOUNT * (MAX_LEVEL + 1),
    maxKeys: MAX_TRACKED_KEYS,
    protectAt: SIGN_IN_PER_ACCOUNT,
  });
  readonly deviceFailures = new EventWindow({
    windowMs: SIGN_IN_WINDOW_MS,
    keep: SIGN_IN_PER_DEVICE,
    maxKeys: MAX_TRACKED_KEYS,
    protectAt: SIGN_IN_PER_DEVICE,
  });
  /** Solved challenges already used, until they expire (digest → expiry in ms). */
  private readonly usedChallenges = new Map<string, number>();
  private readonly deviceKey;
  private readonly signatureSecret: string;
  private readonly keySecret: string;

  constructor(rootSecret: Buffer) {
    this.deviceKey = subkey(rootSecret, 'postlane device cookie v1');
    const derive = (label: string) => Buffer.from(hkdfSync('sha256', rootSecret, Buffer.alloc(0), label, 32)).toString('hex');
    this.signatureSecret = derive('postlane sign-in challenge v1');
    this.keySecret = derive('postlane sign-in challenge key v1');
  }

  deviceCookieFor(userId: string): string {
    const payload = `${userId}.${randomBytes(16).toString('base64url')}`;
    return `${payload}.${hmacSha256(this.deviceKey, payload).toString('base64url')}`;
  }

  /** The device cookie's user and nonce when its signature is ours. */
  readDeviceCookie(value: string | null): DeviceCookie | null {
    if (!value || value.length > 200) return null;
    const [userId, nonce, mac, extra] = value.split('.');
    if (!userId || !nonce || !mac || extra !== undefined) return null;
    const expected = hmacSha256(this.deviceKey, `${userId}.${nonce}`);
    const given = Buffer.from(mac, 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected) ? { userId, nonce } : null;
  }

  /**
   * Lets an attempt on `email` (owned by `userId`, when it exists) go ahead, or refuses it.
   * `device` is the request's valid device cookie, whoever it names.
   */
  async admit(
    attempt: { ip: string; email: string; userId: string | null; device: DeviceCookie | null; proof?: Proof },
    now = Date.now(),
  ): Promise<Admission> {
    const account = accountKey(attempt.email);
    if (attempt.device && attempt.userId !== null && attempt.device.userId === attempt.userId) {
      if (this.deviceFailures.count(attempt.device.nonce, now) >= SIGN_IN_PER_DEVICE)
        throw tooMany(this.deviceFailures.retryAfter(attempt.device.nonce, SIGN_IN_PER_DEVICE, now));
      this.deviceFailures.record(attempt.device.nonce, now);
      return { device: attempt.device, account, at: now };
    }
    const network = clientNetwork(attempt.ip);
    if (this.byNetwork.count(network, now) >= SIGN_IN_PER_IP) throw tooMany(this.byNetwork.retryAfter(network, SIGN_IN_PER_IP, now));
    this.byNetwork.record(network, now);
    const failures = this.untrustedFailures.count(account, now);
    if (failures >= SIGN_IN_PER_ACCOUNT) {
      const problem = await this.proofProblem(account, attempt.proof, now);
      if (problem) {
        const level = Math.min(MAX_LEVEL, Math.floor((failures - SIGN_IN_PER_ACCOUNT) / SIGN_IN_PER_ACCOUNT));
        throw new SignInRefused({ error: 'challenge_required', message: problem, challenge: await this.issue(account, level, now) });
      }
    }
    this.untrustedFailures.record(account, now);
    return { device: null, account, at: now };
  }

  /** The password was right: the attempt was no failure (and a device's failures are forgiven). */
  succeeded(admission: Admission): void {
    if (admission.device) this.deviceFailures.clear(admission.device.nonce);
    else this.untrustedFailures.forget(admission.account, admission.at);
  }

  private issue(account: string, level: number, now: number): Promise<Challenge> {
    const scale = 2 ** level;
    return createChallenge({
      algorithm: 'SHA-256',
      cost: 1,
      counter: randomInt(COUNTER_MAX * scale, COUNTER_MIN * scale),
      deriveKey,
      data: { sign_in: account },
      expiresAt: Math.floor(now / 1000) + CHALLENGE_SECONDS,
      hmacSignatureSecret: this.signatureSecret,
      hmacKeySignatureSecret: this.keySecret,
    });
  }

  /** null when `proof` solves a fresh challenge issued for this account, else what to tell the client. */
  private async proofProblem(account: string, proof: Proof | undefined, now: number): Promise<string | null> {
    if (!proof)
      return 'Too many failed sign-ins for this account from unknown browsers: solve the challenge and send it as proof with the attempt';
    const again = (why: string) => `${why}: solve the new challenge and send it as proof with the attempt`;
    try {
      const result = await verifySolution({
        challenge: proof.challenge as unknown as Challenge,
        solution: proof.solution,
        deriveKey,
        hmacSignatureSecret: this.signatureSecret,
        hmacKeySignatureSecret: this.keySecret,
      });
      if (result.expired) return again('The challenge expired');
      if (!result.verified) return again('The proof does not solve a challenge of this server');
    } catch {
      return again('The proof does not solve a challenge of this server');
    }
    if ((proof.challenge.parameters.data as Record<string, unknown> | undefined)?.sign_in !== account)
      return again('The challenge was issued for another account');
    // Each solution is good for one attempt: kept (in order of use) until it would have expired.
    const digest = createHash('sha256').update(String(proof.challenge.signature)).digest('base64url');
    for (const [key, expires] of this.usedChallenges) {
      if (expires > now) break;
      this.usedChallenges.delete(key);
    }
    if (this.usedChallenges.has(digest)) return again('That challenge was used already');
    if (this.usedChallenges.size >= MAX_TRACKED_KEYS) this.usedChallenges.delete(this.usedChallenges.keys().next().value!);
    this.usedChallenges.set(digest, now + CHALLENGE_SECONDS * 1000);
    return null;
  }
}

/** Accounts are counted by the address typed, existing or not, so a count never tells which exist. */
function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22);
}

function tooMany(retryAfter: number): SignInRefused {
  return new SignInRefused({
    error: 'too_many_attempts',
    message: `Too many sign-in attempts; try again in ${retryAfter} seconds`,
    retry_after: retryAfter,
  });
}
