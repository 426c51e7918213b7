// IP pool assignments (docs/delivery.md, "IP pools"): which pool of DELIVERY_IP_POOLS a
// workspace's mail leaves from, for all of it (`all`) or per kind (`transactional`, `bulk`:
// campaigns and automations). A workspace's own assignment wins, then the one for every
// workspace (set with the CLI), then the pool DELIVERY_IP_POOLS marks as default, else none
// (the OS chooses the source address, as without pools).
import type { Db, Executor } from '../../platform/db/database.ts';
import { nowIso } from '../../platform/clock.ts';
import { fieldValidationError } from '../../platform/http/errors.ts';
import { findPool, type IpPools } from '../../mail/ip-pools.ts';
import type { Priority } from '../../mail/shaping.ts';

export const POOL_KINDS = ['all', 'transactional', 'bulk'] as const;
export type PoolKind = (typeof POOL_KINDS)[number];
export type PoolAssignment = Record<PoolKind, string | null>;

const ASSIGNMENTS_CACHE_MS = 2_000;
const EVERY_WORKSPACE = '*';
const idOf = (workspaceId: string | null, kind: PoolKind) => `${workspaceId ?? EVERY_WORKSPACE}|${kind}`;

interface AssignmentRow {
  workspace_id: string | null;
  kind: string;
  pool: string;
}

const empty = (): PoolAssignment => ({ all: null, transactional: null, bulk: null });

function assignmentOf(rows: AssignmentRow[], workspaceId: string | null): PoolAssignment {
  const out = empty();
  for (const row of rows)
    if (row.workspace_id === workspaceId && (POOL_KINDS as readonly string[]).includes(row.kind)) out[row.kind as PoolKind] = row.pool;
  return out;
}

/** The assignment of `workspaceId` (null: the one for every workspace), as stored. */
export async function poolAssignment(db: Executor, workspaceId: string | null): Promise<PoolAssignment> {
  let query = db.selectFrom('delivery_pool_assignments').select(['workspace_id', 'kind', 'pool']);
  query = workspaceId ? query.where('workspace_id', '=', workspaceId) : query.where('workspace_id', 'is', null);
  return assignmentOf(await query.execute(), workspaceId);
}

/**
 * Sets the assignment of `workspaceId` (null: every workspace) for the kinds given; a null pool
 * removes that kind's assignment. Every name must be a configured pool (400 otherwise, nothing
 * changed). The assignment as it is then.
 */
export async function assignPools(
  db: Db,
  pools: IpPools,
  workspaceId: string | null,
  input: Partial<PoolAssignment>,
): Promise<PoolAssignment> {
  const errors: Record<string, string[]> = {};
  const changes: Array<[PoolKind, string | null]> = [];
  for (const kind of POOL_KINDS) {
    const value = input[kind];
    if (value === undefined) continue;
    const name = typeof value === 'string' ? value.trim().toLowerCase() : null;
    if (name !== null && !findPool(pools, name)) {
      errors[kind] = [
        pools.pools.length
          ? `No IP pool named "${value}"; configured: ${pools.pools.map((p) => p.name).join(', ')}`
          : 'No IP pools are configured (DELIVERY_IP_POOLS)',
      ];
      continue;
    }
    changes.push([kind, name]);
  }
  if (Object.keys(errors).length) throw fieldValidationError(errors);
  const at = nowIso();
  await db.transaction().execute(async (tx) => {
    for (const [kind, pool] of changes) {
      const id = idOf(workspaceId, kind);
      if (pool === null) {
        await tx.deleteFrom('delivery_pool_assignments').where('id', '=', id).execute();
        continue;
      }
      await tx
        .insertInto('delivery_pool_assignments')
        .values({ id, workspace_id: workspaceId, kind, pool, updated_at: at })
        .onConflict((oc) => oc.column('id').doUpdateSet({ pool, updated_at: at }))
        .execute();
    }
  });
  cache.delete(db);
  return poolAssignment(db, workspaceId);
}

/** Where a pool comes from: the workspace's assignment, every workspace's, the default pool, or none. */
export type PoolOrigin = 'workspace' | 'server' | 'default' | null;

/** The pool mail of `kind` from `workspaceId` leaves from, given every assignment row. */
export function resolvePool(
  rows: AssignmentRow[],
  pools: IpPools,
  workspaceId: string,
  kind: Priority,
): { pool: string | null; from: PoolOrigin } {
  const pick = (owner: string | null) => {
    const own = rows.filter((row) => row.workspace_id === owner);
    // A pool removed from DELIVERY_IP_POOLS is skipped: the next assignment in line applies.
    return [kind, 'all'].map((k) => own.find((row) => row.kind === k)?.pool).find((name) => findPool(pools, name)) ?? null;
  };
  const workspace = pick(workspaceId);
  if (workspace) return { pool: workspace, from: 'workspace' };
  const server = pick(null);
  if (server) return { pool: server, from: 'server' };
  return pools.defaultPool ? { pool: pools.defaultPool, from: 'default' } : { pool: null, from: null };
}

const cache = new Map<Db, { expires: number; rows: Promise<AssignmentRow[]> }>();

/** Every assignment, cached briefly (each delivery asks). */
function allAssignments(db: Db): Promise<AssignmentRow[]> {
  const hit = cache.get(db);
  if (hit && hit.expires > Date.now()) return hit.rows;
  const rows = db.selectFrom('delivery_pool_assignments').select(['workspace_id', 'kind', 'pool']).execute();
  cache.set(db, { expires: Date.now() + ASSIGNMENTS_CACHE_MS, rows });
  rows.catch(() => cache.delete(db));
  return rows;
}

/** The pool a delivery leaves from (null: the OS chooses); no database read without pools. */
export async function poolFor(db: Db, pools: IpPools, workspaceId: string, kind: Priority): Promise<string | null> {
  if (pools.pools.length === 0) return null;
  return resolvePool(await allAssignments(db), pools, workspaceId, kind).pool;
}

/** The pools and the assignments that apply to `workspaceId` (GET /delivery/pools, the CLI). */
export async function poolsView(db: Db, pools: IpPools, workspaceId: string | null) {
  const rows = await db.selectFrom('delivery_pool_assignments').select(['workspace_id', 'kind', 'pool']).execute();
  const effective = (kind: Priority) =>
    workspaceId
      ? resolvePool(rows, pools, workspaceId, kind)
      : resolvePool(
          rows.filter((row) => row.workspace_id === null),
          pools,
          EVERY_WORKSPACE,
          kind,
        );
  return {
    object: 'ip_pool_list' as const,
    data: pools.pools.map((pool) => ({
      object: 'ip_pool' as const,
      name: pool.name,
      default: pool.name === pools.defaultPool,
      addresses: pool.addresses.map((a) => ({ address: a.address, helo: a.helo })),
    })),
    assignment: workspaceId ? assignmentOf(rows, workspaceId) : null,
    every_workspace: assignmentOf(rows, null),
    effective: { transactional: effective('transactional'), bulk: effective('bulk') },
  };
}

/** Every workspace's own assignment (the CLI's overview). */
export async function workspaceAssignments(db: Executor): Promise<Array<{ workspace_id: string } & PoolAssignment>> {
  const rows = await db
    .selectFrom('delivery_pool_assignments')
    .select(['workspace_id', 'kind', 'pool'])
    .where('workspace_id', 'is not', null)
    .orderBy('workspace_id')
    .execute();
  const ids = [...new Set(rows.map((row) => row.workspace_id as string))];
  return ids.map((id) => ({ workspace_id: id, ...assignmentOf(rows, id) }));
}
