// The bulk statements of an import, per dialect: multi-row inserts on SQLite (the largest
// that stay under its bound-parameter limit, compiled once per size and kept by the
// connection's statement cache), and on PostgreSQL one statement per batch whatever its
// size: each column bound as one array and expanded with unnest (a few parameters, one plan).
import { CompiledQuery } from 'kysely';
import type { Executor } from '../../../platform/db/database.ts';
import { dialectOf } from '../../../platform/db/database.ts';
import type { ContactRow } from '../records.ts';
import type { SubscriberRow } from '../../audiences/records.ts';

const CONTACT_COLUMNS = ['id', 'workspace_id', 'email', 'first_name', 'last_name', 'custom_fields', 'unsubscribed', 'created_at', 'updated_at'] as const;
const SUBSCRIBER_COLUMNS = ['id', 'workspace_id', 'audience_id', 'contact_id', 'subscribed', 'subscribed_at', 'unsubscribed_at', 'created_at', 'updated_at'] as const;
// SQLite binds at most 32,766 parameters per statement.
const SQLITE_ROWS_PER_STATEMENT = 500;

const placeholders = new Map<string, string>();
function sqliteInsert(table: string, columns: readonly string[], rows: number): string {
  const key = `${table}:${rows}`;
  let text = placeholders.get(key);
  if (!text) {
    const tuple = `(${columns.map(() => '?').join(',')})`;
    text = `insert into ${table} (${columns.join(',')}) values ${Array.from({ length: rows }, () => tuple).join(',')}`;
    placeholders.set(key, text);
  }
  return text;
}

async function sqliteInsertRows<R extends Record<string, unknown>>(tx: Executor, table: string, columns: readonly (keyof R & string)[], rows: readonly R[]): Promise<void> {
  for (let i = 0; i < rows.length; i += SQLITE_ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + SQLITE_ROWS_PER_STATEMENT);
    const params: unknown[] = new Array(chunk.length * columns.length);
    let p = 0;
    for (const row of chunk) for (const column of columns) params[p++] = row[column];
    await tx.executeQuery(CompiledQuery.raw(sqliteInsert(table, columns, chunk.length), params));
  }
}

const column = <R>(rows: readonly R[], name: keyof R) => rows.map((row) => row[name]);

export async function insertContactRows(tx: Executor, rows: readonly ContactRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(tx) === 'sqlite') return sqliteInsertRows(tx, 'contacts', CONTACT_COLUMNS, rows);
  await tx.executeQuery(
    CompiledQuery.raw(
      `insert into contacts (${CONTACT_COLUMNS.join(',')})
       select u.id, $1, u.email, u.first_name, u.last_name, u.custom_fields, u.unsubscribed, u.created_at, u.created_at
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[]) as u(id, email, first_name, last_name, custom_fields, unsubscribed, created_at)`,
      [rows[0].workspace_id, column(rows, 'id'), column(rows, 'email'), column(rows, 'first_name'), column(rows, 'last_name'), column(rows, 'custom_fields'), column(rows, 'unsubscribed'), column(rows, 'created_at')],
    ),
  );
}

export async function insertSubscriberRows(tx: Executor, rows: readonly SubscriberRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(tx) === 'sqlite') return sqliteInsertRows(tx, 'subscribers', SUBSCRIBER_COLUMNS, rows);
  await tx.executeQuery(
    CompiledQuery.raw(
      `insert into subscribers (${SUBSCRIBER_COLUMNS.join(',')})
       select u.id, $1, $2, u.contact_id, u.subscribed, u.subscribed_at, u.unsubscribed_at, u.created_at, u.created_at
       from unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[]) as u(id, contact_id, subscribed, subscribed_at, unsubscribed_at, created_at)`,
      [
        rows[0].workspace_id,
        rows[0].audience_id,
        column(rows, 'id'),
        column(rows, 'contact_id'),
        column(rows, 'subscribed'),
        column(rows, 'subscribed_at'),
        column(rows, 'unsubscribed_at'),
        column(rows, 'created_at'),
      ],
    ),
  );
}

const SQLITE_IN_LIST = 900;

/** The workspace's contacts among `emails`. */
export async function contactsByEmail(tx: Executor, workspaceId: string, emails: readonly string[]): Promise<ContactRow[]> {
  if (emails.length === 0) return [];
  if (dialectOf(tx) === 'postgres') {
    const result = await tx.executeQuery<ContactRow>(CompiledQuery.raw('select * from contacts where workspace_id = $1 and email = any($2::text[])', [workspaceId, emails]));
    return result.rows;
  }
  const found: ContactRow[] = [];
  for (let i = 0; i < emails.length; i += SQLITE_IN_LIST) {
    const chunk = emails.slice(i, i + SQLITE_IN_LIST);
    const result = await tx.executeQuery<ContactRow>(
      CompiledQuery.raw(`select * from contacts where workspace_id = ? and email in (${chunk.map(() => '?').join(',')})`, [workspaceId, ...chunk]),
    );
    found.push(...result.rows);
  }
  return found;
}

/** Memberships of `contactIds` in one audience: contact id → subscribed (0/1). */
export async function membershipsIn(tx: Executor, audienceId: string, contactIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (contactIds.length === 0) return out;
  const chunks = dialectOf(tx) === 'postgres' ? [contactIds] : Array.from({ length: Math.ceil(contactIds.length / SQLITE_IN_LIST) }, (_, i) => contactIds.slice(i * SQLITE_IN_LIST, (i + 1) * SQLITE_IN_LIST));
  for (const chunk of chunks) {
    const rows = await tx.selectFrom('subscribers').select(['contact_id', 'subscribed']).where('audience_id', '=', audienceId).where('contact_id', 'in', chunk).execute();
    for (const row of rows) out.set(row.contact_id, row.subscribed);
  }
  return out;
}

/** How many of `emails` have an active suppression of any type. */
export async function countSuppressed(tx: Executor, workspaceId: string, emails: readonly string[], now: string): Promise<number> {
  if (emails.length === 0) return 0;
  let count = 0;
  const chunks = dialectOf(tx) === 'postgres' ? [emails] : Array.from({ length: Math.ceil(emails.length / SQLITE_IN_LIST) }, (_, i) => emails.slice(i * SQLITE_IN_LIST, (i + 1) * SQLITE_IN_LIST));
  for (const chunk of chunks) {
    const row = await tx
      .selectFrom('suppressions')
      .select((eb) => eb.fn.count<number>('email').distinct().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('email', 'in', chunk)
      .where((eb) => eb.or([eb('keep_until', 'is', null), eb('keep_until', '>', now)]))
      .executeTakeFirst();
    count += Number(row?.n ?? 0);
  }
  return count;
}
