// Named prepared statements on PostgreSQL. node-postgres sends every unnamed query as
// Parse + Bind + Execute, so PostgreSQL parses and plans it on every call. Statements compiled
// once (prepared.ts) are given a name here; a pooled connection then parses each of them once,
// and later calls send only Bind + Execute. Only statements registered here are named, and at
// most MAX_NAMED of them, because each connection keeps every statement it prepared.
import type pg from 'pg';

const MAX_NAMED = 400;
const names = new Map<string, string>();

/** Marks `sql` as a statement to prepare once per connection. */
export function nameStatement(sql: string): void {
  if (names.size < MAX_NAMED && !names.has(sql)) names.set(sql, `pl_${names.size}`);
}

/** Makes `client` send registered statements as named prepared statements. */
export function prepareNamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' && Array.isArray(values) ? names.get(text) : undefined;
    return name ? query({ name, text, values }, callback) : query(text, values, callback);
  };
}
