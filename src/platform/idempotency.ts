// Idempotency-Key for POST /emails and POST /emails/{id}/forward
// (https://emailit.com/docs/api-reference/idempotency/): keys are per workspace, shared by send and
// forward; only the key is compared, not the body.
//
//   const key = parseIdempotencyKey(request.headers['idempotency-key']);  // 400 when malformed
//   const claim = key ? await beginIdempotent(db, workspaceId, key) : null; // 409 / 503
//   if (claim?.kind === 'replay') → (still check the sending limits) reply claim.status, claim.body
//   try {
//     await db.transaction().execute(async (tx) => {
//       …store the send…
//       if (claim) await completeIdempotent(tx, workspaceId, key, claim.token, 200, body);
//     });
//   } catch (e) { if (claim) await releaseIdempotent(db, workspaceId, key, claim.token); throw e; }
//
// A key is one row with the primary key (workspace_id, key). Racing requests, in one process
// or many, all try to INSERT it: the database lets exactly one through. The winner holds a
// short lease that its process renews while the request runs, for 15 minutes at most (the
// spec's bound). A process that dies stops renewing, so a retry of its request finds the key
// free within IDEMPOTENCY_LEASE_MS: it runs afresh if the dead request never committed, or
// replays the stored response if it did (the response commits with the send). The stored
// response is replayed for 24 hours after it completed. An expired row is taken over by the
// same single upsert, so the takeover races just as safely; a holder that was only slow finds
// its lease gone when it completes, and its transaction rolls back instead of sending twice.
import { randomUUID } from 'node:crypto';
import type { Db, Executor } from './db/database.ts';
import type {} from './db/limits-tables.ts';
import { isoFromMs, nowMs } from './clock.ts';
import { ApiError, messageError } from './http/errors.ts';

export const IDEMPOTENCY_LOCK_MS = 15 * 60 * 1000;
/** How long a pending key outlives its last renewal. */
export const IDEMPOTENCY_LEASE_MS = 10_000;
const RENEW_EVERY_MS = 3_000;
export const IDEMPOTENCY_REPLAY_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;

export type IdempotencyClaim =
  /** This request holds the key: complete it with its response, or release it on failure. */
  | { kind: 'new'; token: string }
  /** The key's stored response: reply with it, status 200; nothing is sent again. */
  | { kind: 'replay'; status: 200; body: unknown };

/**
 * The Idempotency-Key header's value, or null when the request has none. Throws 400
 * `{error:'Invalid Idempotency-Key', message}` when it is empty, longer than 256 characters,
 * or has characters other than letters, digits, `-` and `_`.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw messageError(
      400,
      'Invalid Idempotency-Key',
      'The Idempotency-Key header must be 1 to 256 characters long and contain only letters, digits, "-" and "_".',
    );
  }
  return header;
}

export const idempotencyInProgressError = () =>
  messageError(409, 'Idempotency key in progress', 'A request with this Idempotency-Key is still being processed. Retry shortly.');

export const idempotencyUnavailableError = () =>
  messageError(
    503,
    'Idempotency unavailable',
    'The Idempotency-Key could not be checked and the request was not processed. Retry with the same key.',
  );

/**
 * Claims `key` for a request (outside any transaction, so other processes see the lock at
 * once). Returns `new` with the token that completes or releases it, or `replay` with the
 * stored response. Throws 409 while another request holds the key, 503 when the store cannot
 * be reached.
 */
export async function beginIdempotent(db: Db, workspaceId: string, key: string, now: number = nowMs()): Promise<IdempotencyClaim> {
  const token = randomUUID();
  const at = Math.floor(now);
  try {
    // A key released between our insert and our read is free again: try once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await db
        .insertInto('idempotency_keys')
        .values({
          workspace_id: workspaceId,
          key,
          state: 'pending',
          token,
          response_status: null,
          response_body: null,
          created_at: isoFromMs(now),
          completed_at: null,
          expires_at: at + IDEMPOTENCY_LEASE_MS,
        })
        .onConflict((oc) =>
          oc
            .columns(['workspace_id', 'key'])
            .doUpdateSet((eb) => ({
              state: eb.ref('excluded.state'),
              token: eb.ref('excluded.token'),
              response_status: null,
              response_body: null,
              created_at: eb.ref('excluded.created_at'),
              completed_at: null,
              expires_at: eb.ref('excluded.expires_at'),
            }))
            // Only an expired lock or an expired stored response may be taken over.
            .where('idempotency_keys.expires_at', '<=', at),
        )
        .returning('token')
        .executeTakeFirst();
      if (claimed) {
        pruneNowAndThen(db);
        holdLease(db, token, at);
        return { kind: 'new', token };
      }
      const existing = await db
        .selectFrom('idempotency_keys')
        .select(['state', 'response_body'])
        .where('workspace_id', '=', workspaceId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existing) continue;
      if (existing.state === 'completed') return { kind: 'replay', status: 200, body: JSON.parse(existing.response_body ?? 'null') };
      throw idempotencyInProgressError();
    }
    throw idempotencyInProgressError();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw idempotencyUnavailableError();
  }
}

