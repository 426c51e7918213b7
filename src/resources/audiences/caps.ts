// Subscribers per audience by plan (https://emailit.com/docs/limits.md): the cap applies to adding
// subscribers, imports, the subscribe link and automations. A subscriber is a membership,
// subscribed or not, so unsubscribing frees no place and resubscribing takes none. The count lives
// on the audience row and changes in the transaction of each membership change; taking places is
// one conditional UPDATE, so concurrent adds can never overshoot.
import { dialectOf, type Executor } from '../../platform/db/database.ts';
import { ApiError, plainError } from '../../platform/http/errors.ts';
import { literal, writeHotRow } from '../../platform/db/hot-rows.ts';
import { getWorkspace, PLAN_NAMES, type Plan } from '../workspaces/service.ts';

export const SUBSCRIBER_LIMITS: Record<Plan, number | null> = { payg: 10_000, pro: 50_000, business: 250_000, custom: null };

export interface Usage {
  used: number;
  limit: number | null;
  plan: string;
}

export async function workspacePlan(db: Executor, workspaceId: string): Promise<Plan> {
  const workspace = await getWorkspace(db, workspaceId);
  return workspace?.plan ?? 'payg';
}

export function usageOf(plan: Plan, used: number): Usage {
  return { used, limit: SUBSCRIBER_LIMITS[plan], plan: PLAN_NAMES[plan] };
}

/** The 422 `{error, usage}` of an audience at its plan's limit. */
export function subscriberLimitError(audienceName: string, usage: Usage): ApiError {
  return new ApiError(422, {
    error: `Subscriber limit reached: the audience "${audienceName}" has ${usage.used.toLocaleString('en-US')} of the ${usage.limit?.toLocaleString('en-US')} subscribers the ${usage.plan} plan allows per audience`,
    usage,
  });
}

/**
 * Takes up to `wanted` places in the audience: all of them, or (with `partial`) as many as are
 * left. Returns how many were taken; without `partial`, a shortfall is the 422.
 */
export async function takeSubscriberPlaces(
  tx: Executor,
  plan: Plan,
  audience: { id: string; name: string },
  wanted: number,
  options: { partial?: boolean } = {},
): Promise<number> {
  if (wanted <= 0) return 0;
  const limit = SUBSCRIBER_LIMITS[plan];
  let query = tx
    .updateTable('audiences')
    .set((eb) => ({ subscriber_count: eb('subscriber_count', '+', wanted) }))
    .where('id', '=', audience.id);
  if (limit !== null) query = query.where('subscriber_count', '<=', limit - wanted);
  const taken = await query.returning('subscriber_count').executeTakeFirst();
  if (taken) return wanted;
  let current = tx.selectFrom('audiences').select('subscriber_count').where('id', '=', audience.id);
  // Locked, so that the places counted as left are still left when taken.
  if (dialectOf(tx) === 'postgres') current = current.forUpdate();
  const row = await current.executeTakeFirst();
  // Deleted by another request since this one looked it up.
  if (!row) throw plainError(404, 'Audience not found');
  const left = Math.max(0, (limit ?? Infinity) - row.subscriber_count);
  if (!options.partial || left === 0) {
    if (options.partial) return 0;
    throw subscriberLimitError(audience.name, usageOf(plan, row.subscriber_count));
  }
  await tx
    .updateTable('audiences')
    .set((eb) => ({ subscriber_count: eb('subscriber_count', '+', left) }))
    .where('id', '=', audience.id)
    .execute();
  return left;
}

/** Gives back `n` places (memberships deleted). */
export async function releaseSubscriberPlaces(tx: Executor, audienceId: string, n: number): Promise<void> {
  if (n <= 0) return;
  await tx
    .updateTable('audiences')
    .set((eb) => ({ subscriber_count: eb('subscriber_count', '-', n) }))
    .where('id', '=', audienceId)
    .execute();
}

// Our own SQLSTATE for a place refused at commit, raised by the statement below.
const NO_PLACE_SQLSTATE = 'PL422';

/**
 * takeSubscriberPlaces (all `wanted` or the 422) for a transaction run by groupCommit: on
 * PostgreSQL the UPDATE of the audience's count goes out with the COMMIT (hot-rows.ts), so its
 * row lock is not held over the transaction's later round trips, and a full audience makes the
 * commit fail with the same 422 (nothing of the transaction is stored). Elsewhere it runs now.
 */
export async function takeSubscriberPlacesAtCommit(
  tx: Executor,
  plan: Plan,
  audience: { id: string; name: string },
  wanted: number,
): Promise<void> {
  if (wanted <= 0) return;
  const limit = SUBSCRIBER_LIMITS[plan];
  const update = (total: number) =>
    `update audiences set subscriber_count = subscriber_count + ${literal(total)} where id = ${literal(audience.id)}`;
  const statement = (total: number) =>
    limit === null
      ? update(total)
      : `do $take$ begin
    ${update(total)} and subscriber_count <= ${literal(limit - total)};
    if not found then raise exception 'subscriber limit reached' using errcode = '${NO_PLACE_SQLSTATE}'; end if;
  end $take$`;
  const refusal = async (db: Executor) => {
    const row = await db.selectFrom('audiences').select('subscriber_count').where('id', '=', audience.id).executeTakeFirst();
    return subscriberLimitError(audience.name, usageOf(plan, row?.subscriber_count ?? 0));
  };
  await writeHotRow(
    tx,
    { key: `4 audience places ${audience.id}`, amount: wanted, statement, refusalCode: NO_PLACE_SQLSTATE, refusal },
    async () => {
      await takeSubscriberPlaces(tx, plan, audience, wanted);
    },
  );
}
