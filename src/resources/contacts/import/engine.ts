// Contact imports: rows streamed from a file and parsed in batches
// (batches.ts; in a worker thread, parse-worker.ts, unless the caller is one), each batch
// written in one transaction of bulk statements (writers.ts) while the next is parsed.
// - New addresses become contacts; existing contacts get the names and custom fields the row
//   gives (custom fields merged key by key); `unsubscribed` true unsubscribes, and nothing in
//   an import ever subscribes again someone who unsubscribed: not the contact, not a
//   membership. Suppressions are never touched (rows of suppressed addresses are counted).
// - With an audience, new members take places under the plan's cap; rows beyond it are
//   skipped with the reason and write nothing.
// - A bad row is skipped with its number and reason; a file that cannot be read stops the
//   import, and the summary says which rows were committed (every batch before the failing
//   one). Imports emit no per-contact events: a million `contact.created` would flood
//   webhooks and start a million automation runs; an import is one bulk operation.
import type { Db, Executor } from '../../../platform/db/database.ts';
import { nowIso } from '../../../platform/clock.ts';
import { plainError } from '../../../platform/http/errors.ts';
import {
  findAudience,
  takeSubscriberPlaces,
  workspacePlan,
  SUBSCRIBER_LIMITS,
  type AudienceRow,
  type SubscriberRow,
} from '../../audiences/index.ts';
import type { Plan } from '../../workspaces/service.ts';
import type { ContactRow } from '../records.ts';
import { collectGarbage } from './memory.ts';
import type { ImportRow } from './rows.ts';
import type { ParsedBatch } from './batches.ts';
import { ImportFileError, type ImportFormat } from './sources.ts';
import { contactsByEmail, countSuppressed, writeContactRows, insertSubscriberRows, membershipsIn } from './writers.ts';
import { AscendingIds } from './ids.ts';

/** Rows per transaction through the API: the server's other writes wait while one commits. */
export const BATCH_ROWS = 5000;
/** Rows per transaction from the CLI (its own process; the server's writes wait for the lock
 *  through busy_timeout): fewer, larger commits rewrite each index page fewer times. */
export const CLI_BATCH_ROWS = 25_000;
const MAX_LISTED_ERRORS = 1000;
// A full collection once this many rows have gone by (see memory.ts).
const GC_EVERY_ROWS = 25_000;

export interface ImportSummary {
  object: 'contact_import';
  status: 'completed' | 'failed';
  format: ImportFormat;
  audience_id: string | null;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  subscribed: number;
  already_subscribed: number;
  kept_unsubscribed: number;
  suppressed: number;
  skipped: number;
  errors: Array<{ row: number; email: string | null; reason: string }>;
  errors_truncated: boolean;
  committed_rows: number;
  error?: string;
}

export interface ImportOptions {
  /** `aud_` id or name of an audience of the workspace to add every row to. */
  audience?: string | null;
  format: ImportFormat;
  /** Called when the import stops on a failure (the batches' source can be ended). */
  onFailure?: () => void;
  /** Called after each committed batch (progress bars). */
  onBatch?: (summary: Readonly<ImportSummary>) => void;
}

export interface ImportTarget {
  workspaceId: string;
  audience: AudienceRow | null;
  plan: Plan;
  contactIds: AscendingIds;
  subscriberIds: AscendingIds;
}

/** Resolves the audience first: an unknown one is a 404 before a byte of the file is read. */
export async function prepareImport(db: Db, workspaceId: string, audience: string | null | undefined): Promise<ImportTarget> {
  let row: AudienceRow | null = null;
  if (audience) {
    row = (await findAudience(db, workspaceId, audience)) ?? null;
    if (!row) throw plainError(404, 'Audience not found');
  }
  return {
    workspaceId,
    audience: row,
    plan: await workspacePlan(db, workspaceId),
    contactIds: new AscendingIds('con'),
    subscriberIds: new AscendingIds('sub'),
  };
}

/** Writes the batches of a file (parse-worker.ts), one transaction each. */
export async function importContacts(
  db: Db,
  target: ImportTarget,
  batches: AsyncIterable<ParsedBatch>,
  options: ImportOptions,
): Promise<ImportSummary> {
  const summary: ImportSummary = {
    object: 'contact_import',
    status: 'completed',
    format: options.format,
    audience_id: target.audience?.id ?? null,
    rows: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    subscribed: 0,
    already_subscribed: 0,
    kept_unsubscribed: 0,
    suppressed: 0,
    skipped: 0,
    errors: [],
    errors_truncated: false,
    committed_rows: 0,
  };
  const skip = (row: number, email: string | null, reason: string) => {
    summary.skipped++;
    if (summary.errors.length < MAX_LISTED_ERRORS) summary.errors.push({ row, email, reason });
    else summary.errors_truncated = true;
  };
  let sinceGc = 0;
  let writing: ImportRow[] = [];
  const iterator = batches[Symbol.asyncIterator]();
  let pending = iterator.next();
  try {
    for (;;) {
      const step = await pending;
      if (step.done) break;
      const batch = step.value;
      // The next batch is read and parsed while this one is written (on PostgreSQL the
      // thread is free while the server works; a worker parses in parallel anyway).
      pending = iterator.next();
      pending.catch(() => {}); // awaited on the next turn; a failure then is reported there
      summary.rows = batch.rowsSeen;
      for (const row of batch.skipped) skip(row.row, row.email, row.reason);
      const rows = (writing = batch.rows);
      if (rows.length > 0) {
        // Counted once committed: a batch that fails counts for nothing.
        const outcome = await db.transaction().execute((tx) => writeBatch(tx, target, rows));
        for (const key of COUNTS) summary[key] += outcome.counts[key];
        for (const refused of outcome.refused) skip(refused.row, refused.email, refused.reason);
      }
      summary.committed_rows = batch.lastRow;
      writing = [];
      if ((sinceGc += rows.length) >= GC_EVERY_ROWS) {
        sinceGc = 0;
        collectGarbage();
      }
      options.onBatch?.(summary);
    }
  } catch (error) {
    options.onFailure?.();
    void iterator.return?.(undefined).catch(() => {});
    summary.status = 'failed';
    const detail =
      error instanceof ImportFileError
        ? error.message
        : `row ${writing[0]?.row ?? summary.committed_rows + 1} onwards could not be written: ${(error as Error).message}`;
    summary.error = `${detail}. Rows up to ${summary.committed_rows} are committed; nothing after them was written.`;
  }
  return summary;
}

