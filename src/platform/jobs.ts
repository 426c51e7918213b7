// The durable job queue: a `jobs` table in the service's own database.
// - enqueueJob runs inside the caller's transaction (outbox): the job exists iff the data does.
// - A worker claims due jobs with a short lease (locked_until) and renews it while the job
//   runs, so a live worker's long job (a slow SMTP exchange) is never taken over, and a dead
//   worker's jobs run again within seconds of its lease running out; handlers must therefore
//   be idempotent.
// - A failing job is retried with exponential backoff until max_attempts, then kept as dead.
// - On PostgreSQL, many workers claim concurrently with FOR UPDATE SKIP LOCKED.
// - A job may carry a key, unique among the live (not dead) jobs of its type: features find,
//   cancel and reschedule their jobs by key (never by payload text), and a keyed enqueue is
//   idempotent. Recurring jobs (recurring-jobs.ts) are keyed jobs that reschedule themselves.
// - Handlers are declared by each resource (Resource.jobs) and handed to the runner of one
//   running app: nothing is registered process-wide.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor } from './db/database.ts';
import { dialectOf } from './db/database.ts';
import { nowIso, nowMs } from './clock.ts';
import { preparedQuery } from './db/prepared.ts';
import { inSpan, SpanKind, tracingOn } from './tracing.ts';
import type { JobsTable } from './db/schema.ts';
import type { Selectable } from 'kysely';

export type JobRow = Selectable<JobsTable>;

export interface Job<P = any> {
  id: number;
  type: string;
  /** Unique among the live jobs of its type, when it has one. */
  key?: string | null;
  payload: P;
  /** When the job was due (epoch ms). */
  runAt?: number;
  attempts: number;
  maxAttempts: number;
  /** The worker holding the lease (set by claimDueJobs): only it may complete the job. */
  lockedBy?: string;
}

/** What a handler returns when it completed its job itself (completeJobs with `job.lockedBy`)
 *  in the transaction that recorded its outcome: the runner then has nothing left to delete. */
export const JOB_COMPLETED = Symbol('job completed by its handler');

export interface EnqueueOptions {
  /** Epoch ms when the job becomes due (default: now). */
  runAt?: number;
  maxAttempts?: number;
  /**
   * Makes the enqueue idempotent. While a live job of this type has the key, nothing new is
   * inserted: if that job is waiting, it stays as it is (its payload and time: move it with
   * rescheduleByKey); if it is running, it runs once more after it finishes, due at the `runAt`
   * of the first such enqueue (so a change made during a run is not missed).
   */
  key?: string;
}

// A type, not an interface: prepared queries take a record of parameters.
type JobValues = {
  type: string;
  key: string | null;
  payload: string;
  runAt: number;
  maxAttempts: number;
  createdAt: string;
};

const insertJob = preparedQuery((db, p: JobValues) =>
  db
    .insertInto('jobs')
    .values({ type: p.type, payload: p.payload, run_at: p.runAt, attempts: 0, max_attempts: p.maxAttempts, created_at: p.createdAt })
    .returning('id'),
);

// The live job with the key is the conflict (the partial unique index of migration 0029): a
// running one is asked to run again; a waiting one is left alone (no row comes back).
const insertKeyedJob = preparedQuery((db, p: JobValues) =>
  db
    .insertInto('jobs')
    .values({
      type: p.type,
      key: p.key,
      payload: p.payload,
      run_at: p.runAt,
      attempts: 0,
      max_attempts: p.maxAttempts,
      created_at: p.createdAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['type', 'key'])
        .where('key', 'is not', null)
        .where('dead_at', 'is', null)
        .doUpdateSet({ rerun_at: sql`coalesce(jobs.rerun_at, excluded.run_at)` })
        .where('jobs.locked_by', 'is not', null),
    )
    .returning('id'),
);

// Inserts the keyed job unless a live one has the key (recurring jobs' one instance).
const insertKeyedJobUnlessLive = preparedQuery((db, p: JobValues) =>
  db
    .insertInto('jobs')
    .values({
      type: p.type,
      key: p.key,
      payload: p.payload,
      run_at: p.runAt,
      attempts: 0,
      max_attempts: p.maxAttempts,
      created_at: p.createdAt,
    })
    .onConflict((oc) => oc.columns(['type', 'key']).where('key', 'is not', null).where('dead_at', 'is', null).doNothing())
    .returning('id'),
);

