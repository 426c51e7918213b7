// Traffic shaping per destination (docs/delivery.md). A destination is a receiving provider
// recognised by its MX host (Gmail, Microsoft, Yahoo…) or else the MX host itself. Each has limits
// — connections at once, messages per connection, messages per minute — with defaults per provider
// and operator overrides (DELIVERY_SHAPING). Deliveries wait for a slot of their destination;
// transactional mail is served before bulk mail within the allowance.
//
// The destination's answers steer the pace (shaping-pace.ts): the first throttling answer
// (421, 4.7.x, "try again later", rate_limited) teaches the rate the receiver takes and the pace
// is held just under it; a throttle while it still takes nearly all we send is jitter and only
// skips a beat; a block about the sender (reputation, policy) halves the pace and pauses the
// destination longer. Clean stretches raise the pace step by step, then probe above it.
import type { BounceReason } from './bounce-reasons.ts';
import { Pace, type Feedback } from './shaping-pace.ts';
import { sourcedKey } from './ip-pools.ts';

export interface DestinationLimits {
  /** Connections (deliveries) open at once. */
  connections: number;
  /** Messages sent over one connection before it is replaced. */
  messagesPerConnection: number;
  /** Messages per minute; null: no fixed limit (only what the destination's answers teach). */
  perMinute: number | null;
  /** Back-off after a block about the sender (reputation, policy), in ms (default 60 s). */
  blockPauseMs?: number;
}

export interface Provider {
  name: string;
  /** Matches the MX host name (lowercase, no trailing dot). */
  mx: RegExp;
  limits: DestinationLimits;
}

/** Conservative public figures and common practice (Postfix/PowerMTA defaults per provider). */
export const PROVIDERS: Provider[] = [
  { name: 'gmail', mx: /(^|\.)(google\.com|googlemail\.com)$/, limits: { connections: 20, messagesPerConnection: 100, perMinute: 6000 } },
  {
    name: 'microsoft',
    mx: /(^|\.)(outlook\.com|hotmail\.com|live\.com|olc\.protection\.outlook\.com)$/,
    limits: { connections: 10, messagesPerConnection: 50, perMinute: 3000 },
  },
  {
    name: 'yahoo',
    mx: /(^|\.)(yahoodns\.net|yahoo\.com|aol\.com)$/,
    limits: { connections: 10, messagesPerConnection: 20, perMinute: 1500 },
  },
  { name: 'apple', mx: /(^|\.)(icloud\.com|me\.com|apple\.com)$/, limits: { connections: 10, messagesPerConnection: 50, perMinute: 1500 } },
  {
    name: 'gmx-webde',
    mx: /(^|\.)(gmx\.net|gmx\.com|web\.de|kundenserver\.de|ionos\.com)$/,
    limits: { connections: 5, messagesPerConnection: 20, perMinute: 600 },
  },
  { name: 'mailru', mx: /(^|\.)mail\.ru$/, limits: { connections: 5, messagesPerConnection: 20, perMinute: 600 } },
  { name: 'yandex', mx: /(^|\.)yandex\.(net|ru)$/, limits: { connections: 5, messagesPerConnection: 20, perMinute: 600 } },
  { name: 'zoho', mx: /(^|\.)zoho(mail)?\.(com|eu|in)$/, limits: { connections: 5, messagesPerConnection: 50, perMinute: 1200 } },
  { name: 'proton', mx: /(^|\.)protonmail\.ch$/, limits: { connections: 5, messagesPerConnection: 50, perMinute: 1200 } },
  { name: 'comcast', mx: /(^|\.)comcast\.net$/, limits: { connections: 5, messagesPerConnection: 20, perMinute: 600 } },
];

/** Any other destination: Postfix's default_destination_concurrency_limit, no fixed rate. */
export const DEFAULT_LIMITS: DestinationLimits = { connections: 20, messagesPerConnection: 100, perMinute: null };

export type Overrides = Record<string, Partial<DestinationLimits>>;

/** DELIVERY_SHAPING: JSON `{"gmail": {"perMinute": 600}, "mx.example.org": {"connections": 2}, "default": {...}}`. */
export function parseShapingOverrides(value: string | undefined | null): Overrides {
  if (!value || !value.trim()) return {};
  const parsed = JSON.parse(value) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('DELIVERY_SHAPING must be a JSON object');
  const out: Overrides = {};
  for (const [key, limits] of Object.entries(parsed as Record<string, Record<string, unknown>>)) {
    const entry: Partial<DestinationLimits> = {};
    for (const field of ['connections', 'messagesPerConnection', 'perMinute', 'blockPauseMs'] as const) {
      const v = limits?.[field];
      if (v === undefined) continue;
      if (!(v === null && field === 'perMinute') && !(typeof v === 'number' && v > 0))
        throw new Error(`DELIVERY_SHAPING ${key}.${field} must be a positive number`);
      (entry as Record<string, unknown>)[field] = v;
    }
    out[key.toLowerCase()] = entry;
  }
  return out;
}

