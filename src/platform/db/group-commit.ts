// Group commit for SQLite. A send's commit writes every page it touched (the email, event,
// job and counter rows and their indexes) to the WAL, and that write costs more than all of
// the send's statements together (measured: ~195 µs of ~400 µs). Consecutive sends touch the
// same hot pages, so sends that arrive together share one transaction and one WAL write.
//
// node:sqlite is synchronous: a transaction runs start to end without yielding, so nothing
// could ever join a running one. Instead, the first arrival waits one setImmediate, and every
// transaction requested before that turn of the event loop runs in the same one — at low
// load that wait is a few microseconds. A unit that fails (402, 429, 422) fails alone: its
// caller gets its own error and the others commit (see runTogether).
//
// On PostgreSQL groups form only under load (PostgresGroupCommitter below), and a
// transaction's hot-row writes (credits, send counters) go out with its COMMIT (hot-rows.ts).
import { sql } from 'kysely';
import { dialectOf, runInTransactionNow, type Db, type Executor } from './database.ts';
import { collectHotWrites, commitWithHotWrites, dropHotWritesSince, hotWritesMark } from './hot-rows.ts';
import { forgetPrefetched, prefetchForEach, useFetchedAhead, type PrefetchRead } from './prepared.ts';
import { deferred, isPipelinedWriteFailure } from './pg-client.ts';
import { isLockConflict } from './transact.ts';

type Work<T> = (tx: Executor) => Promise<T>;

export interface GroupOptions {
  /** The reads the work `prefetch`es first (PostgreSQL): the units of a group fetch theirs all
   *  in one statement before the first runs. Called once per group the unit is in. */
  reads?: () => PrefetchRead[];
}

interface Pending extends GroupOptions {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 100;

/** Queues units of work; each dialect's committer decides when and how they run. */
abstract class Committer {
  protected queue: Pending[] = [];
  protected readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  run<T>(work: Work<T>, options: GroupOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, reads: options.reads, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  protected abstract schedule(): void;
}

class GroupCommitter extends Committer {
  private scheduled = false;

  protected schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
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

  // Units run one after another without savepoints while none fails after writing: one that
  // throws before its first write (a 429, a 422, a 402 found before any insert) leaves nothing
  // to undo, as total_changes() shows. One that throws after writing rolls the group back, and
  // the group runs again with a SAVEPOINT per unit. Those two statements per unit (a SAVEPOINT
  // and its RELEASE, each through Kysely's executor) cost about as much as a send's inserts.
  private async runTogether(group: Pending[]): Promise<void> {
    const outcomes: Outcome[] = [];
    try {
      await this.db.transaction().execute(async (tx) => {
        for (const [i, item] of group.entries()) {
          const before = totalChanges(tx);
          try {
            outcomes[i] = { ok: true, value: await item.work(tx) };
          } catch (error) {
            if (before === null || totalChanges(tx) !== before) throw new WroteBeforeFailing();
            outcomes[i] = { ok: false, error };
          }
        }
      });
    } catch (error) {
      if (error instanceof WroteBeforeFailing) return this.runWithSavepoints(group);
      // The commit itself failed: nothing of the group was stored.
      for (const item of group) item.reject(error);
      return;
    }
    settleAll(group, outcomes);
  }

