// Group commit for SQLite. A send's commit writes every page it touched (the email, event,
// job and counter rows and their indexes) to the WAL, and that write costs more than all of
// the send's statements together (measured: ~195 µs of ~400 µs). Consecutive sends touch the
// same hot pages, so sends that arrive together share one transaction and one WAL write.
//
// node:sqlite is synchronous: a transaction runs start to end without yielding, so nothing
// could ever join a running one. Instead, the first arrival waits one setImmediate, and every
// transaction requested before that turn of the event loop runs in the same one — at low
// load that wait is a few microseconds. Each unit runs inside its own SAVEPOINT, so one that
// fails (402, 429, 422) rolls back alone and its caller gets its own error.
//
// PostgreSQL commits transactions from separate connections in parallel, so there each unit
// gets its own transaction, on a connection of its own, whose hot-row writes (credits, send
// counters) go out together with its COMMIT (see hot-rows.ts).
import { sql } from 'kysely';
import { dialectOf, type Db, type Executor } from './database.ts';
import { collectHotWrites, commitWithHotWrites } from './hot-rows.ts';

type Work<T> = (tx: Executor) => Promise<T>;
interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 100;

class GroupCommitter {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, MAX_GROUP);
      if (group.length === 1) await this.runAlone(group[0]);
      else await this.runTogether(group);
    }
    this.scheduled = false;
  }

  private async runAlone(item: Pending): Promise<void> {
    try {
      item.resolve(await this.db.transaction().execute(item.work));
    } catch (error) {
      item.reject(error);
    }
  }

  private async runTogether(group: Pending[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.db.transaction().execute(async (tx) => {
        for (const [i, item] of group.entries()) {
          const savepoint = sql.raw(`unit_${i}`);
          await sql`savepoint ${savepoint}`.execute(tx);
          try {
            outcomes[i] = { ok: true, value: await item.work(tx) };
          } catch (error) {
            await sql`rollback to savepoint ${savepoint}`.execute(tx);
            outcomes[i] = { ok: false, error };
          }
          await sql`release savepoint ${savepoint}`.execute(tx);
        }
      });
    } catch (error) {
      // The commit itself failed: nothing of the group was stored.
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

const committers = new WeakMap<Db, GroupCommitter>();

/** Runs `work` in a transaction; on SQLite it shares the commit with concurrent callers, on
 *  PostgreSQL its hot-row writes are sent with the commit. */
export function groupCommit<T>(db: Db, work: Work<T>): Promise<T> {
  if (dialectOf(db) === 'postgres') return commitOnPostgres(db, work);
  let committer = committers.get(db);
  if (!committer) committers.set(db, (committer = new GroupCommitter(db)));
  return committer.run(work);
}

// BEGIN and COMMIT by hand on one pooled connection, because Kysely's own transaction sends
// its COMMIT alone, one more round trip after the last write.
async function commitOnPostgres<T>(db: Db, work: Work<T>): Promise<T> {
  const outcome = await db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    collectHotWrites(connection);
    try {
      const value = await work(connection);
      const refused = await commitWithHotWrites(connection);
      if (refused) await sql`rollback`.execute(connection);
      return { value, refused };
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
  // The refusal's message may read the database: only once this connection is back in the
  // pool, or refusals holding every connection would wait on each other for ever.
  if (outcome.refused) throw await outcome.refused.refusal!(db);
  return outcome.value;
}