/** The destination key and provider of an MX host. */
export function destinationOf(mxHost: string): { key: string; provider: string | null } {
  const host = mxHost.toLowerCase().replace(/\.$/, '');
  const provider = PROVIDERS.find((p) => p.mx.test(host));
  return provider ? { key: provider.name, provider: provider.name } : { key: host, provider: null };
}

export type Priority = 'transactional' | 'bulk';

export type { Feedback };

export function feedbackOf(result: {
  kind: string;
  code: number | null;
  enhancedCode: string | null;
  response: string;
  reason?: BounceReason | null;
}): Feedback {
  if (result.kind === 'delivered') return 'accepted';
  // Greylisting asks for a retry minutes later, not for a slower pace.
  if (/grey ?list|gray ?list/i.test(result.response)) return 'other';
  // A pooled connection the receiver closed before the message was sent (its 421 on a reused
  // connection, which the pool reports only as this): a throttle, retried at the pace.
  if (result.code === null && /after connection was closed/i.test(result.response)) return 'throttled';
  if (result.reason === 'rate_limited' || result.code === 421 || /try again later|throttl|too many/i.test(result.response))
    return 'throttled';
  if (result.reason === 'reputation_block' || (result.reason === 'policy_block' && result.code !== null)) return 'blocked';
  return 'other';
}

export interface DestinationState {
  destination: string;
  /** Local source address (IP pools); null: the OS chose it. */
  source: string | null;
  provider: string | null;
  limits: DestinationLimits;
  /** The pace in force now (messages per minute); null: no limit. */
  current_per_minute: number | null;
  state: 'normal' | 'throttled' | 'paused';
  in_flight: number;
  queued: number;
  paused_until: string | null;
  accepted: number;
  throttled: number;
  blocked: number;
  last_throttled_at: string | null;
}

interface Waiter {
  priority: Priority;
  resolve(ok: boolean): void;
  timer: NodeJS.Timeout | null;
}

const RECOVERY_STEP_MS = 2_000;
const BLOCK_PAUSE_MS = 60_000;

class Destination {
  readonly key: string;
  readonly provider: string | null;
  source: string | null = null;
  readonly limits: DestinationLimits;
  readonly pace: Pace;
  inFlight = 0;
  accepted = 0;
  throttled = 0;
  blocked = 0;
  readonly waiters: Waiter[] = [];
  pumpTimer: NodeJS.Timeout | null = null;

  constructor(key: string, provider: string | null, limits: DestinationLimits, recoveryStepMs: number) {
    this.key = key;
    this.provider = provider;
    this.limits = limits;
    this.pace = new Pace(limits.perMinute, recoveryStepMs);
  }
}

export interface Slot {
  destination: string;
  release(feedback: Feedback): void;
}

export class TrafficShaper {
  private readonly destinations = new Map<string, Destination>();
  private readonly overrides: Overrides;
  private readonly now: () => number;
  private readonly recoveryStepMs: number;
  private readonly blockPauseMs: number;

  constructor(options: { overrides?: Overrides; now?: () => number; recoveryStepMs?: number; blockPauseMs?: number } = {}) {
    this.overrides = options.overrides ?? {};
    this.now = options.now ?? Date.now;
    this.recoveryStepMs = options.recoveryStepMs ?? RECOVERY_STEP_MS;
    this.blockPauseMs = options.blockPauseMs ?? BLOCK_PAUSE_MS;
  }

  limitsFor(key: string, provider: string | null): DestinationLimits {
    const base = PROVIDERS.find((p) => p.name === provider)?.limits ?? DEFAULT_LIMITS;
    return { ...base, ...(provider ? {} : this.overrides.default), ...this.overrides[key] };
  }

  private destination(mxHost: string, source?: string | null): Destination {
    const { key, provider } = destinationOf(mxHost);
    let destination = this.destinations.get(sourcedKey(key, source));
    if (!destination) {
      destination = new Destination(key, provider, this.limitsFor(key, provider), this.recoveryStepMs);
      destination.source = source ?? null;
      this.destinations.set(sourcedKey(key, source), destination);
    }
    return destination;
  }