  private async runWithSavepoints(group: Pending[]): Promise<void> {
    const outcomes: Outcome[] = [];
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
      for (const item of group) item.reject(error);
      return;
    }
    settleAll(group, outcomes);
  }
}

class WroteBeforeFailing extends Error {}

/** Rows written on the connection so far (SQLite's total_changes(), triggers included), or null
 *  when it cannot be read at once. */
function totalChanges(tx: Executor): number | null {
  const rows = runInTransactionNow(tx, 'select total_changes() as n', []) as Array<{ n: number }> | null;
  return rows ? Number(rows[0].n) : null;
}

function settleAll(group: Pending[], outcomes: Outcome[]): void {
  group.forEach((item, i) => {
    const outcome = outcomes[i];
    if (outcome.ok) item.resolve(outcome.value);
    else item.reject(outcome.error);
  });
}

const committers = new WeakMap<Db, Committer>();

/** Runs `work` in a transaction that it may share with concurrent callers: on SQLite every
 *  unit requested in one turn of the event loop; on PostgreSQL those that arrive while the
 *  group transactions already running are busy. Each unit rolls back alone on failure. */
export function groupCommit<T>(db: Db, work: Work<T>, options: GroupOptions = {}): Promise<T> {
  let committer = committers.get(db);
  if (!committer) committers.set(db, (committer = dialectOf(db) === 'postgres' ? new PostgresGroupCommitter(db) : new GroupCommitter(db)));
  return committer.run(work, options);
}

/** Runs `work` in a transaction of its own; on PostgreSQL its hot-row writes go out with the
 *  COMMIT. For work that changes its transaction's settings (e.g. synchronous_commit). */
export function commitAlone<T>(db: Db, work: Work<T>): Promise<T> {
  return dialectOf(db) === 'postgres' ? commitOnPostgres(db, work) : db.transaction().execute(work);
}

// On PostgreSQL each commit waits for its WAL flush, and every send of a workspace updates the
// same hot rows: one send per transaction is bounded by that flush (measured on this machine:
// 398 sends/s with 76 % of PostgreSQL's CPU time in the kernel, flushing). Units that arrive
// while a group runs wait for the next group, so at low load a send runs alone at once, and
// under load many share a flush and a single update of each hot row (hot-rows.ts merges them).
// One group at a time per process: groups running side by side queue on the same hot-row locks
// at their COMMITs anyway, and each costs PostgreSQL a busy backend. On 2 cores, one process
// end to end (the deliver bench, 2026-11-29, alternating runs): 1 group 462-531 msg/s, 3 groups
// 449-486, 2 groups in between; the send bench's rate was the same and its p99 no worse.
const POSTGRES_GROUPS = 1;
// Except when the group running is stalled: a commit whose WAL flush takes 20-40 ms (this
// machine's disk does that a few times in ten seconds) held back every send that arrived
// meanwhile until it ended, and then until the next group had run all its statements. Past
// STALLED_GROUP_MS a second group starts, so its statements run during the stall and only its
// COMMIT waits (on the hot rows the first holds). Alternating runs, 2026-11-29: send bench p99
// at 500 req/s 45/75 ms against 106/116 with one group only; deliver on PostgreSQL, one
// process, 412/395 against 384/398 msg/s.
const STALLED_GROUP_MS = 10;
const MAX_POSTGRES_GROUPS_STALLED = 2;
// Below PostgreSQL's 64 cached subtransactions per backend, beyond which snapshots get slower.
const MAX_POSTGRES_GROUP = 48;

class PostgresGroupCommitter extends Committer {
  private running = 0;
  private lastStartedAt = 0;
  private stallCheck: NodeJS.Timeout | null = null;

  protected schedule(): void {
    while (this.queue.length > 0 && this.mayStartGroup()) {
      const group = this.queue.splice(0, MAX_POSTGRES_GROUP);
      this.running++;
      this.lastStartedAt = performance.now();
      void this.runGroup(group).finally(() => {
        this.running--;
        this.schedule();
      });
    }
    if (this.queue.length > 0 && this.running < MAX_POSTGRES_GROUPS_STALLED && !this.stallCheck) {
      const wait = Math.max(0, this.lastStartedAt + STALLED_GROUP_MS - performance.now());
      this.stallCheck = setTimeout(() => {
        this.stallCheck = null;
        this.schedule();
      }, wait);
    }
  }

  private mayStartGroup(): boolean {
    if (this.running < POSTGRES_GROUPS) return true;
    return this.running < MAX_POSTGRES_GROUPS_STALLED && performance.now() - this.lastStartedAt >= STALLED_GROUP_MS;
  }