const jobValues = (type: string, payload: unknown, options: EnqueueOptions): JobValues => ({
  type,
  key: options.key ?? null,
  payload: JSON.stringify(payload ?? null),
  runAt: Math.floor(options.runAt ?? nowMs()),
  maxAttempts: options.maxAttempts ?? 10,
  createdAt: nowIso(),
});

/** Enqueues a job in the caller's transaction; its id. With a key: null when a waiting job
 *  had the key (nothing changed), the running job's id when that one will run again. */
export async function enqueueJob(
  tx: Executor,
  type: string,
  payload: unknown,
  options?: EnqueueOptions & { key?: undefined },
): Promise<number>;
export async function enqueueJob(tx: Executor, type: string, payload: unknown, options: EnqueueOptions): Promise<number | null>;
export async function enqueueJob(tx: Executor, type: string, payload: unknown, options: EnqueueOptions = {}): Promise<number | null> {
  const values = jobValues(type, payload, options);
  const [row] = await (values.key === null ? insertJob : insertKeyedJob)(tx, values);
  enqueuedSignal(type).notify();
  return row ? Number(row.id) : null;
}

/** Inserts the keyed job unless a live job of its type has the key; whether it did. */
export async function ensureKeyedJob(
  tx: Executor,
  type: string,
  key: string,
  payload: unknown,
  options: Omit<EnqueueOptions, 'key'> = {},
): Promise<boolean> {
  const rows = await insertKeyedJobUnlessLive(tx, jobValues(type, payload, { ...options, key }));
  if (rows.length > 0) enqueuedSignal(type).notify();
  return rows.length > 0;
}

/** enqueueJob as the INSERT of a larger statement (PostgreSQL: emitEvents' `alsoWrite`); the
 *  job's waiting workers are told when the returned `enqueued` is called (best after the commit). */
export function jobInsertPart(
  db: Executor,
  type: string,
  payload: unknown,
  options: EnqueueOptions = {},
): { part: { sql: string; values: unknown[] }; enqueued(): void } {
  const values = jobValues(type, payload, options);
  const part = (values.key === null ? insertJob : insertKeyedJob).part(db, values);
  return { part, enqueued: () => enqueuedSignal(type).notify() };
}

// ---- Keys: a feature's handle on its own jobs (the jobs table is read nowhere else).

/** A live job found by its key. */
export interface KeyedJob {
  id: number;
  type: string;
  key: string;
  payload: unknown;
  runAt: number;
  attempts: number;
  /** A worker holds its lease now (it is being run): too late to cancel or move it. */
  running: boolean;
}

const leased = (lockedUntil: number | string | null, now: number) => lockedUntil !== null && Number(lockedUntil) >= now;

/** The live (not dead) job of `type` with `key`, if any. */
export async function findByKey(db: Executor, type: string, key: string): Promise<KeyedJob | null> {
  const row = await db
    .selectFrom('jobs')
    .select(['id', 'type', 'key', 'payload', 'run_at', 'attempts', 'locked_until'])
    .where('type', '=', type)
    .where('key', '=', key)
    .where('dead_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: Number(row.id),
    type: row.type,
    key: row.key!,
    payload: JSON.parse(row.payload),
    runAt: Number(row.run_at),
    attempts: row.attempts,
    running: leased(row.locked_until, Math.floor(nowMs())),
  };
}

/** Removes the waiting job of `type` with `key`. 'running': a worker holds it (left alone);
 *  'absent': there is none. */
export async function cancelByKey(tx: Executor, type: string, key: string): Promise<'canceled' | 'running' | 'absent'> {
  const now = Math.floor(nowMs());
  const removed = await tx
    .deleteFrom('jobs')
    .where('type', '=', type)
    .where('key', '=', key)
    .where('dead_at', 'is', null)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .executeTakeFirst();
  if (Number(removed.numDeletedRows) > 0) return 'canceled';
  return (await findByKey(tx, type, key)) ? 'running' : 'absent';
}

/** Moves the waiting job of `type` with `key` to `runAt` (epoch ms). 'running': a worker holds
 *  it (left alone); 'absent': there is none. */
