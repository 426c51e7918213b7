// Writes to a workspace's hot rows (its credit balance and its send counters), which every
// send of that workspace updates. On PostgreSQL an UPDATE holds its row lock until the commit,
// so a send that takes the lock and then needs more round trips through a busy event loop
// makes every other send of the workspace wait (measured: most sessions of the send bench
// waited on `update workspaces set credits`). Here the hot writes of a transaction are
// collected and sent in the same query string as its COMMIT: the locks are then held for the
// time PostgreSQL takes to run them and flush the commit, with no round trip in between.
//
// Outside such a transaction (SQLite, where one writer runs at a time, or any other caller)
// the writes simply run at once.
import { sql } from 'kysely';
import type { Db, Executor } from './database.ts';

export interface HotWrite {
  /** One SQL statement with its values inlined (see `literal`). */
  statement: string;
  /** The SQLSTATE the statement raises when it refuses (e.g. not enough credits)... */
  refusalCode?: string;
  /** ...and the error the caller gets then, built after the rollback. */
  refusal?: (db: Db) => Promise<Error>;
}

const pending = new WeakMap<object, HotWrite[]>();

/** Marks `tx` as a transaction whose hot writes go out with its COMMIT. */
export function collectHotWrites(tx: object): void {
  pending.set(tx, []);
}

/** Queues `statement` for the commit of `tx` when it collects hot writes; otherwise runs it now. */
export async function writeHotRow(tx: Executor, write: HotWrite, runNow: () => Promise<void>): Promise<void> {
  const queue = pending.get(tx);
  if (queue) queue.push(write);
  else await runNow();
}

/**
 * Sends the collected statements followed by COMMIT as one simple-protocol query string.
 * When one of them refuses, PostgreSQL skips the rest (the transaction is aborted) and this
 * returns that write's refusal for the caller to throw once it has rolled back.
 */
export async function commitWithHotWrites(tx: Executor): Promise<HotWrite | null> {
  const writes = pending.get(tx) ?? [];
  pending.delete(tx);
  try {
    await sql.raw([...writes.map((w) => w.statement), 'commit'].join(';\n')).execute(tx);
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    const refused = writes.find((w) => w.refusalCode && w.refusalCode === code);
    if (refused) return refused;
    throw error;
  }
}

/** A value inlined into a hot-row statement: whole numbers, and strings of our own ids and
 *  dates (checked, so nothing a client sent can ever reach the SQL text). */
export function literal(value: string | number): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not a whole number: ${value}`);
    return String(value);
  }
  if (!/^[A-Za-z0-9_:-]{1,64}$/.test(value)) throw new TypeError(`not an id or a date: ${JSON.stringify(value)}`);
  return `'${value}'`;
}
