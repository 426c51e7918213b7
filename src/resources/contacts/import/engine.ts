// Contact imports (issue 11, addendum §8): rows streamed from a file, written in batches of
// a few thousand, each batch one transaction of bulk statements (writers.ts).
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
import { newId } from '../../../platform/ids.ts';
import { nowIso } from '../../../platform/clock.ts';
import { plainError } from '../../../platform/http/errors.ts';
import { fieldDefinitions } from '../../custom-fields/service.ts';
import { findAudience, type AudienceRow, type SubscriberRow } from '../../audiences/records.ts';
import { takeSubscriberPlaces, workspacePlan, SUBSCRIBER_LIMITS } from '../../audiences/caps.ts';
import { newSubscriberRow } from '../../audiences/subscribers.ts';
import type { Plan } from '../../workspaces/service.ts';
import type { ContactRow } from '../records.ts';
import { collectGarbage } from './memory.ts';
import { ColumnMap, hasEmailColumn, readRow, type ImportRow } from './rows.ts';
import { ImportFileError, type ImportFormat, type SourceRow } from './sources.ts';
import { contactsByEmail, countSuppressed, insertContactRows, insertSubscriberRows, membershipsIn } from './writers.ts';

export const BATCH_ROWS = 2000;
const MAX_LISTED_ERRORS = 1000;
const GC_EVERY_BATCHES = 10;

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
  /** Called after each committed batch (progress bars). */
  onBatch?: (summary: Readonly<ImportSummary>) => void;
}

interface Target {
  workspaceId: string;
  audience: AudienceRow | null;
  plan: Plan;
}

/** Resolves the audience first: an unknown one is a 404 before a byte of the file is read. */
export async function prepareImport(db: Db, workspaceId: string, audience: string | null | undefined): Promise<Target> {
  let row: AudienceRow | null = null;
  if (audience) {
    row = (await findAudience(db, workspaceId, audience)) ?? null;
    if (!row) throw plainError(404, 'Audience not found');
  }
  return { workspaceId, audience: row, plan: await workspacePlan(db, workspaceId) };
}

export async function importContacts(db: Db, target: Target, source: AsyncIterable<SourceRow>, options: ImportOptions): Promise<ImportSummary> {
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
  const definitions = await fieldDefinitions(db, target.workspaceId);
  const columns = new ColumnMap();
  let batch: ImportRow[] = [];
  let inBatch = new Set<string>();
  let lastRow = 0;
  let checkedHeader = options.format === 'json';
  let batches = 0;

  const flush = async () => {
    if (batch.length > 0) {
      const rows = batch;
      batch = [];
      inBatch = new Set();
      // Counted once committed: a batch that fails counts for nothing.
      const outcome = await db.transaction().execute((tx) => writeBatch(tx, target, rows));
      for (const key of COUNTS) summary[key] += outcome.counts[key];
      for (const refused of outcome.refused) skip(refused.row, refused.email, refused.reason);
    }
    summary.committed_rows = lastRow;
    if (++batches % GC_EVERY_BATCHES === 0) collectGarbage();
    options.onBatch?.(summary);
  };

  try {
    for await (const item of source) {
      if (!checkedHeader) {
        checkedHeader = true;
        if (item.values && !hasEmailColumn(columns, Object.keys(item.values))) {
          throw new ImportFileError('The CSV header has no email column (name one "email")', 1);
        }
      }
      summary.rows++;
      const read = readRow(item, columns, definitions);
      if (!read.ok) {
        skip(read.row, read.email, read.reason);
        lastRow = item.row;
        continue;
      }
      // A second row for the same address goes into the next batch, where it finds the
      // contact the first one made: the same outcome as when the rows are far apart.
      if (inBatch.has(read.value.email) || batch.length >= BATCH_ROWS) await flush();
      batch.push(read.value);
      inBatch.add(read.value.email);
      lastRow = item.row;
    }
    await flush();
  } catch (error) {
    summary.status = 'failed';
    const detail = error instanceof ImportFileError ? error.message : `row ${batch[0]?.row ?? lastRow + 1} onwards could not be written: ${(error as Error).message}`;
    summary.error = `${detail}. Rows up to ${summary.committed_rows} are committed; nothing after them was written.`;
  }
  return summary;
}

