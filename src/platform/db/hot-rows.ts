// Writes to a workspace's hot rows (its credit balance and its send counters), which every
// send of that workspace updates. On PostgreSQL an UPDATE holds its row lock until the commit,
// so a send that takes the lock and then needs more round trips through a busy event loop
// makes every other send of the workspace wait (measured: most sessions of the send bench
// waited on `update workspaces set credits`). Here the hot writes of a transaction are
// collected and sent in the same query string as its COMMIT: the locks are then held for the
// time PostgreSQL takes to run them and flush the commit, with no round trip in between.
//
// Writes to the same row are merged into one statement (their amounts added), so a group of
// sends sharing a transaction (group-commit.ts) updates each hot row once; and the statements
// go out in the order of their keys, so every transaction takes the row locks in one order and
// two of them can never deadlock on these rows.
//
// Outside such a transaction (SQLite, where one writer runs at a time, or any other caller)
// the writes simply run at once.
import { sql } from 'kysely';
import type { Db, Executor } from './database.ts';

export interface HotWrite {
  /** The row written (e.g. `1 credits <workspace>`): writes with one key merge into one
   *  statement, and keys order the statements. */
  key: string;
  /** What this write adds to the row (credits taken, sends counted). */
  amount: number;
  /** The one SQL statement writing `total`, values inlined (see `literal`). */
  statement(total: number): string;
  /** The SQLSTATE the statement raises when it refuses (e.g. not enough credits)... */
  refusalCode?: string;
  /** ...and the error the caller gets then, built after the rollback. */
  refusal?: (db: Db, total: number) => Promise<Error>;
}

export interface HotRefusal {
  error(db: Db): Promise<Error>;
}

const pending = new WeakMap<object, HotWrite[]>();

/** Marks `tx` as a transaction whose hot writes go out with its COMMIT. */
export function collectHotWrites(tx: object): void {
  pending.set(tx, []);
}

/** Queues `write` for the commit of `tx` when it collects hot writes; otherwise runs it now. */
export async function writeHotRow(tx: Executor, write: HotWrite, runNow: () => Promise<void>): Promise<void> {
  const queue = pending.get(tx);
  if (queue) queue.push(write);
  else await runNow();
}

/** What the writes queued on `tx` so far add under keys starting with `prefix` (0 when none
 *  are queued): a check inside a group sees what the units before it will write. */
export function pendingHotAmount(tx: Executor, prefix: string): number {
  let total = 0;
  for (const write of pending.get(tx) ?? []) if (write.key.startsWith(prefix)) total += write.amount;
  return total;
}

/** How many writes `tx` has queued: a unit of a group drops its own back to this mark when it
 *  rolls back to its savepoint. */
export function hotWritesMark(tx: object): number {
  return pending.get(tx)?.length ?? 0;
}

export function dropHotWritesSince(tx: object, mark: number): void {
  pending.get(tx)?.splice(mark);
}

/**
 * Sends the collected statements, merged and in key order, followed by COMMIT as one
 * simple-protocol query string. When one of them refuses, PostgreSQL skips the rest (the
 * transaction is aborted) and this returns that write's refusal for the caller to throw once
 * it has rolled back.
 */
export async function commitWithHotWrites(tx: Executor): Promise<HotRefusal | null> {
  const merged = new Map<string, { write: HotWrite; total: number }>();
  for (const write of pending.get(tx) ?? []) {
    const entry = merged.get(write.key);
    if (entry) entry.total += write.amount;
    else merged.set(write.key, { write, total: write.amount });
  }
  pending.delete(tx);
  const ordered = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, entry]) => entry);
  try {
    await sql.raw([...ordered.map(({ write, total }) => write.statement(total)), 'commit'].join(';\n')).execute(tx);
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    const refused = ordered.find(({ write }) => write.refusalCode && write.refusalCode === code);
    if (refused) return { error: (db) => refused.write.refusal!(db, refused.total) };
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
