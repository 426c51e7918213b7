// Queue administration (docs/delivery.md): holds on queued deliveries by destination, recipient
// domain or workspace, their release, purging queued deliveries, and the traffic shaper's state per
// destination as the delivery workers last wrote it. A held delivery keeps its status and its job
// checks again every HOLD_RECHECK_MS; a purge cancels the queued emails (email.canceled).
import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { fieldValidationError, messageError } from '../../platform/http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { cancelEmail, CancelRefused } from '../../delivery/cancel.ts';
import type { DestinationState } from '../../mail/shaping.ts';
import { sourcedKey } from '../../mail/ip-pools.ts';
import type { DeliveryHoldsTable } from './tables.ts';

export const HOLD_RECHECK_MS = 30_000;
const HOLDS_CACHE_MS = 2_000;
const PURGEABLE = ['accepted', 'attempted'];

export type HoldRow = Selectable<DeliveryHoldsTable>;

export function holdObject(row: HoldRow) {
  return {
    object: 'delivery_hold' as const,
    id: row.id,
    workspace_id: row.workspace_id,
    destination: row.destination,
    domain: row.domain,
    reason: row.reason,
    created_at: row.created_at,
  };
}

const normalize = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim().toLowerCase().replace(/\.$/, '') : null);

export interface HoldInput {
  destination?: string | null;
  domain?: string | null;
  reason?: string | null;
}

/** A hold for `workspaceId` (null: every workspace, operator only). Emits delivery.held in the workspace. */
export async function createHold(db: Db, workspaceId: string | null, input: HoldInput): Promise<HoldRow> {
  const destination = normalize(input.destination);
  const domain = normalize(input.domain);
  if (!workspaceId && !destination && !domain) {
    throw fieldValidationError({ destination: ['A hold for every workspace names a destination or a domain'] });
  }
  const row: HoldRow = {
    id: newId('hold'),
    workspace_id: workspaceId,
    destination,
    domain,
    reason: input.reason?.slice(0, 500) ?? null,
    created_at: nowIso(),
  };
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('delivery_holds').values(row).execute();
    if (workspaceId) await emitEvent(tx, workspaceId, 'delivery.held', holdObject(row));
  });
  holdsCache.delete(db);
  return row;
}

export async function listHolds(db: Executor, workspaceId: string | null): Promise<HoldRow[]> {
  let query = db.selectFrom('delivery_holds').selectAll().orderBy('created_at').orderBy('id');
  if (workspaceId) query = query.where('workspace_id', '=', workspaceId);
  return query.execute();
}

/** Releases a hold; its deliveries go out at their next check. Emits delivery.released. */
export async function releaseHold(db: Db, workspaceId: string | null, id: string): Promise<HoldRow> {
  const row = await db.transaction().execute(async (tx) => {
    let query = tx.deleteFrom('delivery_holds').where('id', '=', id);
    if (workspaceId) query = query.where('workspace_id', '=', workspaceId);
    const deleted = await query.returningAll().executeTakeFirst();
    if (!deleted) throw messageError(404, 'Hold not found', `No delivery hold with id ${id} exists in this workspace.`);
    if (deleted.workspace_id) await emitEvent(tx, deleted.workspace_id, 'delivery.released', holdObject(deleted));
    return deleted;
  });
  holdsCache.delete(db);
  return row;
}

const holdsCache = new Map<Db, { expires: number; holds: Promise<HoldRow[]> }>();

/** Every hold, cached briefly (each delivery asks). */
export function activeHolds(db: Db): Promise<HoldRow[]> {
  const hit = holdsCache.get(db);
  if (hit && hit.expires > Date.now()) return hit.holds;
  const holds = listHolds(db, null);
  holdsCache.set(db, { expires: Date.now() + HOLDS_CACHE_MS, holds });
  holds.catch(() => holdsCache.delete(db));
  return holds;
}

/** The hold that applies to a delivery, if any. `destination` is looked up only when a hold needs it. */
export async function holdFor(
  holds: HoldRow[],
  email: { workspace_id: string; to: string },
  destination: () => Promise<string | null>,
): Promise<HoldRow | null> {
  const domain = email.to.slice(email.to.lastIndexOf('@') + 1).toLowerCase();
  let key: string | null | undefined;
  for (const hold of holds) {
    if (hold.workspace_id && hold.workspace_id !== email.workspace_id) continue;
    if (hold.domain && hold.domain !== domain) continue;
    if (hold.destination) {
      key ??= await destination();
      if (hold.destination !== key) continue;
    }
    return hold;
  }
  return null;
}

export interface PurgeInput {
  domain?: string | null;
  destination?: string | null;
}

/**
 * Cancels the queued deliveries (accepted or attempted, not being sent right now) of a
 * workspace, optionally only those to a recipient domain: status canceled + email.canceled each.
 */
export async function purgeQueue(
  db: Db,
  workspaceId: string,
  input: PurgeInput,
  destinationOf?: (to: string) => Promise<string | null>,
): Promise<{ purged: number; ids: string[] }> {
  const domain = normalize(input.domain);
  const destination = normalize(input.destination);
  let query = db
    .selectFrom('emails')
    .select(['id', 'to', 'status'])
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', 'outbound')
    .where('status', 'in', PURGEABLE);
  if (domain) query = query.where('to', 'like', `%@${domain}`);
  const candidates = await query.limit(100_000).execute();
  const ids: string[] = [];
  for (const candidate of candidates) {
    if (destination && (!destinationOf || (await destinationOf(candidate.to)) !== destination)) continue;
    try {
      const row = await db
        .transaction()
        .execute((tx) => cancelEmail(tx, { ...candidate, workspace_id: workspaceId }, 'Purged from the delivery queue'));
      ids.push(row.id);
    } catch (error) {
      // Being sent right now, or no longer queued: left alone.
      if (!(error instanceof CancelRefused)) throw error;
    }
  }
  return { purged: ids.length, ids };
}

/** Writes the shaper's state of every destination (called by the delivery worker). */
export async function saveDestinationStates(db: Db, states: DestinationState[]): Promise<void> {
  if (states.length === 0) return;
  const at = nowIso();
  await db.transaction().execute(async (tx) => {
    for (const state of states) {
      await tx
        .insertInto('delivery_destinations')
        .values({ destination: sourcedKey(state.destination, state.source), state: JSON.stringify(state), updated_at: at })
        .onConflict((oc) => oc.column('destination').doUpdateSet({ state: JSON.stringify(state), updated_at: at }))
        .execute();
    }
  });
}

/** Each destination's shaping state as last written, with when. */
export async function destinationStates(db: Executor): Promise<Array<DestinationState & { updated_at: string }>> {
  const rows = await db.selectFrom('delivery_destinations').selectAll().orderBy('destination').execute();
  return rows.map((row) => {
    const state = JSON.parse(row.state) as DestinationState;
    return { ...state, source: state.source ?? null, updated_at: row.updated_at };
  });
}

// IP pool assignments (pools.ts): the delivery worker asks which pool a delivery leaves from.
export { poolFor } from './pools.ts';
