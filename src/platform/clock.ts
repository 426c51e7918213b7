// Time in one place, so every response carries ISO 8601 UTC with microseconds and `Z`, and
// tests can move time forward without sleeping.
let offsetMs = 0;

/** Epoch milliseconds (fractional: sub-millisecond precision from the monotonic clock). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now() + offsetMs;
}

// The formatted second, reused while it lasts: a send and its delivery take about fifteen
// timestamps, and Date's toISOString was most of their cost.
let cachedSecond = NaN;
let cachedPrefix = '';

/** ISO 8601 UTC with microseconds, e.g. 2026-11-22T03:30:13.123456Z. */
export function isoFromMs(ms: number): string {
  const whole = Math.floor(ms);
  const second = Math.floor(whole / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 20); // through the dot
  }
  const sub = (whole - second * 1000) * 1000 + Math.floor((ms - whole) * 1000);
  return `${cachedPrefix}${String(sub).padStart(6, '0')}Z`;
}

export function nowIso(): string {
  return isoFromMs(nowMs());
}

export function isoFromDate(date: Date): string {
  return isoFromMs(date.getTime());
}

/** Tests only: shift the clock (in-process apps). */
export function shiftClock(ms: number): void {
  offsetMs += ms;
}

export function resetClock(): void {
  offsetMs = 0;
}