export async function rescheduleByKey(
  tx: Executor,
  type: string,
  key: string,
  runAt: number,
): Promise<'rescheduled' | 'running' | 'absent'> {
  const now = Math.floor(nowMs());
  const moved = await tx
    .updateTable('jobs')
    .set({ run_at: Math.floor(runAt) })
    .where('type', '=', type)
    .where('key', '=', key)
    .where('dead_at', 'is', null)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) > 0) return 'rescheduled';
  return (await findByKey(tx, type, key)) ? 'running' : 'absent';
}

/** Whether more than `count` jobs of `type` are due now (a backlog check; one index range read). */
export async function dueJobsExceed(db: Executor, type: string, count: number): Promise<boolean> {
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('type', '=', type)
    .where('dead_at', 'is', null)
    .where('run_at', '<=', Math.floor(nowMs()))
    .limit(1)
    .offset(count)
    .executeTakeFirst();
  return row !== undefined;
}

// Compiled once: claiming runs after every batch of finished or new jobs.
const claimDue = preparedQuery((db, p: { type: string; now: number; lockedUntil: number; workerId: string; limit: number }) => {
  const due = db
    .selectFrom('jobs')
    .select('id')
    .where('type', '=', p.type)
    .where('dead_at', 'is', null)
    .where('run_at', '<=', p.now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', p.now)]))
    .orderBy('run_at')
    .orderBy('id')
    .limit(p.limit);
  return db
    .updateTable('jobs')
    .set({ locked_until: p.lockedUntil, locked_by: p.workerId, attempts: sql`attempts + 1` })
    .where('id', 'in', dialectOf(db) === 'postgres' ? due.forUpdate().skipLocked() : due)
    .returningAll();
});

/** Claims up to `limit` due jobs of `type`, leasing them for `leaseMs`. */
export async function claimDueJobs(db: Db, type: string, limit: number, leaseMs: number, workerId: string): Promise<Job[]> {
  const now = Math.floor(nowMs());
  const rows = await claimDue(db, { type, now, lockedUntil: now + leaseMs, workerId, limit });
  return rows
    .sort((a, b) => a.run_at - b.run_at || Number(a.id) - Number(b.id))
    .map((row) => ({
      id: Number(row.id),
      type: row.type,
      key: row.key,
      payload: JSON.parse(row.payload),
      runAt: Number(row.run_at),
      attempts: row.attempts,
      maxAttempts: row.max_attempts,
      lockedBy: workerId,
    }));
}

/** Extends the leases `workerId` holds on `ids` to `lockedUntil`; how many it still held. */
export async function renewJobLeases(db: Db, ids: number[], workerId: string, lockedUntil: number): Promise<number> {
  let renewed = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const result = await db
      .updateTable('jobs')
      .set({ locked_until: lockedUntil })
      .where('id', 'in', ids.slice(i, i + 500))
      .where('locked_by', '=', workerId)
      .executeTakeFirst();
    renewed += Number(result.numUpdatedRows);
  }
  return renewed;
}

