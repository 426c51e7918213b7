// Per-workspace sending limits (https://emailit.com/docs/limits.md): sends per second (sliding
// one-second window), sends per UTC calendar day, and forwards per hour. The counters live in the
// database, so they are shared by every key, the API and the SMTP relay, and by every server
// process on one PostgreSQL (or SQLite file).
//
// "Checked before and counted after": a send first calls checkSendLimits (refused when the
// window or the day is already full; one large request may overshoot), then records its units
// with countSends inside the transaction that stores the emails, so counts and emails commit
// together. Each counter is a row incremented by a single upsert, which never loses an update
// under concurrent writers. The per-second window is kept in 10 ms slots: a send counts as
// made at the start of its slot, and the window sums the slots of the last second (at most
// 100 rows), which stays cheap at thousands of sends per second.
import type { Db, Executor } from './db/database.ts';
import type {} from './db/limits-tables.ts';
import { isoFromMs, nowMs } from './clock.ts';
import { preparedQuery, type PrefetchRead } from './db/prepared.ts';
import { literal, pendingHotAmount, writeHotRow } from './db/hot-rows.ts';
import { ApiError } from './http/errors.ts';

export const SEND_WINDOW_MS = 1000;
export const SEND_SLOT_MS = 10;
export const FORWARDS_PER_HOUR = 3;
export const FORWARD_WINDOW_MS = 60 * 60 * 1000;
export const FORWARD_SLOT_MS = 1000;

/** What a send is checked against: the workspace's own limits. */
export interface SendLimitsOf {
  id: string;
  /** Sends per second (workspace.sendRate, default 2). */
  sendRate: number;
  /** Sends per UTC day (workspace.dailyLimit, default 5,000). */
  dailyLimit: number;
}

/** The counters as a check found them (before the request was counted). */
export interface SendLimitState {
  limit: number;
  /** Units sent in the last second. */
  current: number;
  /** Seconds until the per-second window resets. */
  reset: number;
  dailyLimit: number;
  /** Units sent today (UTC). */
  dailyCurrent: number;
  /** Seconds until 00:00 UTC. */
  dailyReset: number;
}

export interface SendLimitRefusal {
  ok: false;
  /** Which limit refused: the daily one wins when both are full (waiting a second won't help). */
  limitType: 'rate' | 'daily';
  state: SendLimitState;
  status: 429;
  /** `{error, message, limit, current, retry_after}` exactly as the spec's 429 bodies. */
  body: { error: 'Rate limit exceeded' | 'Daily limit exceeded'; message: string; limit: number; current: number; retry_after: number };
  /** The ratelimit-* headers plus `retry-after`. */
  headers: Record<string, string>;
  /** The same status, body and headers, ready to throw. */
  error: ApiError;
}

export type SendLimitCheck = { ok: true; state: SendLimitState } | SendLimitRefusal;

// The two counters of one workspace: the last second's slots and today's total.
const readCounters = preparedQuery((db, p: { workspaceId: string; since: number; day: string }) =>
  db.selectNoFrom((eb) => [
    eb
      .selectFrom('send_window_counts')
      .select((s) => s.fn.coalesce(s.fn.sum<number>('units'), s.lit(0)).as('units'))
      .where('workspace_id', '=', p.workspaceId)
      .where('bucket', '>', p.since)
      .as('second'),
    eb.selectFrom('send_daily_counts').select('units').where('workspace_id', '=', p.workspaceId).where('day', '=', p.day).as('day'),
  ]),
);

// Integer slots: `bucket > floor(now) - 1000` is the same as `> now - 1000`.
const countersParams = (workspaceId: string, now: number) => ({ workspaceId, since: Math.floor(now) - SEND_WINDOW_MS, day: utcDay(now) });

/** checkSendLimits' read, to fetch ahead with others (prepared.ts `prefetch`); `now` as given to it. */
export const sendLimitsRead = (workspaceId: string, now: number): PrefetchRead => ({
  query: readCounters,
  params: countersParams(workspaceId, now),
});

