// Kysely builds and compiles a query's SQL on every call; for a small query on SQLite that
// costs more than running it. Hot statements (auth, the send path) are therefore compiled
// once per dialect with named placeholders, and only their values are bound per call:
//
//   const keyById = preparedQuery((db, p: { id: string }) =>
//     db.selectFrom('api_keys').selectAll().where('id', '=', p.id));
//   const rows = await keyById(db, { id });
//
// Parameters must be scalars used as values (not arrays for `in`, not identifiers), since the
// SQL text is fixed at the first call.
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import { dialectOf, readNow, runInTransactionNow, type Dialect, type Executor } from './database.ts';
import { nameStatement } from './pg-client.ts';

const NAME = Symbol('placeholder');
interface Placeholder {
  [NAME]: string;
}

function isPlaceholder(value: unknown): value is Placeholder {
  return typeof value === 'object' && value !== null && NAME in value;
}

// Stands in for the parameters object while the query is compiled: every property read
// returns a marker that compiles to a bind parameter and is replaced by the value later.
const markers = new Proxy({}, { get: (_target, name) => ({ [NAME]: String(name) }) });

/** A prepared statement: run it, or take its SQL and values to embed in a larger statement. */
export interface PreparedQuery<P, R> {
  (db: Executor, params: P): Promise<R[]>;
  /** The statement with these values, for a CTE of one statement of several writes (PostgreSQL). */
  part(db: Executor, params: P): { sql: string; values: unknown[] };
}

/** A statement's own $n as $(n + offset): for its place in a larger statement that has
 *  `offset` values before its own (PostgreSQL). */
export function shiftPlaceholders(sql: string, offset: number): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
}

/** A read to fetch ahead with others in one round trip (`prefetch`). */
export interface PrefetchRead {
  query: PreparedQuery<any, unknown>;
  params: Record<string, unknown>;
}

// Per transaction executor: rows fetched ahead, by query, with the values they were read for.
// A property of the executor, dropped when its unit is done (forgetPrefetched), rather than a
// WeakMap entry that lives until the collector finds its key dead: rows kept past their
// request are promoted to the old generation. Changed together with the two larger causes of
// such promotion (README "Garbage that stays young"); its own share was not measured apart.
const AHEAD = Symbol('prefetched');
type Ahead = Map<PreparedQuery<any, unknown>, { key: string; rows: unknown[] }>;
const prefetched = {
  get: (tx: object): Ahead | undefined => (tx as { [AHEAD]?: Ahead })[AHEAD],
  set: (tx: object, ahead: Ahead | undefined): void => void ((tx as { [AHEAD]?: Ahead })[AHEAD] = ahead),
};

/** Drops what `tx` fetched ahead and did not use (a unit of a group transaction is done). */
export function forgetPrefetched(tx: object): void {
  if (prefetched.get(tx)) prefetched.set(tx, undefined);
}
const valuesKey = (params: Record<string, unknown>) => JSON.stringify(params);

/**
 * On PostgreSQL, runs several prepared reads as one statement (each read's rows as one JSON
 * array), so a transaction that needs four small reads before it writes pays one round trip.
 * Each query's next call with the same values on `tx` then answers from these rows, once;
 * a call with other values runs as usual. Elsewhere it does nothing (SQLite reads in-process).
 * JSON keeps text, whole numbers (bigint included) and null as the driver returns them; only
 * for tables of such columns.
 */
export async function prefetch(tx: Executor, reads: PrefetchRead[]): Promise<void> {
  if (dialectOf(tx) !== 'postgres' || reads.length === 0) return;
  const values: unknown[] = [];
  const columns = reads.map(({ query, params }, i) => {
    const part = query.part(tx, params);
    const placed = shiftPlaceholders(part.sql, values.length);
    values.push(...part.values);
    return `(select coalesce(json_agg(r), '[]') from (${placed}) r)::text as r${i}`;
  });
  const text = `select ${columns.join(', ')}`;
  nameStatement(text); // a few combinations of prepared reads
  const result = await tx.executeQuery<Record<string, string>>(CompiledQuery.raw(text, values));
  const row = result.rows[0];
  const byQuery: Ahead = new Map();
  reads.forEach(({ query, params }, i) => byQuery.set(query, { key: valuesKey(params), rows: JSON.parse(row[`r${i}`]) }));
  prefetched.set(tx, byQuery);
}

export function preparedQuery<P extends Record<string, unknown>, R>(
  build: (db: Kysely<Database>, params: P) => Compilable<R>,
): PreparedQuery<P, R> {
  const compiled = new Map<Dialect, { query: CompiledQuery<R>; isRead: boolean }>();
  const compile = (db: Executor) => {
    const dialect = dialectOf(db);
    let entry = compiled.get(dialect);
    if (!entry) {
      const query = build(db, markers as P).compile();
      if (dialect === 'postgres') nameStatement(query.sql);
      entry = { query, isRead: query.query.kind === 'SelectQueryNode' };
      compiled.set(dialect, entry);
    }
    return entry;
  };
  const bind = (query: CompiledQuery<R>, params: P) => query.parameters.map((value) => (isPlaceholder(value) ? params[value[NAME]] : value));
  const run: PreparedQuery<P, R> = Object.assign(async (db: Executor, params: P) => {
    const ahead = prefetched.get(db)?.get(run);
    if (ahead) {
      prefetched.get(db)!.delete(run);
      if (ahead.key === valuesKey(params)) return ahead.rows as R[];
    }
    const { query, isRead } = compile(db);
    const parameters = bind(query, params);
    // On SQLite, hot reads outside a transaction and every statement inside one skip Kysely's
    // executor (readNow, runInTransactionNow in database.ts).
    const rows = (isRead ? readNow(db, query.sql, parameters) : null) ?? runInTransactionNow(db, query.sql, parameters);
    if (rows) return rows as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(query.sql, parameters) as CompiledQuery<R>);
    return result.rows;
  }, {
    part(db: Executor, params: P) {
      const { query } = compile(db);
      return { sql: query.sql, values: bind(query, params) };
    },
  });
  return run;
}
