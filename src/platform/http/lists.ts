// The one module every list endpoint uses: `page`/`limit` (or `per_page`) paging, the
// `key.condition=value` filter grammar with `match`, `search`, both sort conventions, and page URLs
// that keep every other query parameter. See https://emailit.com/docs/api-reference/pagination/
import { Type, type TSchema } from '@sinclair/typebox';
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';

export type FieldType = 'string' | 'enum' | 'number' | 'date' | 'boolean';

export interface FilterField {
  type: FieldType;
  /** Column (or SQL expression via `expression`) when it differs from the key. */
  column?: string;
  expression?: Expression<any>;
  values?: readonly string[];
  /** Builds the field's conditions itself (e.g. a membership test), null for one that does not
   *  apply; such a field without `expression` or `column` is no sort key. */
  build?: (eb: ExpressionBuilder<any, any>, condition: string, value: string) => Expression<SqlBool> | null;
}

export interface ListSpec {
  fields: Record<string, FilterField>;
  /** Columns `search` matches (case-insensitive, partial). */
  searchColumns?: string[];
  /** Sort keys beyond the filter keys (every filter key is a sort key). */
  extraSortKeys?: Record<string, string>;
  /** `order-direction`: order=key, direction=asc|desc (keys, emails, domains).
   *  `sort-order`: sort=key, order=asc|desc (suppressions, templates, contacts). */
  sortConvention: 'order-direction' | 'sort-order';
  defaultSortColumn?: string;
  /** Tie-breaker column for stable pages. */
  idColumn?: string;
}

export type Query = Record<string, string | string[] | undefined>;

const CONDITIONS: Record<FieldType, readonly string[]> = {
  string: ['exact', 'not_exact', 'contains', 'not_contains', 'starts_with', 'ends_with', 'is_empty', 'is_not_empty'],
  enum: ['exact', 'not_exact', 'in', 'not_in'],
  number: ['exact', 'not_exact', 'greater_than', 'less_than', 'between'],
  date: ['exact', 'after', 'before', 'between'],
  boolean: ['exact'],
};

// Beyond this a page number is no page at all, and its offset would overflow the engines'
// integers (a 500 before); it is the standard 400 instead.
const MAX_PAGE = 2_147_483_647;

/** Query schema for `page` + `limit` lists (out of range gives the standard 400). */
export function pageLimitQuery(defaultLimit: number, extra: Record<string, TSchema> = {}) {
  return Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit })),
    search: Type.Optional(Type.String()),
    match: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('or')])),
    ...extra,
  });
}