/** Checks the per-second and daily limits before a send or forward; counts nothing. */
export async function checkSendLimits(db: Executor, workspace: SendLimitsOf, now: number = nowMs()): Promise<SendLimitCheck> {
  const [counts] = await readCounters(db, countersParams(workspace.id, now));
  // Sends of the same group commit (group-commit.ts) counted before this one, not yet written.
  const state: SendLimitState = {
    limit: workspace.sendRate,
    current: Number(counts.second ?? 0) + pendingHotAmount(db, windowKey(workspace.id)),
    reset: 1,
    dailyLimit: workspace.dailyLimit,
    dailyCurrent: Number(counts.day ?? 0) + pendingHotAmount(db, dayKey(workspace.id)),
    dailyReset: secondsToUtcMidnight(now),
  };

  if (state.dailyCurrent >= state.dailyLimit) {
    return refusal(state, 'daily', {
      error: 'Daily limit exceeded',
      message: `Daily sending limit of ${state.dailyLimit} emails reached; it resets at 00:00 UTC, in ${state.dailyReset} seconds.`,
      limit: state.dailyLimit,
      current: state.dailyCurrent,
      retry_after: state.dailyReset,
    });
  }
  if (state.current >= state.limit) {
    return refusal(state, 'rate', {
      error: 'Rate limit exceeded',
      message: `Sending rate limit of ${state.limit} emails per second exceeded; retry after 1 second.`,
      limit: state.limit,
      current: state.current,
      retry_after: 1,
    });
  }
  return { ok: true, state };
}

function refusal(state: SendLimitState, limitType: 'rate' | 'daily', body: SendLimitRefusal['body']): SendLimitRefusal {
  const headers = { ...rateLimitHeaders(state), 'retry-after': String(body.retry_after) };
  return { ok: false, limitType, state, status: 429, body, headers, error: new ApiError(429, body, headers) };
}

const addToWindow = preparedQuery((db, p: { workspaceId: string; bucket: number; units: number }) =>
  db
    .insertInto('send_window_counts')
    .values({ workspace_id: p.workspaceId, bucket: p.bucket, units: p.units })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'bucket'])
        .doUpdateSet((eb) => ({ units: eb('send_window_counts.units', '+', eb.ref('excluded.units')) })),
    ),
);
const addToDay = preparedQuery((db, p: { workspaceId: string; day: string; units: number }) =>
  db
    .insertInto('send_daily_counts')
    .values({ workspace_id: p.workspaceId, day: p.day, units: p.units })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'day']).doUpdateSet((eb) => ({ units: eb('send_daily_counts.units', '+', eb.ref('excluded.units')) })),
    ),
);

/**
 * Records `units` sends (each unique recipient address counts once) in both counters, inside
 * the caller's transaction so the count commits with the emails it counts.
 */
export async function countSends(tx: Executor, workspaceId: string, units: number, now: number = nowMs()): Promise<void> {
  if (!Number.isInteger(units) || units < 0) throw new TypeError(`units must be a whole number, got ${units}`);
  if (units === 0) return;
  // Slot first, then day: every sender takes the two row locks in the same order. On
  // PostgreSQL both go out with the commit (hot-rows.ts).
  const bucket = slotOf(now, SEND_SLOT_MS);
  const day = utcDay(now);
  const window = (
    total: number,
  ) => `insert into send_window_counts (workspace_id, bucket, units) values (${literal(workspaceId)}, ${literal(bucket)}, ${literal(total)})
    on conflict (workspace_id, bucket) do update set units = send_window_counts.units + excluded.units`;
  const today = (
    total: number,
  ) => `insert into send_daily_counts (workspace_id, day, units) values (${literal(workspaceId)}, ${literal(day)}, ${literal(total)})
    on conflict (workspace_id, day) do update set units = send_daily_counts.units + excluded.units`;
  await writeHotRow(tx, { key: `${windowKey(workspaceId)}${bucket}`, amount: units, statement: window }, () =>
    addToWindow(tx, { workspaceId, bucket, units }).then(() => {}),
  );
  await writeHotRow(tx, { key: `${dayKey(workspaceId)}${day}`, amount: units, statement: today }, () =>
    addToDay(tx, { workspaceId, day, units }).then(() => {}),
  );
}

// The keys of the counters' hot writes (hot-rows.ts): slot before day, as every sender locks them.
const windowKey = (workspaceId: string) => `2 send window ${workspaceId} `;
const dayKey = (workspaceId: string) => `3 send day ${workspaceId} `;

/** The number of units a send counts: its unique recipient addresses (case-insensitive). */
export function sendUnits(addresses: Iterable<string>): number {
  const unique = new Set<string>();
  for (const address of addresses) unique.add(address.trim().toLowerCase());
  return unique.size;
}

/**
 * The ratelimit-* headers of a send or forward response. `counted` is what this request added
 * (state is from before it), so `remaining` reflects the request itself.
 */