  private async runGroup(group: Pending[]): Promise<void> {
    if (group.length === 1) return settle(group[0], () => commitOnPostgres(this.db, group[0].work));
    let outcome: { results: Outcome[]; refused: boolean };
    try {
      outcome = await this.db.connection().execute((connection) => runUnitsTogether(connection, group));
    } catch (error) {
      // A unit's pipelined write failed (pg-client.ts); the query that reported it may have been
      // another unit's: each runs again alone, where its failure is its own.
      if (isPipelinedWriteFailure(error)) {
        await Promise.all(group.map((item) => settle(item, () => commitOnPostgres(this.db, item.work))));
        return;
      }
      // The commit itself failed: nothing of the group was stored.
      for (const item of group) item.reject(error);
      return;
    }
    // A merged hot write refused (e.g. the credits cover only some of the group), and the whole
    // group rolled back: each unit that had succeeded runs again alone and gets its own answer.
    // A unit that lost a deadlock to another group's units (locks a lone unit would never have
    // held together) runs again alone too. The others keep their own outcomes.
    const again = (result: Outcome) => (outcome.refused && result.ok) || (!result.ok && isLockConflict(result.error));
    const reruns: Promise<void>[] = [];
    group.forEach((item, i) => {
      const result = outcome.results[i];
      if (again(result)) reruns.push(settle(item, () => commitOnPostgres(this.db, item.work)));
      else if (result.ok) item.resolve(result.value);
      else item.reject(result.error);
    });
    await Promise.all(reruns);
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

async function settle(item: Pending, run: () => Promise<unknown>): Promise<void> {
  try {
    item.resolve(await run());
  } catch (error) {
    item.reject(error);
  }
}

// The units one after another in one transaction, each in a savepoint; their hot writes, merged,
// go out with the COMMIT. Every unit's reads are fetched first, in one statement, so a send
// (whose rows are a pipelined write) costs the group no round trip of its own: a group takes
// two, its reads and its COMMIT, however many units it has.
async function runUnitsTogether(connection: Executor, group: Pending[]): Promise<{ results: Outcome[]; refused: boolean }> {
  const results: Outcome[] = [];
  collectHotWrites(connection);
  try {
    // The BEGIN goes out with the reads, each SAVEPOINT with the unit's first statement.
    await sql.raw(deferred('begin')).execute(connection);
    const ahead = await prefetchForEach(connection, group.map(readsOf));
    for (const [i, item] of group.entries()) {
      const savepoint = sql.raw(`unit_${i}`);
      const mark = hotWritesMark(connection);
      await sql.raw(deferred(`savepoint unit_${i}`)).execute(connection);
      useFetchedAhead(connection, ahead[i]);
      try {
        results[i] = { ok: true, value: await item.work(connection) };
      } catch (error) {
        if (isPipelinedWriteFailure(error)) throw error; // perhaps an earlier unit's: see runGroup
        await sql`rollback to savepoint ${savepoint}`.execute(connection);
        dropHotWritesSince(connection, mark);
        results[i] = { ok: false, error };
      }
      forgetPrefetched(connection);
    }
    const refused = (await commitWithHotWrites(connection)) !== null;
    if (refused) await sql`rollback`.execute(connection);
    return { results, refused };
  } catch (error) {
    await sql`rollback`.execute(connection).catch(() => {});
    throw error;
  }
}

// A unit's reads to fetch ahead; none if its hook fails (the unit then reads them itself).
function readsOf(item: Pending): PrefetchRead[] {
  try {
    return item.reads?.() ?? [];
  } catch {
    return [];
  }
}

// BEGIN and COMMIT by hand on one pooled connection, because Kysely's own transaction sends
// its COMMIT alone, one more round trip after the last write.
async function commitOnPostgres<T>(db: Db, work: Work<T>): Promise<T> {
  const outcome = await db.connection().execute(async (connection) => {
    await sql.raw(deferred('begin')).execute(connection);
    collectHotWrites(connection);
    try {
      const value = await work(connection);
      forgetPrefetched(connection);
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
  if (outcome.refused) throw await outcome.refused.error(db);
  return outcome.value;
}
