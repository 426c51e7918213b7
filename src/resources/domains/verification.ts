// Running a domain's DNS check and saving its outcome: on POST /domains/{id}/verify, in the
// daily re-check, and after a manual approval. The decision itself (applyCheck) is pure.
//
// Verification: `verified` (verified_at = this check) when SPF, DKIM and the return path are
// all `ok` and no review holds the domain; a required record found missing or wrong clears
// verified_at; a lookup that failed (timeout) leaves verification as it was, so a flaky DNS
// server neither verifies nor un-verifies anything.
//
// Review (Pay as you go): a domain registered under 30 days ago (RDAP) waits in
// `pending_review` until the operator approves it (`postlane domain approve`). A new Pay as
// you go domain shows `pending_review` until its first check decides; when RDAP cannot be
// reached the decision waits for the next check.
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { dialectOf } from '../../platform/db/database.ts';
import { createResolver } from '../../platform/dns.ts';
import { emitEvent } from '../../platform/events.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import { getWorkspace } from '../workspaces/service.ts';
import { checkRecords, type CheckResults } from './checks.ts';
import { RECORD_KEYS, REQUIRED_RECORDS } from './dns-records.ts';
import { updatedEventObject, type DomainRow } from './objects.ts';
import { lookupRegistration } from './rdap.ts';
import type { DomainsTable, RecordStatus, VerificationStatus } from './tables.ts';

export const CHECK_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** A check whose required lookups failed is repeated sooner than the daily one. */
export const RETRY_INTERVAL_MS = 60 * 60 * 1000;
export const REVIEW_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface DomainDeps {
  db: Db;
  config: Config;
  log?: Pick<Logger, 'warn' | 'info' | 'error'>;
}

export type ReviewDecision = 'not_needed' | 'required' | 'undecided';

type Changes = Partial<DomainsTable>;

/** The columns a check writes, from the current row, the record results and the review decision. */
export function applyCheck(current: DomainRow, results: CheckResults, review: ReviewDecision, atMs: number): Changes {
  const at = isoFromMs(atMs);
  const changes: Changes = { dns_checked_at: at };
  for (const key of RECORD_KEYS) {
    const result = results[key];
    let status: RecordStatus;
    if (result.outcome !== 'unknown') status = result.outcome;
    else if (key === 'dmarc') status = 'error';
    else status = current[`${key}_status`] === 'error' ? 'pending' : current[`${key}_status`]; // keep the last known result
    changes[`${key}_status`] = status;
    changes[`${key}_error`] = result.error;
  }
  const required = REQUIRED_RECORDS.map((key) => results[key].outcome);
  const allOk = required.every((outcome) => outcome === 'ok');
  const anyFailed = required.some((outcome) => outcome === 'missing' || outcome === 'invalid');
  // Review is decided per check: a workspace that leaves Pay as you go no longer needs it.
  const manual = review === 'required' && current.manually_verified_at === null ? 1 : 0;
  const held = manual === 1 || review === 'undecided';
  const verifiedAt = held || anyFailed ? null : allOk ? at : current.verified_at;
  const status: VerificationStatus = held ? 'pending_review' : verifiedAt ? 'verified' : 'pending';
  changes.verified_at = verifiedAt;
  changes.manual_review_required = manual;
  changes.verification_status = status;
  changes.next_check_at = Math.floor(atMs + (required.includes('unknown') ? RETRY_INTERVAL_MS : CHECK_INTERVAL_MS));
  return changes;
}

const STATE_COLUMNS = [
  'verification_status',
  'manual_review_required',
  'manually_verified_at',
  ...RECORD_KEYS.flatMap((key) => [`${key}_status`, `${key}_error`] as const),
] as const;

/** Whether a check changed anything a user or webhook cares about (not just the check times). */
export function stateChanged(before: DomainRow, after: DomainRow): boolean {
  return STATE_COLUMNS.some((column) => before[column] !== after[column]) || (before.verified_at === null) !== (after.verified_at === null);
}

export async function lockDomain(tx: Executor, domainId: string): Promise<DomainRow | undefined> {
  const query = tx.selectFrom('domains').selectAll().where('id', '=', domainId);
  return (dialectOf(tx) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

export function domainResolver(config: Config) {
  return createResolver(config.dnsServers, { timeoutMs: config.dnsTimeoutMs, tries: 2 });
}

/** The Pay-as-you-go age rule for this check, and the registration date when newly learnt. */
export async function reviewDecision(deps: DomainDeps, row: DomainRow): Promise<{ decision: ReviewDecision; registeredAt?: string }> {
  const { config } = deps;
  if (row.manually_verified_at !== null) return { decision: 'not_needed' };
  const workspace = await getWorkspace(deps.db, row.workspace_id);
  if (workspace?.plan !== 'payg') return { decision: 'not_needed' };
  if (row.manual_review_required === 1) return { decision: 'required' };
  if (!config.rdapUrl || row.verified_at !== null) return { decision: 'not_needed' };
  let registeredAt = row.registered_at ?? undefined;
  if (!registeredAt) {
    const result = await lookupRegistration(config.rdapUrl, row.name, {
      resolver: config.dnsServers.length > 0 ? domainResolver(config) : null,
      timeoutMs: 5000,
    });
    if (result.kind === 'failed') {
      deps.log?.warn({ domain: row.name, reason: result.reason }, 'RDAP lookup failed; the review decision waits for the next check');
      return { decision: 'undecided' };
    }
    if (result.kind === 'unknown') {
      deps.log?.info({ domain: row.name, reason: result.reason }, 'no registration date from RDAP; the age rule does not apply');
      return { decision: 'not_needed' };
    }
    registeredAt = result.registeredAt;
  }
  const young = nowMs() - Date.parse(registeredAt) < REVIEW_AGE_MS;
  return { decision: young ? 'required' : 'not_needed', registeredAt };
}

/**
 * Checks a domain's records now and saves the outcome (emitting `domain.updated` when the
 * state changed). Returns the saved row, or null when the domain no longer exists.
 * Network work happens before the transaction; the row is re-read and locked to write.
 */
export async function checkDomain(deps: DomainDeps, domainId: string): Promise<DomainRow | null> {
  const row = await deps.db.selectFrom('domains').selectAll().where('id', '=', domainId).executeTakeFirst();
  if (!row) return null;
  const [results, review] = await Promise.all([checkRecords(domainResolver(deps.config), row, deps.config), reviewDecision(deps, row)]);
  return deps.db.transaction().execute(async (tx) => {
    const current = await lockDomain(tx, domainId);
    if (!current) return null;
    const changes = applyCheck(current, results, review.decision, nowMs());
    if (review.registeredAt && current.registered_at === null) changes.registered_at = review.registeredAt;
    let next: DomainRow = { ...current, ...changes };
    const changed = stateChanged(current, next);
    if (changed) next = { ...next, updated_at: nowIso() };
    await tx
      .updateTable('domains')
      .set({ ...changes, updated_at: next.updated_at })
      .where('id', '=', domainId)
      .execute();
    if (changed) await emitEvent(tx, current.workspace_id, 'domain.updated', updatedEventObject(next, deps.config));
    return next;
  });
}
