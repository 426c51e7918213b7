// Contact export as CSV, streamed: the list's search, filters and sort (`sort`/`order`, the
// list's default otherwise), read in keyset pages on (sort value, id), NULLs last as in the
// list: no OFFSET, no export held in memory, each page a short query of its own. Columns: email,
// first_name, last_name, unsubscribed, audiences (names, "; "-separated), one column per
// declared custom field, custom_fields (JSON of the undeclared ones), id, created_at,
// updated_at. Cells go through the shared CSV writer (src/platform/csv.ts): names and custom
// fields come from public subscribe forms, and text a spreadsheet would run as a formula is
// neutralised. The import reads this file back, exactly.
import type { Db } from '../../platform/db/database.ts';
import { countRows, type Query } from '../../platform/http/lists.ts';
import { fieldDefinitions } from '../custom-fields/service.ts';
import { csvLine } from '../../platform/csv.ts';
import { sql, type Expression, type SqlBool } from 'kysely';
import { contactsMatching, contactsOrder } from './list.ts';
import { customFieldsOf, membershipsOf } from './records.ts';

const PAGE = 2000;

/** How many contacts an export of `query` writes (for progress). */
export function countExport(db: Db, workspaceId: string, query: Query): Promise<number> {
  return countRows(contactsMatching(db, workspaceId, query));
}

/** The CSV lines of the workspace's contacts matching `query` (the list's parameters);
 *  `onPage` hears how many contacts have been written so far. */
export async function* exportContacts(
  db: Db,
  workspaceId: string,
  query: Query,
  onPage?: (exported: number) => void,
): AsyncGenerator<string> {
  const declared = [...(await fieldDefinitions(db, workspaceId)).keys()].sort();
  const reserved = new Set([
    'email',
    'first_name',
    'last_name',
    'unsubscribed',
    'audiences',
    'custom_fields',
    'id',
    'created_at',
    'updated_at',
  ]);
  const fieldColumns = declared.filter((key) => !reserved.has(key));
  yield csvLine([
    'email',
    'first_name',
    'last_name',
    'unsubscribed',
    'audiences',
    ...fieldColumns,
    'custom_fields',
    'id',
    'created_at',
    'updated_at',
  ]);
  const matching = contactsMatching(db, workspaceId, query).clearOrderBy();
  const { expression, direction } = contactsOrder(db, query);
  const beyond = direction === 'asc' ? sql.raw('>') : sql.raw('<');
  let after: { value: unknown; id: string } | null = null;
  let exported = 0;
  for (;;) {
    let page = matching.select(sql<unknown>`${expression}`.as('__sort'));
    if (after) {
      const { value, id } = after;
      // The rows after (value, id) in the list's order, NULLs last.
      page = page.where(
        value === null
          ? sql<SqlBool>`(${expression} is null and contacts.id ${beyond} ${id})`
          : (sql<SqlBool>`(${expression} ${beyond} ${value} or (${expression} = ${value} and contacts.id ${beyond} ${id}) or ${expression} is null)` as Expression<SqlBool>),
      );
    }
    const rows = await page
      .orderBy(sql`${expression}`, (ob) => (direction === 'asc' ? ob.asc() : ob.desc()).nullsLast())
      .orderBy('contacts.id', direction)
      .limit(PAGE)
      .execute();
    if (rows.length === 0) return;
    const memberships = await membershipsOf(
      db,
      workspaceId,
      rows.map((row) => row.id),
    );
    let chunk = '';
    for (const row of rows) {
      const fields = customFieldsOf(row);
      const undeclared = Object.fromEntries(Object.entries(fields).filter(([key]) => !fieldColumns.includes(key)));
      chunk += csvLine([
        row.email,
        row.first_name,
        row.last_name,
        row.unsubscribed === 1 ? 'true' : 'false',
        (memberships.get(row.id) ?? []).map((m) => m.audience.name).join('; '),
        ...fieldColumns.map((key) => fields[key]),
        Object.keys(undeclared).length > 0 ? undeclared : '',
        row.id,
        row.created_at,
        row.updated_at,
      ]);
    }
    yield chunk;
    onPage?.((exported += rows.length));
    const last = rows[rows.length - 1] as { __sort: unknown; id: string };
    after = { value: last.__sort ?? null, id: last.id };
    if (rows.length < PAGE) return;
  }
}
