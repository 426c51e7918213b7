// Recurring jobs, declared once by the resource that owns them (Resource.jobs):
//
//   recurringJob({ name: 'emails.purge-content', every: DAY_MS, run: (job, db) => … })
//
// Each is one keyed job (type and key: its name) that the runner inserts at start unless it is
// live, so however many processes start, one instance exists. When a run ends, that same row
// is made due again at the next time in one UPDATE guarded by the worker's lease: there is no
// second row to enqueue, so a crash between the run and the re-scheduling cannot start a
// second chain. The run is then repeated (the lease runs out and another worker takes the
// row), so a run must be safe to repeat for the same period, as every handler is.
import { nowMs } from './clock.ts';
import type { Db } from './db/database.ts';
import { JOB_COMPLETED, JOB_LEASE_MS, requeueJob, type Job, type JobHandler } from './jobs.ts';

const DAY_MS = 86_400_000;
/** A failing recurring job retries with backoff (at most an hour apart) and never dies. */
const RECURRING_ATTEMPTS = 1_000_000;

export interface RecurringJob {
  /** The job type, and the key of its one instance. */
  name: string;
  /** Runs this long after each run ends; the first run is due at start. */
  every?: number;
  /** Runs each day at this UTC time ('HH:MM'); the first run is due at the next one. */
  dailyAt?: string;
  /** The work. Returning `nextRunAt` (epoch ms) sets the next run instead of the schedule. */
  run(job: Job, db: Db): Promise<void | { nextRunAt: number }>;
  leaseMs?: number;
}

/** The next `HH:MM` UTC strictly after `ms`. */
export function nextDailyAt(time: string, ms: number): number {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(time);
  if (!match) throw new Error(`dailyAt must be HH:MM (UTC), got ${time}`);
  const at = Math.floor(ms / DAY_MS) * DAY_MS + (Number(match[1]) * 60 + Number(match[2])) * 60_000;
  return at > ms ? at : at + DAY_MS;
}

export function recurringJob(spec: RecurringJob): JobHandler {
  if ((spec.every === undefined) === (spec.dailyAt === undefined))
    throw new Error(`recurring job ${spec.name}: give either every or dailyAt`);
  const next = (now: number) => (spec.dailyAt !== undefined ? nextDailyAt(spec.dailyAt, now) : now + spec.every!);
  return {
    type: spec.name,
    concurrency: 1,
    leaseMs: spec.leaseMs ?? JOB_LEASE_MS,
    standing: {
      key: spec.name,
      runAt: () => (spec.dailyAt !== undefined ? nextDailyAt(spec.dailyAt, nowMs()) : nowMs()),
      maxAttempts: RECURRING_ATTEMPTS,
    },
    async handler(job, db) {
      const outcome = await spec.run(job, db);
      // Not ours any more (handed back at shutdown, or the lease lost): whoever holds it reschedules it.
      await requeueJob(db, job, job.lockedBy!, outcome?.nextRunAt ?? next(nowMs()));
      return JOB_COMPLETED;
    },
  };
}