/** Hands back every job `workerId` holds: unleased, due as before, the claim not counted. */
export async function releaseJobLeases(db: Db, workerId: string): Promise<number> {
  const result = await db
    .updateTable('jobs')
    .set({ locked_until: null, locked_by: null, attempts: sql`case when attempts > 0 then attempts - 1 else 0 end` })
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A finished job is deleted; only the worker holding the lease may finish it. */
export async function completeJob(db: Executor, job: Job, workerId: string): Promise<boolean> {
  return (await completeJobs(db, [job.id], workerId)) > 0;
}

// One job, compiled once: on SQLite, inside a transaction, a batch's jobs are deleted one at a
// time, since compiling an `in (…)` list of each batch's length cost more than running the
// statements (outside one, each statement would be a commit of its own).
const completeOwnJob = preparedQuery((db, p: { id: number; workerId: string }) =>
  db.deleteFrom('jobs').where('id', '=', p.id).where('locked_by', '=', p.workerId).where('rerun_at', 'is', null).returning('id'),
);

/** Deletes many finished jobs of one worker (in one statement on PostgreSQL); how many were still its own.
 *  A job asked to run again while it ran (a keyed enqueue) is put back, due at that time, instead. */
export async function completeJobs(db: Executor, ids: number[], workerId: string): Promise<number> {
  let deleted = 0;
  if (dialectOf(db) === 'sqlite' && (db.isTransaction || ids.length === 1)) {
    for (const id of ids) deleted += (await completeOwnJob(db, { id, workerId })).length;
  } else {
    for (let i = 0; i < ids.length; i += 500) {
      const result = await db
        .deleteFrom('jobs')
        .where('id', 'in', ids.slice(i, i + 500))
        .where('locked_by', '=', workerId)
        .where('rerun_at', 'is', null)
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
  }
  // Rare (only keyed jobs enqueued again while running), so only then a second statement.
  if (deleted < ids.length) deleted += await requeueRerunJobs(db, ids, workerId);
  return deleted;
}

async function requeueRerunJobs(db: Executor, ids: number[], workerId: string): Promise<number> {
  let requeued = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const result = await db
      .updateTable('jobs')
      .set({ run_at: sql`rerun_at`, rerun_at: null, attempts: 0, last_error: null, locked_until: null, locked_by: null })
      .where('id', 'in', ids.slice(i, i + 500))
      .where('locked_by', '=', workerId)
      .where('rerun_at', 'is not', null)
      .executeTakeFirst();
    requeued += Number(result.numUpdatedRows);
  }
  return requeued;
}

/** Puts a finished job of `workerId` back in the queue, due at `runAt`, its attempts reset
 *  (a recurring job's next run: the same row, so there is never a second one). */
export async function requeueJob(db: Executor, job: Job, workerId: string, runAt: number): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ run_at: Math.floor(runAt), rerun_at: null, attempts: 0, last_error: null, locked_until: null, locked_by: null })
    .where('id', '=', job.id)
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function backoffMs(attempt: number, baseMs = 1000, capMs = 60 * 60 * 1000): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + Math.random() * (exponential / 2));
}

/** Records a failure: retried later with backoff, or dead once its attempts are used up. */
export async function failJob(db: Executor, job: Job, error: string, retryAtMs?: number): Promise<'retry' | 'dead'> {
  if (retryAtMs === undefined && job.attempts >= job.maxAttempts) {
    await db
      .updateTable('jobs')
      .set({ dead_at: nowIso(), last_error: error, locked_until: null, locked_by: null })
      .where('id', '=', job.id)
      .execute();
    return 'dead';
  }
  const runAt = Math.floor(retryAtMs ?? nowMs() + backoffMs(job.attempts));
  // A run asked for meanwhile (rerun_at) is this retry.
  await db
    .updateTable('jobs')
    .set({ run_at: runAt, rerun_at: null, last_error: error, locked_until: null, locked_by: null })
    .where('id', '=', job.id)
    .execute();
  return 'retry';
}

/** Wakes idle workers of a job type in this process when one is enqueued (other processes poll). */
class Signal {
  private waiters: Array<() => void> = [];
  /** Counts notifications, so a waiter can tell it missed one while it was busy. */
  generation = 0;
  /** When the last notification came (Date.now()). */
  notifiedAt = 0;
  /** `enqueue` false: woken because jobs are due (the shared due check), not by a new one. */
  notify(enqueue = true): void {
    this.generation++;
    if (enqueue) this.notifiedAt = Date.now();
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
  /** Resolves at the next notification (at once if one came after `since`) or after `ms`. */
  wait(ms: number, since = this.generation): Promise<void> {
    if (since !== this.generation) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.waiters = self.waiters.filter((w) => w !== done);
        resolve();
      }
      this.waiters.push(done);
    });
  }
}
const enqueued = new Map<string, Signal>();
function enqueuedSignal(type: string): Signal {
  let signal = enqueued.get(type);
  if (!signal) enqueued.set(type, (signal = new Signal()));
  return signal;
}

/** What a handler may ask for instead of success: run again at a time of its choosing. */
export class RetryJobAt extends Error {
  readonly runAtMs: number;
  constructor(runAtMs: number, reason: string) {
    super(reason);
    this.runAtMs = runAtMs;
  }
}

