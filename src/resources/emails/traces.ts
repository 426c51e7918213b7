// What the emails resource offers for tracing: the traceparent stored with each email at its
// acceptance (null while tracing was off), so later work (a webhook request about it) joins
// the email's trace.
import type { Executor } from '../../platform/db/database.ts';

/** The stored traceparents of `ids` (emails without one are left out). */
export async function traceparentsOf(db: Executor, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('emails')
    .select(['id', 'traceparent'])
    .where('id', 'in', ids)
    .where('traceparent', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.traceparent!]));
}
