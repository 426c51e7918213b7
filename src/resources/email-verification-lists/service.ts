// Verification lists (https://emailit.com/docs/api-reference/email-verifications/lists.md): up to
// 10,000 addresses, trimmed, lowercased and de-duplicated (invalid ones left out), 5 credits per
// unique address charged up front, all or nothing, in the one transaction that stores the list, its
// addresses (pending verification rows) and the job that verifies them in the background.
import { sql, type Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.ts';
import { spendCredits } from '../../platform/credits.ts';
import { emitEvent } from '../../platform/events.ts';
import { enqueueJob } from '../../platform/jobs.ts';
import { looksLikeId, newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { frameworkError, plainError } from '../../platform/http/errors.ts';
import { applyListQuery, fetchPage, pageLinks, pageLimitList, pagingFrom, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { normalizeEmail, parseAddress } from '../../mail/address-checks.ts';
import {
  CREDITS_PER_VERIFICATION,
  insertVerificationRows,
  pendingRow,
  verificationObject,
  type VerificationRow,
} from '../email-verifications/service.ts';
import { LIST_STATUSES, VERIFICATION_RESULT_COUNTS } from './schemas.ts';
import type { EmailVerificationListsTable } from './tables.ts';

export const VERIFY_LIST_JOB = 'email_verification_list.verify';

type ListRow = Selectable<EmailVerificationListsTable>;

export interface ListStats {
  total_emails: number;
  processed_emails: number;
  successful_verifications: number;
  failed_verifications: number;
  pending_emails: number;
  results: Record<(typeof VERIFICATION_RESULT_COUNTS)[number], number>;
}

/** The object of the API and of email_verification_list.* payloads (https://emailit.com/docs/webhooks/event-types.md). */
export function listObject(row: ListRow) {
  return {
    object: 'email_verification_list' as const,
    id: row.id,
    name: row.name,
    status: row.status,
    stats: JSON.parse(row.stats) as ListStats,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function startingStats(total: number): ListStats {
  const results = Object.fromEntries(VERIFICATION_RESULT_COUNTS.map((key) => [key, 0])) as ListStats['results'];
  return { total_emails: total, processed_emails: 0, successful_verifications: 0, failed_verifications: 0, pending_emails: total, results };
}

export interface CreateListInput {
  name: string;
  emails: string[];
}

export async function createList(db: Db, workspaceId: string, input: CreateListInput) {
  const valid = input.emails.map(normalizeEmail).filter((email) => parseAddress(email) !== null);
  const unique = [...new Set(valid)];
  if (unique.length === 0) throw frameworkError(400, 'emails must contain at least one valid email address');
  return db.transaction().execute(async (tx) => {
    await spendCredits(tx, workspaceId, unique.length * CREDITS_PER_VERIFICATION);
    const now = nowIso();
    const list: ListRow = {
      id: newId('evl'),
      workspace_id: workspaceId,
      name: input.name,
      status: 'processing',
      stats: JSON.stringify(startingStats(unique.length)),
      valid_emails_count: valid.length,
      unique_emails_count: unique.length,
      created_at: now,
      updated_at: now,
      completed_at: null,
    };
    await tx.insertInto('email_verification_lists').values(list).execute();
    // Lists always use full mode.
    const rows = unique.map((email, position) => pendingRow({ workspaceId, listId: list.id, position, email, mode: 'full', now }));
    await insertVerificationRows(tx, rows);
    // One job per list, for its whole life: it verifies a share and asks to run again until done.
    await enqueueJob(tx, VERIFY_LIST_JOB, { list_id: list.id });
    const object = listObject(list);
    await emitEvent(tx, workspaceId, 'email_verification_list.created', object);
    return { ...object, valid_emails_count: valid.length, unique_emails_count: unique.length, dispatched_jobs: unique.length };
  });
}

const NOT_FOUND = 'Email verification list not found';

async function findList(db: Executor, workspaceId: string, id: string): Promise<ListRow> {
  const row = looksLikeId(id, 'evl')
    ? await db
        .selectFrom('email_verification_lists')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst()
    : undefined;
  if (!row) throw plainError(404, NOT_FOUND);
  return row;
}

export async function getList(db: Db, workspaceId: string, id: string) {
  return listObject(await findList(db, workspaceId, id));
}

const listSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    status: { type: 'enum', values: LIST_STATUSES },
    created_at: { type: 'date' },
  },
  searchColumns: ['name'],
  sortConvention: 'order-direction',
};

export async function listLists(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  // `status=completed` (the documented parameter) is the filter `status.exact=completed`.
  const effective: Query = query.status !== undefined ? { ...query, 'status.exact': query.status } : query;
  const base = db.selectFrom('email_verification_lists').selectAll().where('workspace_id', '=', workspaceId);
  return pageLimitList(applyListQuery(base, effective, listSpec), effective, requestUrl, 10, listObject);
}

/** One page of a list's verifications, in the order the addresses were given. */
export async function listResults(db: Db, workspaceId: string, id: string, query: Query, requestUrl: string) {
  const list = await findList(db, workspaceId, id);
  let base = db.selectFrom('email_verifications').selectAll().where('list_id', '=', list.id);
  const search = typeof query.search === 'string' ? query.search.trim().toLowerCase() : '';
  if (search !== '') base = base.where(sql<boolean>`email like ${`%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} escape '\\'`);
  const paging = pagingFrom(query, 50);
  const { rows, hasNext } = await fetchPage(base.orderBy('position'), paging);
  return { data: rows.map(verificationObject), ...pageLinks(requestUrl, paging, hasNext) };
}

/** Every verification of a list in order, a page at a time (exports). */
export async function* listVerifications(db: Db, workspaceId: string, id: string): AsyncGenerator<VerificationRow[]> {
  const list = await findList(db, workspaceId, id);
  for (let after = -1; ; ) {
    const rows = await db
      .selectFrom('email_verifications')
      .selectAll()
      .where('list_id', '=', list.id)
      .where('position', '>', after)
      .orderBy('position')
      .limit(1000)
      .execute();
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1].position!;
  }
}

export async function listName(db: Db, workspaceId: string, id: string): Promise<string> {
  return (await findList(db, workspaceId, id)).name;
}

/** Addresses of a list still waiting. */
export async function pendingCount(db: Executor, listId: string): Promise<number> {
  const row = await db
    .selectFrom('email_verifications')
    .select(sql<number>`count(*)`.as('count'))
    .where('list_id', '=', listId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Once every address is done: the final stats, `completed`, and email_verification_list.updated. */
export async function completeList(db: Db, listId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const list = await tx.selectFrom('email_verification_lists').selectAll().where('id', '=', listId).executeTakeFirst();
    if (!list || list.status !== 'processing' || (await pendingCount(tx, listId)) > 0) return;
    const groups = await tx
      .selectFrom('email_verifications')
      .select(['status', 'result', sql<number>`count(*)`.as('count')])
      .where('list_id', '=', listId)
      .groupBy(['status', 'result'])
      .execute();
    const catchAll = await tx
      .selectFrom('email_verifications')
      .select(sql<number>`count(*)`.as('count'))
      .where('list_id', '=', listId)
      .where('catch_all', '=', 1)
      .executeTakeFirst();
    const stats = startingStats(list.unique_emails_count);
    for (const group of groups) {
      const n = Number(group.count);
      if (group.status === 'completed') stats.successful_verifications += n;
      if (group.status === 'failed') stats.failed_verifications += n;
      const key = group.result as keyof ListStats['results'] | null;
      if (key && key in stats.results) stats.results[key] += n;
    }
    stats.results.catch_all = Number(catchAll?.count ?? 0);
    stats.processed_emails = stats.successful_verifications + stats.failed_verifications;
    stats.pending_emails = 0;
    const now = nowIso();
    const updated: ListRow = { ...list, status: 'completed', stats: JSON.stringify(stats), updated_at: now, completed_at: now };
    const result = await tx
      .updateTable('email_verification_lists')
      .set({ status: updated.status, stats: updated.stats, updated_at: now, completed_at: now })
      .where('id', '=', listId)
      .where('status', '=', 'processing')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) await emitEvent(tx, list.workspace_id, 'email_verification_list.updated', listObject(updated));
  });
}
