// Warm-up schedules (docs/delivery.md "Warm-up"): a sending domain or source address marked new
// sends at most a daily number of messages to each destination (the providers and MX hosts of
// shaping.ts), rising day by day until the schedule ends and the cap is lifted. Days are UTC
// calendar days; day 1 is the day the warm-up started. Pure functions of the instants passed in.

/**
 * The default schedule: daily messages per destination for days 1–30, roughly doubling early and
 * rising by a quarter to a third later (common ESP warm-up practice); from day 31 no cap.
 */
export const DEFAULT_SCHEDULE: readonly number[] = [
  50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000, 6500, 8000, 10000, 12500, 15000, 20000, 25000, 30000, 40000, 50000,
  60000, 75000, 90000, 110000, 130000, 160000, 200000, 250000,
];

/** A schedule: daily caps for every destination, or per destination with a `default`. */
export interface Schedule {
  /** Daily caps of destinations not named in `destinations`. */
  days: number[];
  /** Daily caps of named destinations (provider or MX host). */
  destinations: Record<string, number[]>;
}

export type Schedules = Record<string, Schedule>;

export const DEFAULT_SCHEDULE_NAME = 'default';
const DAY_MS = 86_400_000;

function caps(value: unknown, where: string): number[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 366)
    throw new Error(`DELIVERY_WARMUP ${where} must be a list of 1 to 366 daily caps`);
  for (const cap of value)
    if (!Number.isInteger(cap) || (cap as number) < 1) throw new Error(`DELIVERY_WARMUP ${where} must hold positive whole numbers`);
  return value as number[];
}

/**
 * DELIVERY_WARMUP: JSON of named schedules, each a list of daily caps (the day after the last
 * has no cap) or an object of lists per destination with a `default`:
 * `{"default": [20, 40, 80], "cautious": {"default": [10, 20], "gmail": [5, 10, 20]}}`.
 * A schedule named `default` replaces the built-in one.
 */
export function parseWarmupSchedules(value: string | undefined | null): Schedules {
  const schedules: Schedules = { [DEFAULT_SCHEDULE_NAME]: { days: [...DEFAULT_SCHEDULE], destinations: {} } };
  if (!value || !value.trim()) return schedules;
  const parsed = JSON.parse(value) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('DELIVERY_WARMUP must be a JSON object of schedules');
  for (const [name, schedule] of Object.entries(parsed as Record<string, unknown>)) {
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name))
      throw new Error(`DELIVERY_WARMUP schedule name "${name.slice(0, 64)}" must be lowercase letters, digits, - or _`);
    if (Array.isArray(schedule)) {
      schedules[name] = { days: caps(schedule, name), destinations: {} };
      continue;
    }
    if (!schedule || typeof schedule !== 'object')
      throw new Error(`DELIVERY_WARMUP ${name} must be a list of daily caps or an object of lists per destination`);
    const entries = Object.entries(schedule as Record<string, unknown>);
    const destinations: Record<string, number[]> = {};
    for (const [destination, list] of entries)
      if (destination !== 'default') destinations[destination.toLowerCase()] = caps(list, `${name}.${destination}`);
    const fallback = (schedule as Record<string, unknown>).default;
    schedules[name] = { days: fallback === undefined ? [...DEFAULT_SCHEDULE] : caps(fallback, `${name}.default`), destinations };
  }
  return schedules;
}

/** The UTC day (YYYY-MM-DD) of an instant. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** When the UTC day after the one of `ms` starts. */
export function nextDayStartMs(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

/** Day number (1 on the start day) of `ms` in a warm-up that started on `startedOn`. */
export function dayNumber(startedOn: string, ms: number): number {
  return Math.floor((Date.parse(`${dayOf(ms)}T00:00:00Z`) - Date.parse(`${startedOn}T00:00:00Z`)) / DAY_MS) + 1;
}

/** The daily caps a destination follows. */
export function capsFor(schedule: Schedule, destination: string): number[] {
  return schedule.destinations[destination] ?? schedule.days;
}

/** The cap of day `day` (1-based) for a destination; null past the schedule (no cap). */
export function capOn(schedule: Schedule, destination: string, day: number): number | null {
  const list = capsFor(schedule, destination);
  if (day > list.length) return null;
  return list[Math.max(0, day - 1)];
}

/** Days a schedule lasts (its longest list): from the day after, nothing is capped. */
export function scheduleDays(schedule: Schedule): number {
  return Math.max(schedule.days.length, ...Object.values(schedule.destinations).map((list) => list.length));
}

/**
 * What the destination's answers today leave of the cap (integration with the pace of
 * shaping-pace.ts): a block about the sender halves the rest of the day, repeated throttling
 * takes a quarter off. Never above the schedule.
 */
export function slowedCap(cap: number, answers: { throttled: number; blocked: number }): number {
  let factor = 1;
  if (answers.blocked > 0) factor = 0.5;
  else if (answers.throttled >= 3) factor = 0.75;
  return Math.max(1, Math.floor(cap * factor));
}
