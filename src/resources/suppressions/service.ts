// Suppressions: https://emailit.com/docs/suppressions.md.
// An address has at most one suppression per type. One whose keep_until has passed stops
// blocking (activeSuppressions) but stays listed until deleted.
import { sql, type Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { preparedQuery, type PrefetchRead } from '../../platform/db/prepared.ts';
import { newId, looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { emitEvent } from '../../platform/events.ts';
import { ApiError, conflictError, plainError } from '../../platform/http/errors.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { normalizeAddress, parseKeepUntil, requireAddress, SUPPRESSION_TYPES, type SuppressionType } from './input.ts';
import type { SuppressionsTable } from './tables.ts';

export { SUPPRESSION_TYPES, type SuppressionType } from './input.ts';

type SuppressionRow = Selectable<SuppressionsTable>;

export type Suppression = {
  object: 'suppression';
  id: string;
  type: string;
  email: string;
  reason: string | null;
  created_at: string;
  keep_until: string | null;
};

/** The suppression object of the API and of suppression.* event payloads (https://emailit.com/docs/webhooks/event-types.md). */
export function suppressionObject(row: SuppressionRow): Suppression {
  return {
    object: 'suppression',
    id: row.id,
    type: row.type,
    email: row.email,
    reason: row.reason,
    created_at: row.created_at,
    keep_until: row.keep_until,
  };
}

export interface CreateSuppressionInput {
  email: string;
  type?: SuppressionType;
  reason?: string | null;
  keep_until?: string | number | null;
}

export type UpdateSuppressionInput = Partial<CreateSuppressionInput>;

const DUPLICATE = 'A suppression of this type already exists for this address';
const NOT_FOUND = 'Suppression not found';

export async function createSuppression(db: Db, workspaceId: string, input: CreateSuppressionInput): Promise<Suppression> {
  const email = requireAddress(input.email);
  const type = input.type ?? 'recipient';
  const keepUntil = parseKeepUntil(input.keep_until);
  return withDuplicateAsConflict(db, workspaceId, email, type, () =>
    db.transaction().execute(async (tx) => {
      const existing = await findByAddressAndType(tx, workspaceId, email, type);
      if (existing) throw conflictError(DUPLICATE, suppressionObject(existing));
      const now = nowIso();
      const row: SuppressionRow = {
        id: newId('sup'),
        workspace_id: workspaceId,
        email,
        type,
        reason: input.reason ?? null,
        keep_until: keepUntil,
        source: 'api',
        created_at: now,
        updated_at: now,
      };
      await tx.insertInto('suppressions').values(row).execute();
      const object = suppressionObject(row);
      await emitEvent(tx, workspaceId, 'suppression.created', object);
      return object;
    }),
  );
}

export async function getSuppression(db: Db, workspaceId: string, idOrAddress: string): Promise<Suppression> {
  return suppressionObject(await resolveSuppression(db, workspaceId, idOrAddress));
}

export async function updateSuppression(
  db: Db,
  workspaceId: string,
  idOrAddress: string,
  input: UpdateSuppressionInput,
): Promise<Suppression> {
  const given = (['email', 'type', 'reason', 'keep_until'] as const).filter((field) => input[field] !== undefined);
  if (given.length === 0) throw plainError(400, 'At least one of email, type, reason or keep_until is required');
  const email = input.email !== undefined ? requireAddress(input.email) : undefined;
  const keepUntil = input.keep_until !== undefined ? parseKeepUntil(input.keep_until) : undefined;
  const target = { email: '', type: '' }; // the address and type the update writes
  const attempt = () =>
    db.transaction().execute(async (tx) => {
      const row = await resolveSuppression(tx, workspaceId, idOrAddress);
      const next: SuppressionRow = {
        ...row,
        email: email ?? row.email,
        type: input.type ?? row.type,
        reason: input.reason !== undefined ? input.reason : row.reason,
        keep_until: keepUntil !== undefined ? keepUntil : row.keep_until,
        updated_at: nowIso(),
      };
      target.email = next.email;
      target.type = next.type;
      if (next.email !== row.email || next.type !== row.type) {
        const clash = await findByAddressAndType(tx, workspaceId, next.email, next.type);
        if (clash && clash.id !== row.id) throw conflictError(DUPLICATE, suppressionObject(clash));
      }
      await tx
        .updateTable('suppressions')
        .set({ email: next.email, type: next.type, reason: next.reason, keep_until: next.keep_until, updated_at: next.updated_at })
        .where('id', '=', row.id)
        .execute();
      const object = suppressionObject(next);
      await emitEvent(tx, workspaceId, 'suppression.updated', object);
      return object;
    });
  try {
    return await attempt();
  } catch (error) {
    // A concurrent write took the address and type between the check and the update.
    if (isUniqueViolation(error) && target.email !== '') throw await conflictFor(db, workspaceId, target.email, target.type);
    throw error;
  }
}

export async function deleteSuppression(db: Db, workspaceId: string, idOrAddress: string) {
  return db.transaction().execute(async (tx) => {
    const row = await resolveSuppression(tx, workspaceId, idOrAddress);
    await tx.deleteFrom('suppressions').where('id', '=', row.id).execute();
    await emitEvent(tx, workspaceId, 'suppression.deleted', suppressionObject(row));
    return { id: row.id, email: row.email, deleted: true as const };
  });
}

const listSpec: ListSpec = {
  fields: {
    email: { type: 'string' },
    // A missing reason sorts as empty text, first ascending on both engines (they order NULLs differently).
    reason: { type: 'string', expression: sql`coalesce(reason, '')` },
    type: { type: 'enum', values: SUPPRESSION_TYPES },
    created_at: { type: 'date' },
  },
  searchColumns: ['email', 'reason'],
  sortConvention: 'sort-order',
};

/** Every suppression, automatic and expired ones included; `q` is an alias of `search`. */
export async function listSuppressions(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const effective: Query = query.search === undefined && query.q !== undefined ? { ...query, search: query.q } : query;
  const base = db.selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId);
  return pageLimitList(applyListQuery(base, effective, listSpec), effective, requestUrl, 10, suppressionObject);
}

/**
 * The active suppressions (keep_until null or in the future) among `addresses` (compared in
 * lowercase), optionally only of `types`. Sends pass ['recipient']; campaigns pass nothing
 * (every type blocks them).
 */
const activeOfOneType = preparedQuery((db, p: { workspaceId: string; email: string; type: string; now: string }) =>
  db
    .selectFrom('suppressions')
    .selectAll()
    .where('workspace_id', '=', p.workspaceId)
    .where('email', '=', p.email)
    .where('type', '=', p.type)
    .where((eb) => eb.or([eb('keep_until', 'is', null), eb('keep_until', '>', p.now)])),
);

const oneTypeParams = (workspaceId: string, address: string, type: string, now: string) => ({
  workspaceId,
  email: address.trim().toLowerCase(),
  type,
  now,
});

/** activeSuppressions' read for one address and type, to fetch ahead with others (prepared.ts
 *  `prefetch`); `now` as given to activeSuppressions. */
export const suppressionRead = (workspaceId: string, address: string, type: string, now: string): PrefetchRead => ({
  query: activeOfOneType,
  params: oneTypeParams(workspaceId, address, type, now),
});

export async function activeSuppressions(
  db: Executor,
  workspaceId: string,
  addresses: string[],
  types?: string[],
  now = nowIso(),
): Promise<Suppression[]> {
  const wanted = [...new Set(addresses.map((a) => a.trim().toLowerCase()).filter((a) => a !== ''))];
  if (wanted.length === 0 || (types && types.length === 0)) return [];
  if (wanted.length === 1 && types?.length === 1) {
    // The common case of a single-recipient send: a statement compiled once.
    const rows = await activeOfOneType(db, oneTypeParams(workspaceId, wanted[0], types[0], now));
    return rows.map(suppressionObject);
  }
  const found: Suppression[] = [];
  for (let i = 0; i < wanted.length; i += 500) {
    let query = db
      .selectFrom('suppressions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('email', 'in', wanted.slice(i, i + 500))
      .where((eb) => eb.or([eb('keep_until', 'is', null), eb('keep_until', '>', now)]));
    if (types) query = query.where('type', 'in', types);
    for (const row of await query.orderBy('email').orderBy('type').execute()) found.push(suppressionObject(row));
  }
  return found;
}

/**
 * The suppression the service adds after a hard bounce or a complaint, inside the delivery
 * code's transaction. Upsert: an existing one of that type gets the new reason and, if it
 * had expired, becomes permanent again. No suppression.created (listen to
 * email.bounced / email.complained).
 */
export async function addAutomaticSuppression(
  tx: Executor,
  workspaceId: string,
  email: string,
  type: 'bounce' | 'complaint',
  reason: string,
): Promise<Suppression> {
  const address = normalizeAddress(email) ?? email.trim().toLowerCase();
  const now = nowIso();
  await tx
    .insertInto('suppressions')
    .values({
      id: newId('sup'),
      workspace_id: workspaceId,
      email: address,
      type,
      reason,
      keep_until: null,
      source: 'automatic',
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'email', 'type']).doUpdateSet((eb) => ({
        reason: eb.ref('excluded.reason'),
        updated_at: eb.ref('excluded.updated_at'),
        keep_until: eb
          .case()
          .when(eb.and([eb('suppressions.keep_until', 'is not', null), eb('suppressions.keep_until', '<=', now)]))
          .then(null)
          .else(eb.ref('suppressions.keep_until'))
          .end(),
      })),
    )
    .execute();
  const row = await findByAddressAndType(tx, workspaceId, address, type);
  return suppressionObject(row!);
}

async function findByAddressAndType(db: Executor, workspaceId: string, email: string, type: string) {
  return db
    .selectFrom('suppressions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .where('type', '=', type)
    .executeTakeFirst();
}

// By address, one of several types is returned: the one that blocks sends first.
const TYPE_PRIORITY = SUPPRESSION_TYPES;

/** The suppression a path names: a `sup_` id, or a URL-encoded address; 400 when neither. */
async function resolveSuppression(db: Executor, workspaceId: string, idOrAddress: string): Promise<SuppressionRow> {
  let row: SuppressionRow | undefined;
  if (looksLikeId(idOrAddress, 'sup')) {
    row = await db
      .selectFrom('suppressions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', idOrAddress)
      .executeTakeFirst();
  } else {
    const address = normalizeAddress(idOrAddress);
    if (address === null) throw plainError(400, 'Invalid suppression id or email address');
    const rows = await db
      .selectFrom('suppressions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('email', '=', address)
      .execute();
    rows.sort((a, b) => rank(a.type) - rank(b.type) || a.created_at.localeCompare(b.created_at));
    row = rows[0];
  }
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}

function rank(type: string): number {
  const index = (TYPE_PRIORITY as readonly string[]).indexOf(type);
  return index === -1 ? TYPE_PRIORITY.length : index;
}

/** Runs a create; a unique violation (a concurrent create won the race) becomes the 409. */
async function withDuplicateAsConflict<T>(db: Db, workspaceId: string, email: string, type: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isUniqueViolation(error)) throw await conflictFor(db, workspaceId, email, type);
    throw error;
  }
}

async function conflictFor(db: Db, workspaceId: string, email: string, type: string): Promise<ApiError> {
  const existing = await findByAddressAndType(db, workspaceId, email, type);
  return existing ? conflictError(DUPLICATE, suppressionObject(existing)) : plainError(409, DUPLICATE);
}
