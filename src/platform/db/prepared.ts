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
  if (offset === 0) return sql;
  // The same few statements at the same few offsets, for every send: each shifted text is
  // made once (a replace with a callback per placeholder was a tenth of a send's own CPU).
  let byOffset = shifted.get(sql);
  if (!byOffset) {
    if (shifted.size >= MAX_SHIFTED) shifted.clear();
    shifted.set(sql, (byOffset = new Map()));
  }
  let text = byOffset.get(offset);
  if (text === undefined) {
    text = sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    if (byOffset.size < MAX_SHIFTED) byOffset.set(offset, text);
  }
  return text;
}
const shifted = new Map<string, Map<number, string>>();
const MAX_SHIFTED = 512;

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
 * a call with other values runs as usual. Reads already fetched ahead for `tx` with the same
 * values (prefetchForEach) are not fetched again. Elsewhere it does nothing (SQLite reads
 * in-process). JSON keeps text, whole numbers (bigint included) and null as the driver returns
 * them; only for tables of such columns.
 */
export async function prefetch(tx: Executor, reads: PrefetchRead[]): Promise<void> {
  if (dialectOf(tx) !== 'postgres' || reads.length === 0) return;
  const ahead = prefetched.get(tx);
  if (ahead && reads.every(({ query, params }) => ahead.get(query)?.key === valuesKey(params))) return;
  prefetched.set(tx, (await fetchAhead(tx, [reads]))[0]);
}

/** What one unit of a group fetched ahead (prefetchForEach), for useFetchedAhead. */
export type FetchedAhead = Ahead;

/** On PostgreSQL, the reads of several units sharing a transaction, all in one statement: each
 *  unit's own `prefetch` then finds them (useFetchedAhead before it runs). */
export async function prefetchForEach(tx: Executor, readsOfEach: PrefetchRead[][]): Promise<FetchedAhead[]> {
  if (dialectOf(tx) !== 'postgres' || readsOfEach.every((reads) => reads.length === 0)) return readsOfEach.map(() => new Map());
  return fetchAhead(tx, readsOfEach);
}

/** Makes `tx` answer from what a unit fetched ahead (and drops what the unit before left). */
export function useFetchedAhead(tx: object, ahead: FetchedAhead | undefined): void {
  prefetched.set(tx, ahead && ahead.size > 0 ? ahead : undefined);
}

// Units of a group mostly read the same rows (their workspace, its sending domain, its
// counters): each distinct read (query and values) is fetched once, and each unit parses its
// own copy of the rows. The statement is then as large as the distinct reads, not the units:
// a group of one workspace's sends takes the same statement, prepared and planned once, as a
// single send (measured: binding the 6- to 8-unit statements, which PostgreSQL plans anew
// for their values, took 15-23 ms at times under load, holding up the whole group).
async function fetchAhead(tx: Executor, readsOfEach: PrefetchRead[][]): Promise<Ahead[]> {
  const values: unknown[] = [];
  const columns: string[] = [];
  const columnOf = new Map<PreparedQuery<any, unknown>, Map<string, number>>();
  const placed = readsOfEach.map((reads) =>
    reads.map(({ query, params }) => {
      const key = valuesKey(params);
      let byKey = columnOf.get(query);
      if (!byKey) columnOf.set(query, (byKey = new Map()));
      let column = byKey.get(key);
      if (column === undefined) {
        const part = query.part(tx, params);
        const sql = shiftPlaceholders(part.sql, values.length);
        values.push(...part.values);
        column = columns.length;
        columns.push(`(select coalesce(json_agg(r), '[]') from (${sql}) r)::text as r${column}`);
        byKey.set(key, column);
      }
      return { query, key, column };
    }),
  );
  const text = `select ${columns.join(', ')}`;
  nameStatement(text); // a few combinations of prepared reads (at most so many are named)
  const result = await tx.executeQuery<Record<string, string>>(CompiledQuery.raw(text, values));
  const row = result.rows[0];
  return placed.map((reads) => new Map(reads.map(({ query, key, column }) => [query, { key, rows: JSON.parse(row[`r${column}`]) }])));
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
  const bind = (query: CompiledQuery<R>, params: P) =>
    query.parameters.map((value) => (isPlaceholder(value) ? params[value[NAME]] : value));
  const run: PreparedQuery<P, R> = Object.assign(
    async (db: Executor, params: P) => {
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
    },
    {
      part(db: Executor, params: P) {
        const { query } = compile(db);
        return { sql: query.sql, values: bind(query, params) };
      },
    },
  );
  return run;
}
