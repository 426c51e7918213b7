// GET /contacts and its export (docs/api.md, "Contacts, audiences and subscribers"): `search`/`q`,
// `audience_id`, `unsubscribed`, the `key.condition` filters (including `name`, `audiences`,
// `custom_fields.<key>` compared as text, and `audience_id` with exact/not_exact only), the older
// `filter[...]` forms, every sort key, and `total_records`.
//
// `match` governs the filters among themselves (`key.condition` and the `filter[...]` forms);
// the dedicated parameters `search`, `audience_id` and `unsubscribed` are always ANDed with
// them (https://emailit.com/docs/api-reference/filtering.md).
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { dialectOf } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/schema.ts';
import {
  applyListQuery,
  countRows,
  fetchPage,
  pageLinks,
  pagingFrom,
  type FilterField,
  type ListSpec,
  type Query,
} from '../../platform/http/lists.ts';
import { contactObject, membershipsOf, type ContactRow } from './records.ts';

type ContactsQuery = SelectQueryBuilder<Database, 'contacts', ContactRow>;

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const all = (value: string | string[] | undefined) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** A custom field's value as text: numbers as written, booleans as true/false, null when unset. */
function customFieldText(db: Db, key: string): Expression<string | null> {
  const ref = sql.ref('contacts.custom_fields');
  if (dialectOf(db) === 'postgres') return sql<string | null>`(${ref}::jsonb ->> ${key})`;
  const path = `$."${key.replace(/["\\]/g, '')}"`;
  return sql<
    string | null
  >`(case json_type(${ref}, ${path}) when 'true' then 'true' when 'false' then 'false' when 'null' then null else cast(json_extract(${ref}, ${path}) as text) end)`;
}

const BASE_FIELDS: Record<string, FilterField> = {
  email: { type: 'string', expression: sql.ref('contacts.email') },
  first_name: { type: 'string', expression: sql.ref('contacts.first_name') },
  last_name: { type: 'string', expression: sql.ref('contacts.last_name') },
  // First and last name joined by a space (either may be missing).
  name: { type: 'string', expression: sql`trim(coalesce(contacts.first_name, '') || ' ' || coalesce(contacts.last_name, ''))` },
  // The alphabetically first name among the contact's audiences.
  audiences: {
    type: 'string',
    expression: sql`(select min(lower(a.name)) from subscribers s join audiences a on a.id = s.audience_id where s.contact_id = contacts.id)`,
  },
  unsubscribed: { type: 'boolean', expression: sql.ref('contacts.unsubscribed') },
  created_at: { type: 'date', expression: sql.ref('contacts.created_at') },
  updated_at: { type: 'date', expression: sql.ref('contacts.updated_at') },
};

/** Whether the contact is in the audience: the `audience_id` filter and parameter. */
function inAudience(eb: ExpressionBuilder<Database, 'contacts'>, audienceId: string): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('subscribers')
      .select(sql`1`.as('one'))
      .whereRef('subscribers.contact_id', '=', 'contacts.id')
      .where('subscribers.audience_id', '=', audienceId),
  );
}

// `audience_id` takes exact and not_exact only, and its value is an audience id.
const AUDIENCE_FIELD: FilterField = {
  type: 'string',
  build(eb, condition, value) {
    if (value === '' || (condition !== 'exact' && condition !== 'not_exact')) return null;
    const member = inAudience(eb as ExpressionBuilder<Database, 'contacts'>, value);
    return condition === 'exact' ? member : eb.not(member);
  },
};

/** The request's query with the older `filter[...]` forms as filters (under `match` like the others). */
function normalizeQuery(query: Query): Query {
  const out: Query = { ...query };
  if (out.search === undefined && out.q !== undefined) out.search = out.q;
  const add = (key: string, value: string | string[] | undefined) => {
    if (value === undefined) return;
    out[key] = [...all(out[key]), ...all(value)];
  };
  add('audience_id.exact', query['filter[audience_id]']);
  add('unsubscribed.exact', query['filter[unsubscribed]']);
  for (const [param, value] of Object.entries(query)) {
    const match = /^filter\[custom_fields\]\[(.+)\]$/.exec(param);
    if (match) add(`custom_fields.${match[1]}.exact`, value);
  }
  return out;
}

