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
  /** Runs a statement at once inside the transaction open on the connection (its rows, [] for
   *  a statement without RETURNING), or returns null when no transaction is open. */
  runInTransaction(sql: string, parameters: ReadonlyArray<unknown>): unknown[] | null;
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
  // 4 MB of page cache: every page it holds is resident (the campaign bench's peak RSS was 24 MB
  // lower than with 32 MB), and a miss is a read from the OS page cache, not the disk. The hot
  // pages (indexes' upper levels, the rows being sent) fit; 8 MB bought no measurable speed.
  handle.exec('PRAGMA cache_size = -4000');

  // Kysely prepares every query anew; compiling SQL is a large share of a small query's cost,
  // so prepared statements are kept per SQL text (bounded, oldest dropped first).
  const sharedRead = new SharedReadTransaction(handle);
  const prepared = new Map<string, OwnStatement>();
  const prepare = (sql: string): OwnStatement => {
    // A deferred transaction that reads and then writes fails at once ("database is
    // locked", busy_timeout does not apply) when another process (the CLI, a second
    // server) committed in between; BEGIN IMMEDIATE takes the write lock first, waiting.
    if (sql === 'begin') sql = 'begin immediate';
    let cached = prepared.get(sql);
    if (!cached) {
      cached = wrap(handle.prepare(sql), sharedRead);
      if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value!);
      prepared.set(sql, cached);
    }
    return cached;
  };
  const kyselyDatabase: SqliteDatabase = {
    close: () => {
      sharedRead.end();
      handle.close();
    },
    prepare,
  };
  // node:sqlite is synchronous: outside a transaction, a read needs nothing of Kysely's
  // connection lock (held across awaits only to keep other queries out of an open
  // transaction), and runs for a fraction of the cost of the promise chain around it.
  const readNow = (sql: string, parameters: ReadonlyArray<unknown>) => {
    if (!sharedRead.open && handle.isTransaction) return null;
    const statement = prepare(sql);
    sharedRead.begin();
    return statement.readShared(parameters);
  };
  const runInTransaction = (sql: string, parameters: ReadonlyArray<unknown>) => {
    if (sharedRead.open || !handle.isTransaction) return null;
    const statement = prepare(sql);
    if (statement.reader) return statement.all(parameters) as unknown[];
    statement.run(parameters);
    return [];
  };
  return { handle, kyselyDatabase, readNow, runInTransaction };
}

const STATEMENT_CACHE_SIZE = 500;

// Hot reads outside a transaction (readNow) that run in the same turn of the event loop share
// one read transaction: starting and ending a WAL read transaction (two fcntl lock calls and
// the wal-index checks) costs more than a one-row lookup, about a tenth of a small GET. It
// ends at the turn's setImmediate or once it is MAX_AGE_MS old, whichever comes first, so a
// read sees the database as of at most a millisecond before it runs. This process's own
// writes are never missed: anything else that runs on the connection (Kysely's queries,
// writes, BEGIN) ends it first.
const MAX_AGE_MS = 1;

class SharedReadTransaction {
  open = false;
  private openedAt = 0;
  private readonly beginStatement: StatementSync;
  private readonly commitStatement: StatementSync;
  private readonly endSoon = () => this.end();
  constructor(handle: DatabaseSync) {
    this.beginStatement = handle.prepare('begin');
    this.commitStatement = handle.prepare('commit');
  }
  begin(): void {
    if (this.open) {
      if (performance.now() - this.openedAt <= MAX_AGE_MS) return;
      this.end();
    }
    this.beginStatement.run();
    this.open = true;
    this.openedAt = performance.now();
    setImmediate(this.endSoon);
  }
  end(): void {
    if (!this.open) return;
    this.open = false;
    this.commitStatement.run();
  }
}

interface OwnStatement extends SqliteStatement {
  /** Runs inside the turn's shared read transaction (readNow only). */
  readShared(parameters: ReadonlyArray<unknown>): unknown[];
}

function wrap(statement: StatementSync, sharedRead: SharedReadTransaction): OwnStatement {
  return {
    readShared: (parameters) => statement.all(...bindable(parameters)),
    reader: statement.columns().length > 0,
    all: (parameters) => {
      sharedRead.end();
      return statement.all(...bindable(parameters));
    },
    run: (parameters) => {
      sharedRead.end();
      const result = statement.run(...bindable(parameters));
      return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
    },
    iterate: (parameters) => {
      sharedRead.end();
      return statement.iterate(...bindable(parameters)) as IterableIterator<unknown>;
    },
  };
}
