// Fixed per-endpoint limits that do not change with plan (https://emailit.com/docs/limits.md): webhook test
// deliveries per IP, MJML renders, public form loads… kept in process memory as a sliding
// window of hit times. (Sending limits are different: shared across processes, in the database.)
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (at least 1 when refused). */
  retryAfter: number;
}

/** Keys a limiter keeps at most: a flood of distinct keys (IPv6 addresses) must not grow memory. */
const MAX_KEYS = 10_000;

export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  constructor(limit: number, windowMs: number, maxKeys = MAX_KEYS) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
  }

  hit(key: string, now = Date.now()): LimitDecision {
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return {
        allowed: false,
        limit: this.limit,
        remaining: 0,
        retryAfter: Math.max(1, Math.ceil((recent[0] + this.windowMs - now) / 1000)),
      };
    }
    recent.push(now);
    this.hits.set(key, recent);
    if (this.hits.size > this.maxKeys) this.prune(now);
    return { allowed: true, limit: this.limit, remaining: this.limit - recent.length, retryAfter: 0 };
  }

  /** How many keys are kept (for tests). */
  get size(): number {
    return this.hits.size;
  }

  // Expired keys go first; if that is not enough, keys below their limit, oldest first. A key that
  // is being refused goes last, so flooding with fresh keys cannot wash out a limit in force.
  private prune(now: number): void {
    for (const [key, times] of this.hits) if (times.every((t) => t <= now - this.windowMs)) this.hits.delete(key);
    const target = Math.floor(this.maxKeys * 0.9);
    for (const [key, times] of this.hits) {
      if (this.hits.size <= target) return;
      if (times.filter((t) => t > now - this.windowMs).length < this.limit) this.hits.delete(key);
    }
    for (const key of this.hits.keys()) {
      if (this.hits.size <= target) return;
      this.hits.delete(key);
    }
  }
}
