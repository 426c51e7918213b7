// One Kysely instance over either node:sqlite (default, embedded) or PostgreSQL, chosen by
// the DATABASE_URL scheme.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { adaptPgClient } from './pg-client.ts';
import { Kysely, PostgresDialect, SqliteDialect, PostgresAdapter, type DatabaseIntrospector, type Transaction } from 'kysely';
import { OwnSchemaIntrospector } from './pg-introspector.ts';
import type pg from 'pg';
import { lazyModule } from '../lazy-module.ts';
import { openSqlite, type OpenedSqlite } from './sqlite-adapter.ts';
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer } from './sqlite-checkpointer.ts';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;
/** Anything queries can run on: the database itself or an open transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;

// The PostgreSQL driver loads when a PostgreSQL database is opened: a server on SQLite never
// needs its modules in its heap.
const pgDriver = lazyModule<typeof pg>('pg', (driver) => {
  // bigint (epoch milliseconds, counters) as JS numbers: every value we store is < 2^53.
  driver.types.setTypeParser(driver.types.builtins.INT8, (value) => Number(value));
});

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: the schema to work in (tests use one fresh schema each). */
  schema?: string;
  poolSize?: number;
  /** SQLite only: checkpoint the WAL from a background thread (long-running servers). */
  backgroundCheckpoints?: boolean;
  /** Told when a background checkpoint fails (the server's own connection still checkpoints). */
  onCheckpointError?: (message: string) => void;
  /** PostgreSQL only: told when an idle pooled connection is lost (it is replaced). */
  onPoolError?: (message: string) => void;
}

export function openDatabase(url: string, options: OpenOptions = {}): DatabaseHandle {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const opened = openSqlite(path);
    const { handle, kyselyDatabase } = opened;
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: kyselyDatabase }) });
    // A transaction's executor shares its database's adapter: the one key both can be found by.
    directRunners.set(db.getExecutor().adapter, opened);
    if (!options.backgroundCheckpoints || path === ':memory:') return { db, dialect: 'sqlite', close: () => db.destroy() };
    handle.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    const checkpointer = startCheckpointer(path, options.onCheckpointError);
    return {
      db,
      dialect: 'sqlite',
      async close() {
        await checkpointer.stop();
        await db.destroy();
      },
    };
  }
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Queries go out without waiting for the answers before them, so a deferred statement
    // rides with the next query (pg-client.ts). Callers still await each query.
    pipeline: true,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle connection that PostgreSQL closes (a restart, a failover, an administrator) is an
  // 'error' event on the pool; unheard, it would end the process. The pool drops that client
  // and connects afresh for the next query, so Postlane rides out a database restart.
  pool.on('error', (error) => options.onPoolError?.(error.message));
  // A connection lost while checked out (a query or transaction running, a worker holding it)
  // is an 'error' event on the client itself, which the pool listens to only while it is idle:
  // unheard, it ended the process at every PostgreSQL restart. The running query fails with
  // the error (its caller answers or retries), and the pool discards the dead client when it is
  // released; this listener only keeps the event from being fatal.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    adaptPgClient(client);
  });
  const db = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool }) });
  pools.set(db, pool);
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

const pools = new WeakMap<Db, { totalCount: number; idleCount: number; waitingCount: number }>();

/** The PostgreSQL pool's connections (metrics); null on SQLite. */
export function poolStatsOf(db: Db): { total: number; idle: number; waiting: number } | null {
  const pool = pools.get(db);
  return pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : null;
}

/** PostgreSQL, introspected in the connection's own schema only (see pg-introspector.ts). */
class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
}

const directRunners = new WeakMap<object, Pick<OpenedSqlite, 'readNow' | 'runInTransaction'>>();
const directRunnerOf = (db: Kysely<any>) => directRunners.get(db.getExecutor().adapter);

/** For a SQLite database (not a transaction): runs a read synchronously, or null when it
 *  cannot (another dialect, a transaction executor, or a transaction open on the connection). */
export function readNow(db: Kysely<any>, sql: string, parameters: ReadonlyArray<unknown>): unknown[] | null {
  if (db.isTransaction) return null;
  return directRunnerOf(db)?.readNow(sql, parameters) ?? null;
}

/** For a SQLite transaction: runs a statement synchronously on its connection and returns its
 *  rows, or null when it cannot (another dialect, not a transaction). Kysely's executor costs a
 *  chain of a dozen promises per query (with the prepared-query wrapper, about a third of what
 *  the main thread allocated in the deliver bench); a transaction holds the connection alone
 *  and awaits each query before the next, so nothing queued behind Kysely's lock can be
 *  overtaken. Only for queries without result plugins. */
export function runInTransactionNow(db: Kysely<any>, sql: string, parameters: ReadonlyArray<unknown>): unknown[] | null {
  if (!db.isTransaction) return null;
  return directRunnerOf(db)?.runInTransaction(sql, parameters) ?? null;
}

export function dialectOf(db: Kysely<any>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** True when the error is a unique-constraint violation on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: string; message?: string };
  return e?.code === '23505' || /UNIQUE constraint failed/.test(e?.message ?? '');
}

/** True when the error is a foreign-key violation on either engine (the row referred to is gone). */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23503' || /FOREIGN KEY constraint failed/.test(e?.message ?? '');
}