  /** The destination key of an MX host (for holds and reports). */
  keyOf(mxHost: string): string {
    return destinationOf(mxHost).key;
  }

  messagesPerConnection(mxHost: string, source?: string | null): number {
    return this.destination(mxHost, source).limits.messagesPerConnection;
  }

  connections(mxHost: string, source?: string | null): number {
    return this.destination(mxHost, source).limits.connections;
  }

  /**
   * Waits for a slot at the destination of `mxHost`: a free connection and the pace allowing
   * another message. Null when none came within `maxWaitMs` (the caller defers the message).
   * `source`: the local address the message leaves from (IP pools), shaped on its own.
   */
  acquire(mxHost: string, priority: Priority, maxWaitMs: number, source?: string | null): Promise<Slot | null> {
    const destination = this.destination(mxHost, source);
    return new Promise<Slot | null>((resolve) => {
      const waiter: Waiter = {
        priority,
        timer: null,
        resolve: (ok) => {
          if (waiter.timer) clearTimeout(waiter.timer);
          resolve(ok ? this.slot(destination) : null);
        },
      };
      waiter.timer = setTimeout(
        () => {
          const index = destination.waiters.indexOf(waiter);
          if (index >= 0) destination.waiters.splice(index, 1);
          resolve(null);
        },
        Math.max(0, maxWaitMs),
      );
      waiter.timer.unref?.();
      // Transactional first, then in arrival order: a waiter goes in after the last of its
      // kind (sorting the queue on every acquire was a tenth of the delivery loop's garbage).
      const waiters = destination.waiters;
      const last = waiters[waiters.length - 1];
      if (priority !== 'transactional' || !last || last.priority === 'transactional') waiters.push(waiter);
      else
        waiters.splice(
          waiters.findIndex((other) => other.priority !== 'transactional'),
          0,
          waiter,
        );
      this.pump(destination);
    });
  }

  private slot(destination: Destination): Slot {
    let released = false;
    return {
      destination: destination.key,
      release: (feedback) => {
        if (released) return;
        released = true;
        destination.inFlight--;
        this.feedback(destination, feedback);
        this.pump(destination);
      },
    };
  }

  private pump(destination: Destination): void {
    if (destination.pumpTimer) return;
    const now = this.now();
    while (destination.waiters.length > 0 && destination.inFlight < destination.limits.connections) {
      const startAt = destination.pace.startAt(now);
      if (startAt > now) {
        destination.pumpTimer = setTimeout(() => {
          destination.pumpTimer = null;
          this.pump(destination);
        }, startAt - now);
        destination.pumpTimer.unref?.();
        return;
      }
      const waiter = destination.waiters.shift()!;
      destination.inFlight++;
      destination.pace.started(now);
      waiter.resolve(true);
    }
  }

  private feedback(destination: Destination, feedback: Feedback): void {
    const now = this.now();
    if (feedback === 'accepted') destination.accepted++;
    else if (feedback === 'throttled') destination.throttled++;
    else if (feedback === 'blocked') destination.blocked++;
    destination.pace.observe(feedback, now);
    if (feedback === 'blocked') destination.pace.pause(now + (destination.limits.blockPauseMs ?? this.blockPauseMs));
  }

  /** Every destination seen, for operators (CLI and API). */
  states(): DestinationState[] {
    const now = this.now();
    return [...this.destinations.values()]
      .map(({ pace, ...d }) => ({
        destination: d.key,
        source: d.source,
        provider: d.provider,
        limits: d.limits,
        current_per_minute: pace.rate === null ? null : Math.round(pace.rate * 10) / 10,
        state: (pace.pausedUntil > now ? 'paused' : pace.rate !== d.limits.perMinute ? 'throttled' : 'normal') as DestinationState['state'],
        in_flight: d.inFlight,
        queued: d.waiters.length,
        paused_until: pace.pausedUntil > now ? new Date(pace.pausedUntil).toISOString() : null,
        accepted: d.accepted,
        throttled: d.throttled,
        blocked: d.blocked,
        last_throttled_at: pace.lastThrottleAt ? new Date(pace.lastThrottleAt).toISOString() : null,
      }))
      .sort((a, b) => (sourcedKey(a.destination, a.source) < sourcedKey(b.destination, b.source) ? -1 : 1)); // not localeCompare: ICU's collation data is about 3 MB of RSS
  }

  close(): void {
    for (const destination of this.destinations.values()) {
      if (destination.pumpTimer) clearTimeout(destination.pumpTimer);
      for (const waiter of destination.waiters.splice(0)) waiter.resolve(false);
    }
  }
}
