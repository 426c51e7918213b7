// The bulk statements of an import, per dialect. Every statement covers a whole batch (tens
// of thousands of rows) or a large part of it:
// - lookups take the batch's keys as ONE parameter and join against it: on SQLite a JSON array
//   expanded by json_each (CROSS JOIN keeps it the outer loop, so each key is one index
//   probe), on PostgreSQL an array with = ANY($n). No per-row queries, no IN lists.
// - inserts on SQLite are multi-row VALUES of 500 rows (the largest that stay well under its
//   bound-parameter limit, compiled once per size and kept by the connection's statement
//   cache); on PostgreSQL one statement per batch whatever its size: each column bound as one
//   array and expanded with unnest (a few parameters, one plan).
// - contacts the import changes are written back by the same inserts with
//   ON CONFLICT (id) DO UPDATE: one statement per 500 (SQLite) or per batch (PostgreSQL).
import { CompiledQuery } from 'kysely';
import type { Executor } from '../../../platform/db/database.ts';
import { dialectOf } from '../../../platform/db/database.ts';
import type { ContactRow } from '../records.ts';
import type { SubscriberRow } from '../../audiences/index.ts';

const CONTACT_COLUMNS = [
  'id',
  'workspace_id',
  'email',
  'first_name',
  'last_name',
  'custom_fields',
  'unsubscribed',
  'created_at',
  'updated_at',
] as const;
const SUBSCRIBER_COLUMNS = [
  'id',
  'workspace_id',
  'audience_id',
  'contact_id',
  'subscribed',
  'subscribed_at',
  'unsubscribed_at',
  'created_at',
  'updated_at',
] as const;
// SQLite binds at most 32,766 parameters per statement.
const SQLITE_ROWS_PER_STATEMENT = 500;
const CONTACT_UPSERT =
  ' on conflict (id) do update set first_name = excluded.first_name, last_name = excluded.last_name, custom_fields = excluded.custom_fields, unsubscribed = excluded.unsubscribed, updated_at = excluded.updated_at';

const statements = new Map<string, string>();
function sqliteInsert(table: string, columns: readonly string[], rows: number, suffix: string): string {
  const key = `${table}:${rows}:${suffix}`;
  let text = statements.get(key);
  if (!text) {
    const tuple = `(${columns.map(() => '?').join(',')})`;
    text = `insert into ${table} (${columns.join(',')}) values ${Array.from({ length: rows }, () => tuple).join(',')}${suffix}`;
    statements.set(key, text);
  }
  return text;
}

async function sqliteInsertRows<R extends Record<string, unknown>>(
  tx: Executor,
  table: string,
  columns: readonly (keyof R & string)[],
  rows: readonly R[],
  suffix = '',
): Promise<void> {
  for (let i = 0; i < rows.length; i += SQLITE_ROWS_PER_STATEMENT) {
    const end = Math.min(rows.length, i + SQLITE_ROWS_PER_STATEMENT);
    const params: unknown[] = new Array((end - i) * columns.length);
    let p = 0;
    for (let r = i; r < end; r++) for (const column of columns) params[p++] = rows[r][column];
    await tx.executeQuery(CompiledQuery.raw(sqliteInsert(table, columns, end - i, suffix), params));
  }
}

const column = <R>(rows: readonly R[], name: keyof R) => rows.map((row) => row[name]);

/** New contacts (`upsert` false) or contacts whose fields changed, by id (`upsert` true). */
export async function writeContactRows(tx: Executor, rows: readonly ContactRow[], upsert = false): Promise<void> {
  if (rows.length === 0) return;
  const suffix = upsert ? CONTACT_UPSERT : '';
  if (dialectOf(tx) === 'sqlite') return sqliteInsertRows(tx, 'contacts', CONTACT_COLUMNS, rows, suffix);
  await tx.executeQuery(
    CompiledQuery.raw(
      `insert into contacts (${CONTACT_COLUMNS.join(',')})
       select u.id, $1, u.email, u.first_name, u.last_name, u.custom_fields, u.unsubscribed, u.created_at, u.updated_at
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[]) as u(id, email, first_name, last_name, custom_fields, unsubscribed, created_at, updated_at)${suffix}`,
      [
        rows[0].workspace_id,
        column(rows, 'id'),
        column(rows, 'email'),
        column(rows, 'first_name'),
        column(rows, 'last_name'),
        column(rows, 'custom_fields'),
        column(rows, 'unsubscribed'),
        column(rows, 'created_at'),
        column(rows, 'updated_at'),
      ],
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

/** The workspace's contacts among `emails` (one statement). */
export async function contactsByEmail(tx: Executor, workspaceId: string, emails: readonly string[]): Promise<ContactRow[]> {
  if (emails.length === 0) return [];
  const query =
    dialectOf(tx) === 'postgres'
      ? CompiledQuery.raw('select * from contacts where workspace_id = $1 and email = any($2::text[])', [workspaceId, emails])
      : CompiledQuery.raw('select c.* from json_each(?) as k cross join contacts as c where c.workspace_id = ? and c.email = k.value', [
          JSON.stringify(emails),
          workspaceId,
        ]);
  return (await tx.executeQuery<ContactRow>(query)).rows;
}

/** Memberships of `contactIds` in one audience: contact id → subscribed (0/1) (one statement). */
export async function membershipsIn(tx: Executor, audienceId: string, contactIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (contactIds.length === 0) return out;
  const query =
    dialectOf(tx) === 'postgres'
      ? CompiledQuery.raw('select contact_id, subscribed from subscribers where audience_id = $1 and contact_id = any($2::text[])', [
          audienceId,
          contactIds,
        ])
      : CompiledQuery.raw(
          'select s.contact_id, s.subscribed from json_each(?) as k cross join subscribers as s where s.contact_id = k.value and s.audience_id = ?',
          [JSON.stringify(contactIds), audienceId],
        );
  for (const row of (await tx.executeQuery<{ contact_id: string; subscribed: number }>(query)).rows)
    out.set(row.contact_id, Number(row.subscribed));
  return out;
}

/** How many of `emails` have an active suppression of any type (one statement). */
export async function countSuppressed(tx: Executor, workspaceId: string, emails: readonly string[], now: string): Promise<number> {
  if (emails.length === 0) return 0;
  const query =
    dialectOf(tx) === 'postgres'
      ? CompiledQuery.raw(
          'select count(distinct email) as n from suppressions where workspace_id = $1 and email = any($2::text[]) and (keep_until is null or keep_until > $3)',
          [workspaceId, emails, now],
        )
      : CompiledQuery.raw(
          'select count(distinct s.email) as n from json_each(?) as k cross join suppressions as s where s.workspace_id = ? and s.email = k.value and (s.keep_until is null or s.keep_until > ?)',
          [JSON.stringify(emails), workspaceId, now],
        );
  const row = (await tx.executeQuery<{ n: number | string }>(query)).rows[0];
  return Number(row?.n ?? 0);
}
