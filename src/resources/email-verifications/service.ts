// Single-address verification (https://emailit.com/docs/api-reference/email-verifications.md): 5
// credits charged before the check (402 otherwise, nothing checked), the check, then the stored
// result and `email_verification.created`. The charge and the result are two transactions: a check
// takes seconds of network, and holding a write transaction open that long would stall every other
// writer on SQLite. A process that dies between them leaves the row `pending`, the status the
// object has for exactly that.
import type { Selectable } from 'kysely';
import type { Resolver } from 'node:dns/promises';
import type { Db, Executor } from '../../platform/db/database.ts';
import type { Config } from '../../config.ts';
import { spendCredits } from '../../platform/credits.ts';
import { emitEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { normalizeEmail } from '../../mail/address-checks.ts';
import { verifyAddress, type VerificationMode, type VerificationOutcome, type VerifierDeps } from './verifier.ts';
import type { EmailVerificationsTable } from './tables.ts';

/** Credits one verified address costs, single or in a list. */
export const CREDITS_PER_VERIFICATION = 5;

export type VerificationRow = Selectable<EmailVerificationsTable>;

type Details = Pick<VerificationOutcome, 'checks' | 'address' | 'did_you_mean' | 'mx_records' | 'mailbox_check'>;

/** The `email_verification` object of the API, list results and event payloads. */
export function verificationObject(row: VerificationRow) {
  const details = row.details ? (JSON.parse(row.details) as Details) : null;
  return {
    object: 'email_verification' as const,
    id: row.id,
    email: row.email,
    status: row.status,
    score: row.score,
    risk: row.risk,
    result: row.result,
    mode: row.mode,
    checks: details?.checks ?? null,
    address: details?.address ?? null,
    did_you_mean: details?.did_you_mean ?? null,
    mx_records: details?.mx_records ?? [],
    mailbox_check: details?.mailbox_check ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type EmailVerification = ReturnType<typeof verificationObject>;

/** The columns a finished verification writes. */
export function outcomeColumns(outcome: VerificationOutcome, updatedAt: string) {
  const details: Details = {
    checks: outcome.checks,
    address: outcome.address,
    did_you_mean: outcome.did_you_mean,
    mx_records: outcome.mx_records,
    mailbox_check: outcome.mailbox_check,
  };
  return {
    status: outcome.status,
    score: outcome.score,
    risk: outcome.risk,
    result: outcome.result,
    catch_all: outcome.checks.catch_all === null ? null : outcome.checks.catch_all ? 1 : 0,
    details: JSON.stringify(details),
    updated_at: updatedAt,
  };
}

export interface VerifyInput {
  email: string;
  mode?: VerificationMode;
}

export async function createVerification(
  db: Db,
  deps: { config: Config; resolver: Resolver },
  workspaceId: string,
  input: VerifyInput,
): Promise<EmailVerification> {
  const mode = input.mode ?? 'fast';
  const pending = pendingRow({ workspaceId, listId: null, position: null, email: normalizeEmail(input.email), mode, now: nowIso() });
  await db.transaction().execute(async (tx) => {
    await spendCredits(tx, workspaceId, CREDITS_PER_VERIFICATION);
    await tx.insertInto('email_verifications').values(pending).execute();
  });
  let outcome: VerificationOutcome;
  try {
    outcome = await verifyAddress(input.email, mode, deps satisfies VerifierDeps);
  } catch (error) {
    await db.updateTable('email_verifications').set({ status: 'failed', updated_at: nowIso() }).where('id', '=', pending.id).execute();
    throw error;
  }
  return db.transaction().execute(async (tx) => {
    const columns = outcomeColumns(outcome, nowIso());
    await tx.updateTable('email_verifications').set(columns).where('id', '=', pending.id).execute();
    const row = { ...pending, ...columns };
    const object = verificationObject(row);
    await emitEvent(tx, workspaceId, 'email_verification.created', object);
    return object;
  });
}

/** A verification row waiting for its check. */
export function pendingRow(p: {
  workspaceId: string;
  listId: string | null;
  position: number | null;
  email: string;
  mode: VerificationMode;
  now: string;
}): VerificationRow {
  return {
    id: newId('ev'),
    workspace_id: p.workspaceId,
    list_id: p.listId,
    position: p.position,
    email: p.email,
    mode: p.mode,
    status: 'pending',
    score: null,
    risk: null,
    result: null,
    catch_all: null,
    details: null,
    created_at: p.now,
    updated_at: p.now,
  };
}

/** Inserts many rows in statements of at most 500 (both engines' parameter limits). */
export async function insertVerificationRows(tx: Executor, rows: VerificationRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await tx
      .insertInto('email_verifications')
      .values(rows.slice(i, i + 500))
      .execute();
}
