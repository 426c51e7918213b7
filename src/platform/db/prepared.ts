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
import { dialectOf, readNow, type Dialect, type Executor } from './database.ts';

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

export function preparedQuery<P extends Record<string, unknown>, R>(
  build: (db: Kysely<Database>, params: P) => Compilable<R>,
): PreparedQuery<P, R> {
  const compiled = new Map<Dialect, { query: CompiledQuery<R>; isRead: boolean }>();
  const compile = (db: Executor) => {
    const dialect = dialectOf(db);
    let entry = compiled.get(dialect);
    if (!entry) {
      const query = build(db, markers as P).compile();
      entry = { query, isRead: query.query.kind === 'SelectQueryNode' };
      compiled.set(dialect, entry);
    }
    return entry;
  };
  const bind = (query: CompiledQuery<R>, params: P) => query.parameters.map((value) => (isPlaceholder(value) ? params[value[NAME]] : value));
  const run = async (db: Executor, params: P) => {
    const { query, isRead } = compile(db);
    const parameters = bind(query, params);
    // Hot reads on SQLite outside a transaction skip Kysely's executor (see sqlite-adapter.ts).
    const rows = isRead ? readNow(db, query.sql, parameters) : null;
    if (rows) return rows as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(query.sql, parameters) as CompiledQuery<R>);
    return result.rows;
  };
  return Object.assign(run, {
    part(db: Executor, params: P) {
      const { query } = compile(db);
      return { sql: query.sql, values: bind(query, params) };
    },
  });
}