function customFieldsAfter(contact: ContactRow, row: ImportRow): string {
  if (row.custom_fields === '{}') return contact.custom_fields;
  return JSON.stringify({
    ...(JSON.parse(contact.custom_fields) as Record<string, unknown>),
    ...(JSON.parse(row.custom_fields) as Record<string, unknown>),
  });
}

const COUNTS = ['created', 'updated', 'unchanged', 'subscribed', 'already_subscribed', 'kept_unsubscribed', 'suppressed'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;

async function writeBatch(
  tx: Executor,
  target: ImportTarget,
  rows: ImportRow[],
): Promise<{ counts: Counts; refused: Array<{ row: number; email: string; reason: string }> }> {
  const summary: Counts = {
    created: 0,
    updated: 0,
    unchanged: 0,
    subscribed: 0,
    already_subscribed: 0,
    kept_unsubscribed: 0,
    suppressed: 0,
  };
  const refusedRows: Array<{ row: number; email: string; reason: string }> = [];
  const { workspaceId, audience } = target;
  const now = nowIso();
  const existing = new Map(
    (
      await contactsByEmail(
        tx,
        workspaceId,
        rows.map((r) => r.email),
      )
    ).map((c) => [c.email, c]),
  );
  const members = audience
    ? await membershipsIn(
        tx,
        audience.id,
        [...existing.values()].map((c) => c.id),
      )
    : new Map<string, number>();

  // Places for the new members, in file order; the rows beyond the cap are skipped whole.
  let admitted = rows;
  if (audience) {
    const joining = rows.filter((r) => !members.has(existing.get(r.email)?.id ?? ''));
    const taken = await takeSubscriberPlaces(tx, target.plan, audience, joining.length, { partial: true });
    if (taken < joining.length) {
      const refused = new Set(joining.slice(taken));
      const limit = SUBSCRIBER_LIMITS[target.plan];
      for (const r of refused)
        refusedRows.push({
          row: r.row,
          email: r.email,
          reason: `the audience "${audience.name}" is at its plan's limit of ${limit?.toLocaleString('en-US')} subscribers`,
        });
      admitted = rows.filter((r) => !refused.has(r));
    }
  }

  const newContacts: ContactRow[] = [];
  const changedContacts: ContactRow[] = [];
  const newMembers: SubscriberRow[] = [];
  // In address order (a batch has each address once, so the outcome is the same): ids are
  // handed out in this order, so every index of both tables (ids, addresses, memberships)
  // takes the batch as one ascending run instead of scattered inserts.
  const ordered = [...admitted].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  for (const row of ordered) {
    let contact = existing.get(row.email);
    if (contact) {
      const next: ContactRow = {
        ...contact,
        first_name: row.first_name ?? contact.first_name,
        last_name: row.last_name ?? contact.last_name,
        custom_fields: customFieldsAfter(contact, row),
        unsubscribed: row.unsubscribe ? 1 : contact.unsubscribed,
      };
      if (
        next.first_name !== contact.first_name ||
        next.last_name !== contact.last_name ||
        next.custom_fields !== contact.custom_fields ||
        next.unsubscribed !== contact.unsubscribed
      ) {
        next.updated_at = now;
        changedContacts.push(next);
        summary.updated++;
      } else {
        summary.unchanged++;
      }
      contact = next;
    } else {
      contact = {
        id: target.contactIds.next(),
        workspace_id: workspaceId,
        email: row.email,
        first_name: row.first_name ?? null,
        last_name: row.last_name ?? null,
        custom_fields: row.custom_fields,
        unsubscribed: row.unsubscribe ? 1 : 0,
        created_at: now,
        updated_at: now,
      };
      newContacts.push(contact);
      summary.created++;
    }
    if (!audience) continue;
    const membership = members.get(contact.id);
    if (membership === 1) summary.already_subscribed++;
    else if (membership === 0) summary.kept_unsubscribed++;
    else {
      // A contact unsubscribed from all campaigns joins unsubscribed, as POST /contacts does.
      const subscribed = contact.unsubscribed === 0;
      newMembers.push({
        id: target.subscriberIds.next(),
        workspace_id: workspaceId,
        audience_id: audience.id,
        contact_id: contact.id,
        subscribed: subscribed ? 1 : 0,
        subscribed_at: subscribed ? now : null,
        unsubscribed_at: subscribed ? null : now,
        created_at: now,
        updated_at: now,
      });
      if (subscribed) summary.subscribed++;
      else summary.kept_unsubscribed++;
    }
  }
  await writeContactRows(tx, changedContacts, true);
  await writeContactRows(tx, newContacts);
  await insertSubscriberRows(tx, newMembers);
  summary.suppressed += await countSuppressed(
    tx,
    workspaceId,
    admitted.map((r) => r.email),
    now,
  );
  return { counts: summary, refused: refusedRows };
}