/** Query schema for `page` + `per_page` lists (templates, automations, runs). */
export function perPageQuery(extra: Record<string, TSchema> = {}) {
  return Type.Object({
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    match: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('or')])),
    ...extra,
  });
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function likeLower(ref: Expression<any>, pattern: string) {
  return sql<SqlBool>`lower(${ref}) like ${pattern.toLowerCase()} escape '\\'`;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A filter date value as the [start, end) range it covers: a whole UTC day for a bare date. */
function dateRange(value: string): [string, string] | null {
  const trimmed = value.trim();
  if (DATE_ONLY.test(trimmed)) {
    const start = Date.parse(`${trimmed}T00:00:00Z`);
    if (Number.isNaN(start)) return null;
    return [isoMicros(start), isoMicros(start + 86_400_000)];
  }
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return [isoMicros(at), isoMicros(at + 1)];
}

function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

function numberValue(value: string): number | null {
  if (value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** One filter condition as an expression, or null when it does not apply (ignored, not rejected). */
function conditionExpression(
  eb: ExpressionBuilder<any, any>,
  field: FilterField,
  ref: Expression<any>,
  condition: string,
  value: string,
): Expression<SqlBool> | null {
  if (field.build) return field.build(eb, condition, value);
  if (!CONDITIONS[field.type].includes(condition)) return null;
  if (value === '' && !condition.startsWith('is_')) return null;
  switch (field.type) {
    case 'string': {
      const v = escapeLike(value);
      switch (condition) {
        case 'exact':
          return sql<SqlBool>`lower(${ref}) = ${value.toLowerCase()}`;
        case 'not_exact':
          return sql<SqlBool>`(${ref} is null or lower(${ref}) <> ${value.toLowerCase()})`;
        case 'contains':
          return likeLower(ref, `%${v}%`);
        case 'not_contains':
          return sql<SqlBool>`(${ref} is null or not (${likeLower(ref, `%${v}%`)}))`;
        case 'starts_with':
          return likeLower(ref, `${v}%`);
        case 'ends_with':
          return likeLower(ref, `%${v}`);
        case 'is_empty':
          return sql<SqlBool>`(${ref} is null or ${ref} = '')`;
        case 'is_not_empty':
          return sql<SqlBool>`(${ref} is not null and ${ref} <> '')`;
      }
      return null;
    }
    case 'enum': {
      const allowed = (list: string[]) => list.filter((item) => !field.values || field.values.includes(item));
      if (condition === 'in' || condition === 'not_in') {
        const items = allowed(value.split(',').map((s) => s.trim()));
        if (items.length === 0) return null;
        return condition === 'in' ? eb(ref, 'in', items) : eb(ref, 'not in', items);
      }
      if (allowed([value]).length === 0) return null;
      return eb(ref, condition === 'exact' ? '=' : '<>', value);
    }
    case 'number': {
      if (condition === 'between') {
        const [a, b] = value.split(',').map(numberValue);
        if (a == null || b == null) return null;
        return eb.and([eb(ref, '>=', Math.min(a, b)), eb(ref, '<=', Math.max(a, b))]);
      }
      const n = numberValue(value);
      if (n === null) return null;
      const op = { exact: '=', not_exact: '<>', greater_than: '>', less_than: '<' }[condition] as '=' | '<>' | '>' | '<';
      return eb(ref, op, n);
    }
    case 'date': {
      if (condition === 'between') {
        const [a, b] = value.split(',');
        const from = a ? dateRange(a) : null;
        const to = b ? dateRange(b) : null;
        if (!from || !to) return null;
        return eb.and([eb(ref, '>=', from[0]), eb(ref, '<', to[1])]);
      }
      const range = dateRange(value);
      if (!range) return null;
      if (condition === 'exact') return eb.and([eb(ref, '>=', range[0]), eb(ref, '<', range[1])]);
      if (condition === 'after') return eb(ref, '>=', range[1]);
      return eb(ref, '<', range[0]);
    }
    case 'boolean': {
      const v = value.trim().toLowerCase();
      if (!['true', 'false', '1', '0'].includes(v)) return null;
      return eb(ref, '=', v === 'true' || v === '1' ? 1 : 0);
    }
  }
}

function fieldRef(key: string, field: FilterField): Expression<any> {
  return field.expression ?? sql.ref(field.column ?? key);
}

/** Applies `search`, `key.condition` filters with `match`, and sorting to a select. */
export function applyListQuery<QB extends SelectQueryBuilder<any, any, any>>(qb: QB, query: Query, spec: ListSpec): QB {
  let out = qb as SelectQueryBuilder<any, any, any>;

  const search = first(query.search)?.trim();
  if (search && spec.searchColumns?.length) {
    const pattern = `%${escapeLike(search)}%`;
    out = out.where((eb) => eb.or(spec.searchColumns!.map((column) => likeLower(sql.ref(column), pattern))));
  }

  const filters: Array<[FilterField, string, string, string]> = [];
  for (const [param, raw] of Object.entries(query)) {
    const dot = param.lastIndexOf('.');
    if (dot <= 0 || raw === undefined) continue;
    const key = param.slice(0, dot);
    // Own keys only: `constructor.exact=x` must not find Object.prototype.constructor.
    const field = Object.hasOwn(spec.fields, key) ? spec.fields[key] : undefined;
    if (!field) continue;
    for (const value of Array.isArray(raw) ? raw : [raw]) filters.push([field, key, param.slice(dot + 1), value]);
  }
  if (filters.length > 0) {
    const useOr = first(query.match) === 'or';
    out = out.where((eb) => {
      const parts = filters
        .map(([field, key, condition, value]) => conditionExpression(eb, field, fieldRef(key, field), condition, value))
        .filter((e): e is Expression<SqlBool> => e !== null);
      if (parts.length === 0) return sql<SqlBool>`1 = 1`;
      return useOr ? eb.or(parts) : eb.and(parts);
    });
  }

  // A map without a prototype: `order=constructor` or `__proto__` names no sort key.
  const sortKeys: Record<string, Expression<any>> = Object.create(null);
  // Text sorts case-insensitively, the same on SQLite and PostgreSQL whatever the collation.
  for (const [key, field] of Object.entries(spec.fields)) {
    if (field.build && !field.expression && !field.column) continue;
    sortKeys[key] = field.type === 'string' ? sql`lower(${fieldRef(key, field)})` : fieldRef(key, field);
  }
  for (const [key, column] of Object.entries(spec.extraSortKeys ?? {})) sortKeys[key] = sql.ref(column);
  const [sortParam, directionParam] = spec.sortConvention === 'order-direction' ? ['order', 'direction'] : ['sort', 'order'];
  const sortKey = first(query[sortParam]);
  const requested = first(query[directionParam])?.toLowerCase();
  const idColumn = spec.idColumn ?? 'id';
  if (sortKey && sortKeys[sortKey]) {
    // order without direction sorts ascending (docs/api.md, "Conventions"); sort without order,
    // descending.
    const fallback = spec.sortConvention === 'order-direction' ? 'asc' : 'desc';
    const direction = requested === 'asc' || requested === 'desc' ? requested : fallback;
    // NULLs last in both directions, on both engines (their defaults differ).
    out = out
      .orderBy(sortKeys[sortKey], (ob) => (direction === 'asc' ? ob.asc() : ob.desc()).nullsLast())
      .orderBy(sql.ref(idColumn), direction);
  } else {
    const direction = spec.sortConvention === 'sort-order' && requested === 'asc' ? 'asc' : 'desc';
    out = out.orderBy(sql.ref(spec.defaultSortColumn ?? 'created_at'), direction).orderBy(sql.ref(idColumn), direction);
  }
  return out as QB;
}

export interface Paging {
  page: number;
  limit: number;
}

export function pagingFrom(query: Query, defaultLimit: number, limitParam: 'limit' | 'per_page' = 'limit'): Paging {
  const page = Number(first(query.page) ?? 1);
  const limit = Number(first(query[limitParam]) ?? defaultLimit);
  return { page: Number.isInteger(page) && page > 0 ? page : 1, limit: Number.isInteger(limit) && limit > 0 ? limit : defaultLimit };
}

/** Fetches one page (plus one row to know whether a next page exists). */
export async function fetchPage<Row>(qb: SelectQueryBuilder<any, any, Row>, paging: Paging): Promise<{ rows: Row[]; hasNext: boolean }> {
  const rows = await qb
    .limit(paging.limit + 1)
    .offset((paging.page - 1) * paging.limit)
    .execute();
  return { rows: rows.slice(0, paging.limit), hasNext: rows.length > paging.limit };
}

/** Counts the rows a filtered select (before ordering and paging) matches. */
export async function countRows(qb: SelectQueryBuilder<any, any, any>): Promise<number> {
  const row = await qb.clearSelect().clearOrderBy().select(sql<number>`count(*)`.as('count')).executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** The request's path with `page` replaced, every other query parameter kept in order. */
export function pageUrl(requestUrl: string, page: number): string {
  const [path, search = ''] = requestUrl.split('?', 2);
  const params = new URLSearchParams(search);
  params.set('page', String(page));
  return `${path}?${params.toString()}`;
}

export function pageLinks(requestUrl: string, paging: Paging, hasNext: boolean) {
  return {
    next_page_url: hasNext ? pageUrl(requestUrl, paging.page + 1) : null,
    previous_page_url: paging.page > 1 ? pageUrl(requestUrl, paging.page - 1) : null,
  };
}

/** The `page`/`limit` envelope: data plus page URLs. */
export async function pageLimitList<Row, Item>(
  qb: SelectQueryBuilder<any, any, Row>,
  query: Query,
  requestUrl: string,
  defaultLimit: number,
  toItem: (row: Row) => Item,
) {
  const paging = pagingFrom(query, defaultLimit);
  const { rows, hasNext } = await fetchPage(qb, paging);
  return { data: rows.map(toItem), ...pageLinks(requestUrl, paging, hasNext) };
}

/** The `per_page` envelope: data plus total_records, per_page, current_page, total_pages,
 *  and the page URLs too (the official SDKs page by the URLs alone). */
export async function perPageList<Row, Item>(
  qb: SelectQueryBuilder<any, any, Row>,
  countQb: SelectQueryBuilder<any, any, any>,
  query: Query,
  toItem: (row: Row) => Item,
  requestUrl?: string,
) {
  const paging = pagingFrom(query, 25, 'per_page');
  const [{ rows, hasNext }, total] = await Promise.all([fetchPage(qb, paging), countRows(countQb)]);
  return {
    data: rows.map(toItem),
    total_records: total,
    per_page: paging.limit,
    current_page: paging.page,
    total_pages: Math.ceil(total / paging.limit),
    ...(requestUrl === undefined ? {} : pageLinks(requestUrl, paging, hasNext)),
  };
}