/** An idle loop's own poll, a safety net behind the runner's due check: this many intervals. */
const IDLE_WAIT_POLLS = 20;

/** Which of `types` have a job that a claim would take now (unlocked, due, not dead). */
async function typesWithDueJobs(db: Db, types: string[]): Promise<string[]> {
  const now = Math.floor(nowMs());
  const due = (type: string) =>
    db.selectNoFrom(sql<string>`cast(${type} as text)`.as('type')).where((eb) =>
      eb.exists(
        eb
          .selectFrom('jobs')
          .select('id')
          .where('type', '=', type)
          .where('dead_at', 'is', null)
          .where('run_at', '<=', now)
          .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<', now)])),
      ),
    );
  let query = due(types[0]);
  for (const type of types.slice(1)) query = query.unionAll(due(type));
  return (await query.execute()).map((row) => row.type);
}

/** The shortest time between two claims for a job type. A claim is a commit (on PostgreSQL a
 *  WAL flush): in the PostgreSQL deliver bench 25 ms against 10 ms gave 1.23x Postfix against
 *  1.11x, a few more jobs per claim for at most 25 ms more before a delivery starts. */
const CLAIM_BATCH_WAIT_MS = 25;
/** How soon a claim is tried again after one that a recent enqueue prompted found nothing. */
const AFTER_ENQUEUE_POLL_MS = 25;

export interface JobHandlerOptions {
  concurrency?: number;
  /** How long a claimed job stays locked without a renewal (renewed every third of it). */
  leaseMs?: number;
}

/** Default lease: a dead worker's jobs are taken over within this time. */
export const JOB_LEASE_MS = 20_000;

export type JobHandlerFn = (job: Job, db: Db) => Promise<void | typeof JOB_COMPLETED>;

/** One job type's handler, as a resource declares it (Resource.jobs): handed to the runner of
 *  one running app, so each app's handler holds its own context (tests run several apps in one process). */
export interface JobHandler extends JobHandlerOptions {
  type: string;
  handler: JobHandlerFn;
  /** A keyed job that must always exist (a recurring job's one instance): the runner inserts
   *  it at start unless a live job of the type has the key. */
  standing?: { key: string; runAt(): number; maxAttempts: number };
}

export function jobHandler(type: string, handler: JobHandlerFn, options: JobHandlerOptions = {}): JobHandler {
  return { type, handler, ...options };
}

/** What one resource's workers run in one running app (Resource.jobs). */
export interface ResourceJobs {
  handlers: JobHandler[];
  /** Called after the runner has stopped (in-flight jobs have finished): closes what the handlers share. */
  close?(): Promise<void>;
}

interface Registered extends Required<JobHandlerOptions> {
  handler: JobHandlerFn;
}

export interface JobRunnerOptions {
  /** The job types this runner runs (several handlers of one type: the last wins). */
  handlers: JobHandler[];
  pollMs?: number;
  log?: { error(obj: unknown, msg?: string): void };
  types?: string[];
}

/** Runs registered handlers until stopped: one loop per job type, each with its own concurrency. */
export class JobRunner {
  private stopping = false;
  private handedBack = false;
  private loops: Promise<void>[] = [];
  private readonly workerId = randomUUID();
  private readonly db: Db;
  private readonly options: JobRunnerOptions;
  /** Jobs running now, with their type's lease, renewed by one timer per lease length. */
  private readonly leased = new Map<number, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly handlers = new Map<string, Registered>();
  private readonly standing: JobHandler[];
  constructor(db: Db, options: JobRunnerOptions) {
    this.db = db;
    this.options = options;
    const run = options.handlers.filter((h) => !options.types || options.types.includes(h.type));
    for (const h of run)
      this.handlers.set(h.type, { handler: h.handler, concurrency: h.concurrency ?? 4, leaseMs: h.leaseMs ?? JOB_LEASE_MS });
    this.standing = run.filter((h) => h.standing);
  }

