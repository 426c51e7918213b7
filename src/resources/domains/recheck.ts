// The daily re-check (https://emailit.com/docs/domains/verification.md): every domain's records are
// checked again once a day, so a verified domain whose required record stops passing loses
// verified_at (and sends from it fail), and a pending one whose records appear verifies.
//
// A recurring job does it (src/platform/recurring-jobs.ts): one instance however many worker
// processes start; each run checks the domains that are due, and the next is due when the
// next domain is (at once while a full batch was due, at least hourly).
import { nowMs } from '../../platform/clock.ts';
import { recurringJob } from '../../platform/recurring-jobs.ts';
import { checkDomain, RETRY_INTERVAL_MS, type DomainDeps } from './verification.ts';

export const RECHECK_JOB = 'domains.recheck';
/** Domains checked per job run, and at once. */
export const BATCH_SIZE = 100;
const PARALLEL_CHECKS = 8;
/** The job wakes at least this often to pick up what became due. */
const MAX_SLEEP_MS = 60 * 60 * 1000;

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
        await deps.db
          .updateTable('domains')
          .set({ next_check_at: Math.floor(nowMs() + RETRY_INTERVAL_MS) })
          .where('id', '=', id)
          .execute();
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_CHECKS }, worker));
  return due.length;
}

/** Checks what is due; the next run is due when the next domain is. */
export async function runRecheck(deps: DomainDeps): Promise<{ nextRunAt: number }> {
  const checked = await recheckDueDomains(deps);
  const next = await deps.db.selectFrom('domains').select('next_check_at').orderBy('next_check_at').limit(1).executeTakeFirst();
  const now = nowMs();
  const runAt = checked >= BATCH_SIZE ? now : Math.min(next ? Number(next.next_check_at) : Infinity, now + MAX_SLEEP_MS);
  return { nextRunAt: Math.max(runAt, now) };
}

export const recheckJob = (deps: DomainDeps) => recurringJob({ name: RECHECK_JOB, every: MAX_SLEEP_MS, run: () => runRecheck(deps) });