export function rateLimitHeaders(state: SendLimitState, counted = 0): Record<string, string> {
  return {
    'ratelimit-limit': String(state.limit),
    'ratelimit-remaining': String(Math.max(0, state.limit - state.current - counted)),
    'ratelimit-reset': String(state.reset),
    'ratelimit-daily-limit': String(state.dailyLimit),
    'ratelimit-daily-remaining': String(Math.max(0, state.dailyLimit - state.dailyCurrent - counted)),
    'ratelimit-daily-reset': String(state.dailyReset),
  };
}

export type ForwardLimitCheck =
  | { ok: true; limit: number; current: number }
  | {
      ok: false;
      limit: number;
      current: number;
      status: 429;
      body: { error: 'too_many_requests'; message: string; limit: number; current: number; retry_after: number };
      headers: Record<string, string>;
      error: ApiError;
    };

/** Checks the hourly forward limit (3 per workspace in any sliding hour); counts nothing. */
export async function checkForwardLimit(db: Executor, workspaceId: string, now: number = nowMs()): Promise<ForwardLimitCheck> {
  const slots = await db
    .selectFrom('forward_counts')
    .select(['bucket', 'units'])
    .where('workspace_id', '=', workspaceId)
    .where('bucket', '>', Math.floor(now) - FORWARD_WINDOW_MS)
    .orderBy('bucket')
    .execute();
  const limit = FORWARDS_PER_HOUR;
  const current = slots.reduce((sum, slot) => sum + Number(slot.units), 0);
  if (current < limit) return { ok: true, limit, current };
  // Wait until enough of the oldest forwards leave the window for one more to fit.
  let left = current;
  let freeAt = now + FORWARD_WINDOW_MS;
  for (const slot of slots) {
    left -= Number(slot.units);
    if (left < limit) {
      freeAt = Number(slot.bucket) + FORWARD_WINDOW_MS;
      break;
    }
  }
  const retryAfter = Math.max(1, Math.ceil((freeAt - now) / 1000));
  const body = {
    error: 'too_many_requests' as const,
    message: `Forward limit of ${limit} per hour reached; retry after ${retryAfter} seconds.`,
    limit,
    current,
    retry_after: retryAfter,
  };
  const headers = { 'retry-after': String(retryAfter) };
  return { ok: false, limit, current, status: 429, body, headers, error: new ApiError(429, body, headers) };
}

/** Records one forward, inside the caller's transaction. */
export async function countForward(tx: Executor, workspaceId: string, now: number = nowMs()): Promise<void> {
  await tx
    .insertInto('forward_counts')
    .values({ workspace_id: workspaceId, bucket: slotOf(now, FORWARD_SLOT_MS), units: 1 })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'bucket']).doUpdateSet((eb) => ({ units: eb('forward_counts.units', '+', eb.ref('excluded.units')) })),
    )
    .execute();
}

/** Deletes counter rows no window can reach any more (the last minute of slots is kept). */
export async function pruneLimitCounters(db: Executor, now: number = nowMs()): Promise<void> {
  now = Math.floor(now);
  await db
    .deleteFrom('send_window_counts')
    .where('bucket', '<=', now - 60 * SEND_WINDOW_MS)
    .execute();
  await db
    .deleteFrom('forward_counts')
    .where('bucket', '<=', now - FORWARD_WINDOW_MS)
    .execute();
  // Yesterday is kept: processes whose clocks straddle midnight still read it.
  await db
    .deleteFrom('send_daily_counts')
    .where('day', '<', utcDay(now - 24 * 60 * 60 * 1000))
    .execute();
}

// Pruning rides on checks, at most once a minute per process, off the request's path, on the
// real clock (never a `now` a caller passed in).
const PRUNE_EVERY_MS = 60_000;
let lastPrune = 0;
/** Deletes expired counter rows, at most once a minute per process, off the caller's path. */
export function pruneLimitCountersNowAndThen(db: Db): void {
  const now = nowMs();
  if (now - lastPrune < PRUNE_EVERY_MS) return;
  lastPrune = now;
  pruneLimitCounters(db, now).catch(() => {
    // Nothing lost: the next prune deletes the same rows.
  });
}

function slotOf(now: number, slotMs: number): number {
  return Math.floor(now / slotMs) * slotMs;
}

/** The UTC calendar day of an epoch-ms time, as YYYY-MM-DD. */
export function utcDay(now: number): string {
  return isoFromMs(Math.floor(now)).slice(0, 10); // isoFromMs formats each second once
}

/** Whole seconds until the next 00:00 UTC (1 to 86,400). */
export function secondsToUtcMidnight(now: number): number {
  const date = new Date(Math.floor(now));
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now) / 1000));
}