  /** Makes sure each standing (recurring) job exists, then starts the loops. */
  async start(): Promise<void> {
    for (const { type, standing } of this.standing) {
      await ensureKeyedJob(this.db, type, standing!.key, {}, { runAt: standing!.runAt(), maxAttempts: standing!.maxAttempts });
    }
    const handlers = this.handlers;
    const leases = new Set<number>();
    for (const [type, registered] of handlers) {
      this.loops.push(this.loop(type, registered));
      leases.add(registered.leaseMs);
    }
    const types = [...handlers.keys()];
    if (types.length > 0) {
      const timer = setInterval(() => void this.wakeDue(types), this.options.pollMs ?? 500);
      timer.unref();
      this.timers.push(timer);
    }
    for (const leaseMs of leases) {
      const timer = setInterval(() => void this.renew(leaseMs), Math.max(50, Math.floor(leaseMs / 3)));
      timer.unref();
      this.timers.push(timer);
    }
  }

  // Idle loops do not claim on a timer each (a claim is a write: ten job types polling made
  // twenty write transactions a second on an idle server); one read finds the types with a
  // job to claim (one enqueued by another process, a retry come due) and wakes their loops.
  private async wakeDue(types: string[]): Promise<void> {
    try {
      for (const type of await typesWithDueJobs(this.db, types)) enqueuedSignal(type).notify(false);
    } catch (error) {
      if (!this.stopping) this.options.log?.error({ err: error }, 'checking for due jobs failed');
    }
  }

  private async renew(leaseMs: number): Promise<void> {
    const ids = [...this.leased].filter(([, lease]) => lease === leaseMs).map(([id]) => id);
    if (ids.length === 0) return;
    try {
      await renewJobLeases(this.db, ids, this.workerId, Math.floor(nowMs()) + leaseMs);
    } catch (error) {
      // The next renewal tries again; a lease lost meanwhile only means the job may run twice.
      if (!this.stopping) this.options.log?.error({ err: error }, 'renewing job leases failed');
    }
  }

  private async loop(type: string, registered: Registered): Promise<void> {
    const running = new Set<Promise<void>>();
    const pollMs = this.options.pollMs ?? 500;
    // Under load, claim a handful at a time rather than one per finished or new job: a claim
    // is a write (on SQLite a commit) whatever its size. So while jobs run, claims wait for
    // CLAIM_BATCH_WAIT_MS or a few free slots, and a claim that found less than it could take
    // waits for the next enqueue (or the poll) instead of asking again at once.
    const claimBatch = Math.max(1, Math.floor(registered.concurrency / 8));
    const signal = enqueuedSignal(type);
    // Woken by whichever running job ends first. Not Promise.race(running): that attaches a
    // reaction to every running job each time one ends (a few KB of garbage per job at a
    // concurrency of 64, and each reaction lives until its job ends).
    let slotFreed: (() => void) | null = null;
    let lastClaimAt = 0;
    while (!this.stopping) {
      const free = registered.concurrency - running.size;
      if (free < claimBatch && running.size > 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        continue;
      }
      // Also when idle: a stream of enqueues (each one wakes this loop) is then claimed a few
      // jobs at a time rather than one claim per enqueue.
      const early = lastClaimAt + CLAIM_BATCH_WAIT_MS - Date.now();
      if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
      lastClaimAt = Date.now();
      const generation = signal.generation;
      let claimed: Job[] = [];
      try {
        claimed = await claimDueJobs(this.db, type, free, registered.leaseMs, this.workerId);
      } catch (error) {
        if (!this.stopping) this.options.log?.error({ err: error, type }, 'claiming jobs failed');
      }
      for (const job of claimed) {
        this.leased.set(job.id, registered.leaseMs);
        const run = this.run(job, registered).finally(() => {
          running.delete(run);
          this.leased.delete(job.id);
          slotFreed?.();
          slotFreed = null;
        });
        running.add(run);
      }
      // An enqueue notifies before its transaction commits, so the claim it prompts can come
      // too early (on PostgreSQL it then sees nothing): for a poll interval after an enqueue,
      // look again soon rather than a whole interval later.
      // Otherwise the runner's due check (every poll interval, one read for all types) wakes it.
      const recent = Date.now() - signal.notifiedAt < pollMs;
      if (claimed.length < free) await signal.wait(recent ? Math.min(pollMs, AFTER_ENQUEUE_POLL_MS) : pollMs * IDLE_WAIT_POLLS, generation);
    }
    await Promise.allSettled(running);
  }

