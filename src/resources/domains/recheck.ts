// The daily re-check (https://emailit.com/docs/domains/verification.md): every domain's records are
// checked again once a day, so a verified domain whose required record stops passing loses
// verified_at (and sends from it fail), and a pending one whose records appear verifies.
//
// One durable job chain does it: a `domains.recheck` job checks the domains that are due,
// then enqueues its successor. The `domain_recheck_chain` row names the chain's current job;
// the successor replaces it with a compare-and-set in the same transaction that enqueues
// it. So however many worker processes start (each calls ensureRecheckChain) and however
// often a job is re-run after a crash, exactly one pending chain job exists.
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { enqueueJob, type Job } from '../../platform/jobs.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { checkDomain, RETRY_INTERVAL_MS, type DomainDeps } from './verification.ts';

export const RECHECK_JOB = 'domains.recheck';
const CHAIN = 'daily';
/** Domains checked per job run, and at once. */
export const BATCH_SIZE = 100;
const PARALLEL_CHECKS = 8;
/** The chain wakes at least this often to pick up what became due. */
const MAX_SLEEP_MS = 60 * 60 * 1000;
const CHAIN_ATTEMPTS = 1_000_000;

class LostRace extends Error {}

/** Starts the chain unless one is alive. Safe to call from every process at every start. */
export async function ensureRecheckChain(db: Db): Promise<void> {
  const chain = await db.selectFrom('domain_recheck_chain').select('job_id').where('name', '=', CHAIN).executeTakeFirst();
  try {
    if (!chain) {
      await db.transaction().execute(async (tx) => {
        const jobId = await enqueueJob(tx, RECHECK_JOB, {}, { maxAttempts: CHAIN_ATTEMPTS });
        await tx.insertInto('domain_recheck_chain').values({ name: CHAIN, job_id: jobId, updated_at: nowIso() }).execute();
      });
      return;
    }
    const job = await db.selectFrom('jobs').select(['id', 'dead_at']).where('id', '=', chain.job_id).executeTakeFirst();
    if (job && job.dead_at === null) return;
    // The chain's job is gone or dead (an operator removed it, or it failed for good): restart it.
    await db.transaction().execute(async (tx) => {
      const jobId = await enqueueJob(tx, RECHECK_JOB, {}, { maxAttempts: CHAIN_ATTEMPTS });
      await swap(tx, chain.job_id, jobId);
    });
  } catch (error) {
    // Another process started or restarted the chain first: its job is the one.
    if (error instanceof LostRace || isUniqueViolation(error)) return;
    throw error;
  }
}

async function swap(tx: Executor, from: number, to: number): Promise<void> {
  const result = await tx
    .updateTable('domain_recheck_chain')
    .set({ job_id: to, updated_at: nowIso() })
    .where('name', '=', CHAIN)
    .where('job_id', '=', from)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw new LostRace();
}

/** Checks up to BATCH_SIZE due domains; returns how many were due. */
export async function recheckDueDomains(deps: DomainDeps): Promise<number> {
  const due = await deps.db
    .selectFrom('domains')
    .select('id')
    .where('next_check_at', '<=', Math.floor(nowMs()))
    .orderBy('next_check_at')
    .limit(BATCH_SIZE)
    .execute();
  const queue = due.map((row) => row.id);
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      try {
        await checkDomain(deps, id);
      } catch (error) {
        // One broken domain must not stall the others: try it again later.
        deps.log?.error({ err: error, domainId: id }, 'daily domain check failed');
        await deps.db.updateTable('domains').set({ next_check_at: Math.floor(nowMs() + RETRY_INTERVAL_MS) }).where('id', '=', id).execute();
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_CHECKS }, worker));
  return due.length;
}

/** The chain job: check what is due, then hand over to the next run (once, even if re-run). */
export async function runRecheckJob(deps: DomainDeps, job: Job): Promise<void> {
  const chain = await deps.db.selectFrom('domain_recheck_chain').select('job_id').where('name', '=', CHAIN).executeTakeFirst();
  if (!chain || Number(chain.job_id) !== job.id) return; // a stray or already handed-over run
  const checked = await recheckDueDomains(deps);
  const next = await deps.db.selectFrom('domains').select('next_check_at').orderBy('next_check_at').limit(1).executeTakeFirst();
  const now = nowMs();
  const runAt = checked >= BATCH_SIZE ? now : Math.min(next ? Number(next.next_check_at) : Infinity, now + MAX_SLEEP_MS);
  try {
    await deps.db.transaction().execute(async (tx) => {
      const jobId = await enqueueJob(tx, RECHECK_JOB, {}, { runAt: Math.max(runAt, now), maxAttempts: CHAIN_ATTEMPTS });
      await swap(tx, job.id, jobId);
    });
  } catch (error) {
    if (!(error instanceof LostRace)) throw error;
  }
}