/**
 * Stores the response of the request holding `key`, in the caller's transaction (the send and
 * its stored response commit together). Replays start now and last 24 hours. Throws 409 when
 * the lock was lost (held past 15 minutes and taken over), so the caller's transaction rolls
 * back instead of sending twice.
 */
export async function completeIdempotent(
  tx: Executor,
  workspaceId: string,
  key: string,
  token: string,
  status: number,
  body: unknown,
  now: number = nowMs(),
): Promise<void> {
  held.delete(token);
  const result = await tx
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      response_status: status,
      response_body: JSON.stringify(body),
      completed_at: isoFromMs(now),
      expires_at: Math.floor(now) + IDEMPOTENCY_REPLAY_MS,
    })
    .where('workspace_id', '=', workspaceId)
    .where('key', '=', key)
    .where('token', '=', token)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw idempotencyInProgressError();
}

/**
 * Frees `key` after a failed request: nothing is stored and the next request with the key
 * runs afresh. Only the holder's token releases it. Never throws (it runs on failure paths):
 * returns false when nothing was released, and a key it could not reach frees itself when
 * its lock expires.
 */
export async function releaseIdempotent(db: Db, workspaceId: string, key: string, token: string): Promise<boolean> {
  held.delete(token);
  const release = async () => {
    const result = await db
      .deleteFrom('idempotency_keys')
      .where('workspace_id', '=', workspaceId)
      .where('key', '=', key)
      .where('token', '=', token)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  };
  try {
    return await release();
  } catch {
    // The database is away (a restart, a failover): keep trying in the background while the
    // lease lasts, so a retry is not refused with 409 for longer than the database was gone.
    let tries = 0;
    const again = () => {
      if (++tries > IDEMPOTENCY_LEASE_MS / RELEASE_RETRY_MS) return;
      release().catch(() => setTimeout(again, RELEASE_RETRY_MS).unref());
    };
    setTimeout(again, RELEASE_RETRY_MS).unref();
    return false;
  }
}
const RELEASE_RETRY_MS = 500;

/** Deletes keys whose lock or replay window has ended. */
export async function pruneIdempotencyKeys(db: Executor, now: number = nowMs()): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', Math.floor(now)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Pruning rides on claims, at most once a minute per process, off the request's path, on the
// real clock (never a `now` a caller passed in).
const PRUNE_EVERY_MS = 60_000;
let lastPrune = 0;
function pruneNowAndThen(db: Db): void {
  const now = nowMs();
  if (now - lastPrune < PRUNE_EVERY_MS) return;
  lastPrune = now;
  pruneIdempotencyKeys(db, now).catch(() => {
    // Nothing lost: the next prune deletes the same rows.
  });
}

// The leases this process holds, renewed together while any is held.
const held = new Map<string, { db: Db; claimedAt: number }>();
let renewTimer: NodeJS.Timeout | null = null;

function holdLease(db: Db, token: string, claimedAt: number): void {
  held.set(token, { db, claimedAt });
  renewTimer ??= setInterval(() => void renewIdempotencyLeases().catch(() => {}), RENEW_EVERY_MS).unref();
}

/**
 * Extends the pending keys this process holds to `now` + IDEMPOTENCY_LEASE_MS, never past 15
 * minutes after their claim and never shortening a lease. Runs every few seconds while keys
 * are held; a failed renewal is retried by the next one.
 */
export async function renewIdempotencyLeases(now: number = nowMs()): Promise<void> {
  const at = Math.floor(now);
  const byDb = new Map<Db, Map<number, string[]>>();
  for (const [token, lease] of held) {
    const until = Math.min(at + IDEMPOTENCY_LEASE_MS, lease.claimedAt + IDEMPOTENCY_LOCK_MS);
    if (until <= at) {
      held.delete(token); // past the spec's 15 minutes: the lease runs out
      continue;
    }
    const groups = byDb.get(lease.db) ?? new Map<number, string[]>();
    groups.set(until, [...(groups.get(until) ?? []), token]);
    byDb.set(lease.db, groups);
  }
  if (held.size === 0 && renewTimer) {
    clearInterval(renewTimer);
    renewTimer = null;
  }
  for (const [db, groups] of byDb) {
    for (const [until, tokens] of groups) {
      await db
        .updateTable('idempotency_keys')
        .set({ expires_at: until })
        .where('token', 'in', tokens)
        .where('state', '=', 'pending')
        .where('expires_at', '<', until)
        .execute();
    }
  }
}
