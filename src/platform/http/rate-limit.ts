// Fixed per-endpoint limits that do not change with plan (spec 000 "Limits"): webhook test
// deliveries per IP, MJML renders, public form loads… kept in process memory as a sliding
// window of hit times. (Sending limits are different: shared across processes, in the database.)
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (at least 1 when refused). */
  retryAfter: number;
}

export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();
  private readonly limit: number;
  private readonly windowMs: number;
  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.windowMs = windowMs;
  }

  hit(key: string, now = Date.now()): LimitDecision {
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return { allowed: false, limit: this.limit, remaining: 0, retryAfter: Math.max(1, Math.ceil((recent[0] + this.windowMs - now) / 1000)) };
    }
    recent.push(now);
    this.hits.set(key, recent);
    if (this.hits.size > 10_000) this.prune(now);
    return { allowed: true, limit: this.limit, remaining: this.limit - recent.length, retryAfter: 0 };
  }

  private prune(now: number): void {
    for (const [key, times] of this.hits) if (times.every((t) => t <= now - this.windowMs)) this.hits.delete(key);
  }
}