  private async run(job: Job, registered: Registered): Promise<void> {
    try {
      const outcome =
        tracingOn && typeof job.payload?.traceparent === 'string'
          ? await this.runTraced(job, registered)
          : await registered.handler(job, this.db);
      // Handed back at shutdown: the job is no longer ours to finish or to fail.
      if (this.handedBack) return;
      if (outcome !== JOB_COMPLETED) await this.complete(job);
    } catch (error) {
      if (this.handedBack) return;
      const message = error instanceof Error ? error.message : String(error);
      try {
        if (error instanceof RetryJobAt) await failJob(this.db, job, message, error.runAtMs);
        else {
          const outcome = await failJob(this.db, job, message);
          if (outcome === 'dead') this.options.log?.error({ err: error, jobId: job.id, type: job.type }, 'job failed permanently');
        }
      } catch (recordError) {
        // The lease will expire and the job run again.
        if (!this.stopping) this.options.log?.error({ err: recordError, jobId: job.id }, 'recording a job failure failed');
      }
    }
  }

  /** A job enqueued with a traceparent in its payload (tracing on) runs in a span of that
   *  trace: it may run much later, or in another process. */
  private runTraced(job: Job, registered: Registered): Promise<void | typeof JOB_COMPLETED> {
    const attributes = { 'postlane.job_id': job.id, 'postlane.job_type': job.type, 'postlane.job_attempt': job.attempts };
    return inSpan(`job ${job.type}`, { kind: SpanKind.CONSUMER, parent: job.payload.traceparent, attributes }, () =>
      registered.handler(job, this.db),
    );
  }

  // Jobs finished in the same turn of the event loop are deleted together.
  private completions: Array<{ id: number; resolve(): void; reject(error: unknown): void }> = [];
  private complete(job: Job): Promise<void> {
    return new Promise((resolve, reject) => {
      this.completions.push({ id: job.id, resolve, reject });
      if (this.completions.length > 1) return;
      setImmediate(() => {
        const batch = this.completions.splice(0);
        completeJobs(
          this.db,
          batch.map((item) => item.id),
          this.workerId,
        ).then(
          () => batch.forEach((item) => item.resolve()),
          (error) => batch.forEach((item) => item.reject(error)),
        );
      });
    });
  }

  /**
   * Stops claiming and waits for the running jobs. With `timeoutMs`, jobs still running then
   * are handed back: their leases are released (and the claim not counted as an attempt), so
   * another process, or the next start, takes them at once. Returns how many were handed back.
   */
  async stop(timeoutMs = Infinity): Promise<number> {
    this.stopping = true;
    for (const signal of enqueued.values()) signal.notify();
    const finished = Promise.allSettled(this.loops).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const done = Number.isFinite(timeoutMs)
      ? await Promise.race([finished, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))])
      : await finished;
    clearTimeout(timer);
    for (const timer of this.timers) clearInterval(timer);
    if (done) return 0;
    this.handedBack = true;
    return releaseJobLeases(this.db, this.workerId);
  }
}

/** Enqueues many jobs of one type in the caller's transaction with multi-row inserts (a
 *  campaign batch's deliveries); returns how many. `keys[i]`, when given, is the key of the i-th
 *  job: meant for keys no live job can hold yet (new emails' ids), since a clash fails the insert
 *  instead of being skipped as enqueueJob's would be. */
export async function enqueueJobs(
  tx: Executor,
  type: string,
  payloads: unknown[],
  options: Omit<EnqueueOptions, 'key'> & { keys?: string[] } = {},
): Promise<number> {
  const runAt = Math.floor(options.runAt ?? nowMs());
  const createdAt = nowIso();
  const rows = payloads.map((payload, i) => ({
    type,
    key: options.keys?.[i] ?? null,
    payload: JSON.stringify(payload ?? null),
    run_at: runAt,
    attempts: 0,
    max_attempts: options.maxAttempts ?? 10,
    created_at: createdAt,
  }));
  // 7 parameters a row: well under SQLite's and PostgreSQL's limits per statement.
  for (let i = 0; i < rows.length; i += 1000)
    await tx
      .insertInto('jobs')
      .values(rows.slice(i, i + 1000))
      .execute();
  if (rows.length > 0) enqueuedSignal(type).notify();
  return rows.length;
}