function customFieldsAfter(contact: ContactRow, row: ImportRow): string {
  if (Object.keys(row.custom_fields).length === 0) return contact.custom_fields;
  return JSON.stringify({ ...(JSON.parse(contact.custom_fields) as Record<string, unknown>), ...row.custom_fields });
}

function ascendingIds(prefix: string, n: number): string[] {
  const ids = Array.from({ length: n }, () => newId(prefix));
  return ids.sort();
}

const COUNTS = ['created', 'updated', 'unchanged', 'subscribed', 'already_subscribed', 'kept_unsubscribed', 'suppressed'] as const;
type Counts = Record<(typeof COUNTS)[number], number>;

async function writeBatch(tx: Executor, target: Target, rows: ImportRow[]): Promise<{ counts: Counts; refused: Array<{ row: number; email: string; reason: string }> }> {
  const summary: Counts = { created: 0, updated: 0, unchanged: 0, subscribed: 0, already_subscribed: 0, kept_unsubscribed: 0, suppressed: 0 };
  const refusedRows: Array<{ row: number; email: string; reason: string }> = [];
  const { workspaceId, audience } = target;
  const now = nowIso();
  const existing = new Map((await contactsByEmail(tx, workspaceId, rows.map((r) => r.email))).map((c) => [c.email, c]));
  const members = audience ? await membershipsIn(tx, audience.id, [...existing.values()].map((c) => c.id)) : new Map<string, number>();

  // Places for the new members, in file order; the rows beyond the cap are skipped whole.
  let admitted = rows;
  if (audience) {
    const joining = rows.filter((r) => !members.has(existing.get(r.email)?.id ?? ''));
    const taken = await takeSubscriberPlaces(tx, target.plan, audience, joining.length, { partial: true });
    if (taken < joining.length) {
      const refused = new Set(joining.slice(taken));
      const limit = SUBSCRIBER_LIMITS[target.plan];
      for (const r of refused) refusedRows.push({ row: r.row, email: r.email, reason: `the audience "${audience.name}" is at its plan's limit of ${limit?.toLocaleString('en-US')} subscribers` });
      admitted = rows.filter((r) => !refused.has(r));
    }
  }

  const newContacts: ContactRow[] = [];
  const newMembers: SubscriberRow[] = [];
  // Ids of a batch are handed out in ascending order (KSUIDs of one second differ only by
  // their random part), so each batch appends to the id indexes instead of scattering over
  // them: a third of the import's time on SQLite.
  const contactIds = ascendingIds('con', admitted.length);
  const subscriberIds = audience ? ascendingIds('sub', admitted.length) : [];
  for (const row of admitted) {
    let contact = existing.get(row.email);
    if (contact) {
      const next: ContactRow = {
        ...contact,
        first_name: row.first_name ?? contact.first_name,
        last_name: row.last_name ?? contact.last_name,
        custom_fields: customFieldsAfter(contact, row),
        unsubscribed: row.unsubscribe ? 1 : contact.unsubscribed,
      };
      if (next.first_name !== contact.first_name || next.last_name !== contact.last_name || next.custom_fields !== contact.custom_fields || next.unsubscribed !== contact.unsubscribed) {
        next.updated_at = now;
        await tx
          .updateTable('contacts')
          .set({ first_name: next.first_name, last_name: next.last_name, custom_fields: next.custom_fields, unsubscribed: next.unsubscribed, updated_at: now })
          .where('id', '=', contact.id)
          .execute();
        summary.updated++;
      } else {
        summary.unchanged++;
      }
      contact = next;
    } else {
      contact = {
        id: contactIds[newContacts.length],
        workspace_id: workspaceId,
        email: row.email,
        first_name: row.first_name ?? null,
        last_name: row.last_name ?? null,
        custom_fields: JSON.stringify(row.custom_fields),
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
      newMembers.push({ ...newSubscriberRow(workspaceId, audience.id, contact.id, subscribed, now), id: subscriberIds[newMembers.length] });
      if (subscribed) summary.subscribed++;
      else summary.kept_unsubscribed++;
    }
  }
  await insertContactRows(tx, newContacts);
  await insertSubscriberRows(tx, newMembers);
  summary.suppressed += await countSuppressed(tx, workspaceId, admitted.map((r) => r.email), now);
  return { counts: summary, refused: refusedRows };
}
