// Kysely's SQLite dialect expects a better-sqlite3-like handle. Node's built-in node:sqlite is
// close enough that a thin wrapper does: statements take parameters as an array, `reader`
// means "returns rows", and booleans are bound as 0/1 (node:sqlite refuses JS booleans).
// We use node:sqlite rather than better-sqlite3 so that nothing native is compiled at install.
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

function bindable(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map((value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value === undefined) return null;
    if (value instanceof Date) return value.toISOString();
    return value as SQLInputValue;
  });
}

export interface OpenedSqlite {
  handle: DatabaseSync;
  kyselyDatabase: SqliteDatabase;
  /** Runs a read at once on the connection, or returns null while a transaction is open on it
   *  (the caller then queues behind Kysely's connection lock like any other query). */
  readNow(sql: string, parameters: ReadonlyArray<unknown>): unknown[] | null;
}

export function openSqlite(path: string): OpenedSqlite {
  const handle = new DatabaseSync(path);
  // WAL lets readers run beside the writer; NORMAL sync is durable across process crashes
  // (only an OS crash or power loss can drop the last commits); busy_timeout covers a second
  // process (the CLI) writing at the same time.
  handle.exec('PRAGMA journal_mode = WAL');
  handle.exec('PRAGMA synchronous = NORMAL');
  handle.exec('PRAGMA foreign_keys = ON');
  handle.exec('PRAGMA busy_timeout = 5000');
  handle.exec('PRAGMA temp_store = MEMORY');
  // 8 MB of page cache: every page it holds is resident (the campaign bench's peak RSS was 24 MB
  // lower than with 32 MB), and a miss is a read from the OS page cache, not the disk.
  handle.exec('PRAGMA cache_size = -8000');

  // Kysely prepares every query anew; compiling SQL is a large share of a small query's cost,
  // so prepared statements are kept per SQL text (bounded, oldest dropped first).
  const prepared = new Map<string, SqliteStatement>();
  const kyselyDatabase: SqliteDatabase = {
    close: () => handle.close(),
    prepare(sql: string): SqliteStatement {
      // A deferred transaction that reads and then writes fails at once ("database is
      // locked", busy_timeout does not apply) when another process (the CLI, a second
      // server) committed in between; BEGIN IMMEDIATE takes the write lock first, waiting.
      if (sql === 'begin') sql = 'begin immediate';
      let cached = prepared.get(sql);
      if (!cached) {
        cached = wrap(handle.prepare(sql));
        if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value!);
        prepared.set(sql, cached);
      }
      return cached;
    },
  };
  // node:sqlite is synchronous: outside a transaction, a read needs nothing of Kysely's
  // connection lock (held across awaits only to keep other queries out of an open
  // transaction), and runs for a fraction of the cost of the promise chain around it.
  const readNow = (sql: string, parameters: ReadonlyArray<unknown>) =>
    handle.isTransaction ? null : (kyselyDatabase.prepare(sql).all(parameters) as unknown[]);
  return { handle, kyselyDatabase, readNow };
}

const STATEMENT_CACHE_SIZE = 500;

function wrap(statement: StatementSync): SqliteStatement {
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...bindable(parameters)),
    run: (parameters) => {
      const result = statement.run(...bindable(parameters));
      return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
    },
    iterate: (parameters) => statement.iterate(...bindable(parameters)) as IterableIterator<unknown>,
  };
}