function specFor(db: Db, query: Query): ListSpec {
  const fields: Record<string, FilterField> = { ...BASE_FIELDS, audience_id: AUDIENCE_FIELD };
  const sortKey = first(query.sort);
  const keys = Object.keys(query).map((param) => param.slice(0, param.lastIndexOf('.')));
  if (sortKey) keys.push(sortKey);
  for (const key of keys) {
    if (key.startsWith('custom_fields.') && key.length > 'custom_fields.'.length) {
      fields[key] = { type: 'string', expression: customFieldText(db, key.slice('custom_fields.'.length)) };
    }
  }
  return {
    fields,
    searchColumns: ['contacts.email', 'contacts.first_name', 'contacts.last_name'],
    sortConvention: 'sort-order',
    defaultSortColumn: 'contacts.created_at',
    idColumn: 'contacts.id',
  };
}

/** The dedicated `audience_id` and `unsubscribed` parameters, ANDed whatever `match` says. */
function applyDedicatedParams(qb: ContactsQuery, query: Query): ContactsQuery {
  let out = qb;
  for (const audienceId of all(query.audience_id)) {
    if (audienceId !== '') out = out.where((eb) => inAudience(eb, audienceId));
  }
  for (const raw of all(query.unsubscribed)) {
    const value = String(raw).trim().toLowerCase();
    // Like the boolean filter: true/false/1/0, anything else ignored.
    if (['true', '1'].includes(value)) out = out.where('contacts.unsubscribed', '=', 1);
    else if (['false', '0'].includes(value)) out = out.where('contacts.unsubscribed', '=', 0);
  }
  return out;
}

/** The workspace's contacts matching the list parameters, sorted (before paging). */
export function contactsMatching(db: Db, workspaceId: string, rawQuery: Query): ContactsQuery {
  const query = normalizeQuery(rawQuery);
  const base = applyDedicatedParams(
    db.selectFrom('contacts').selectAll('contacts').where('contacts.workspace_id', '=', workspaceId),
    query,
  );
  return applyListQuery(base, query, specFor(db, query));
}

/** The list's order as one expression and a direction (ties broken by id the same way):
 *  what applyListQuery sorts by, for walking the matches in keyset pages (the export). */
export function contactsOrder(db: Db, rawQuery: Query): { expression: Expression<unknown>; direction: 'asc' | 'desc' } {
  const query = normalizeQuery(rawQuery);
  const fields = specFor(db, query).fields;
  const sortKey = first(query.sort);
  const requested = first(query.order)?.toLowerCase();
  if (sortKey && Object.hasOwn(fields, sortKey) && !fields[sortKey].build) {
    const field = fields[sortKey];
    const expression = field.expression ?? sql.ref(field.column ?? sortKey);
    return {
      expression: field.type === 'string' ? sql`lower(${expression})` : expression,
      direction: requested === 'asc' ? 'asc' : 'desc',
    };
  }
  return { expression: sql.ref('contacts.created_at'), direction: requested === 'asc' ? 'asc' : 'desc' };
}

export async function listContacts(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const matching = contactsMatching(db, workspaceId, query);
  const paging = pagingFrom(query, 10);
  const [{ rows, hasNext }, total] = await Promise.all([fetchPage(matching, paging), countRows(matching)]);
  const memberships = await membershipsOf(
    db,
    workspaceId,
    rows.map((row) => row.id),
  );
  return {
    data: rows.map((row) => contactObject(row, memberships.get(row.id) ?? [])),
    total_records: total,
    ...pageLinks(requestUrl, paging, hasNext),
  };
}
