// Workspace credits: one per recipient of a send or forward, one per retry
// (https://emailit.com/docs/limits.md). The balance is `workspaces.credits`; spending is one
// conditional UPDATE, so concurrent spenders (any number of processes on PostgreSQL) can never take
// it below zero: each UPDATE locks the row and re-checks `credits >= n` against the latest
// committed value.
import type { Executor } from './db/database.ts';
import { preparedQuery } from './db/prepared.ts';
import { literal, writeHotRow } from './db/hot-rows.ts';
import { messageError, type ApiError } from './http/errors.ts';

/** The 402 `{error:'Insufficient credits', message}`, stating required and available. */
export function insufficientCreditsError(required: number, available: number): ApiError {
  return messageError(
    402,
    'Insufficient credits',
    `This request needs ${required} ${required === 1 ? 'credit' : 'credits'} but the workspace has ${available} available.`,
  );
}

const takeCredits = preparedQuery((db, p: { workspaceId: string; n: number }) =>
  db
    .updateTable('workspaces')
    .set((eb) => ({ credits: eb('credits', '-', p.n) }))
    .where('id', '=', p.workspaceId)
    .where('credits', '>=', p.n)
    .returning('credits'),
);

/**
 * Takes `n` credits in the caller's transaction and returns the balance left. When the
 * balance is short it throws the 402 and changes nothing (the caller's transaction then rolls
 * back whatever else it wrote).
 */
export async function spendCredits(tx: Executor, workspaceId: string, n: number): Promise<number> {
  checkAmount(n);
  const [row] = await takeCredits(tx, { workspaceId, n });
  if (row) return Number(row.credits);
  throw insufficientCreditsError(n, await getCredits(tx, workspaceId));
}

/**
 * Like spendCredits for a send's transaction: on PostgreSQL the conditional UPDATE goes out
 * with the COMMIT (hot-rows.ts), and a short balance makes the commit fail with the same 402.
 */
export async function spendCreditsAtCommit(tx: Executor, workspaceId: string, n: number): Promise<void> {
  checkAmount(n);
  const statement = (total: number) => `do $spend$ begin
    update workspaces set credits = credits - ${literal(total)} where id = ${literal(workspaceId)} and credits >= ${literal(total)};
    if not found then raise exception 'insufficient credits' using errcode = '${INSUFFICIENT_CREDITS_SQLSTATE}'; end if;
  end $spend$`;
  const refusal = async (db: Executor, total: number) => insufficientCreditsError(total, await getCredits(db, workspaceId));
  await writeHotRow(
    tx,
    { key: `1 credits ${workspaceId}`, amount: n, statement, refusalCode: INSUFFICIENT_CREDITS_SQLSTATE, refusal },
    async () => {
      await spendCredits(tx, workspaceId, n);
    },
  );
}
// Our own SQLSTATE for a refused spend, raised by the statement above.
const INSUFFICIENT_CREDITS_SQLSTATE = 'PL402';

/** Gives `n` credits back (e.g. a send that could not go out); returns the new balance. */
export async function refundCredits(tx: Executor, workspaceId: string, n: number): Promise<number> {
  checkAmount(n);
  const row = await tx
    .updateTable('workspaces')
    .set((eb) => ({ credits: eb('credits', '+', n) }))
    .where('id', '=', workspaceId)
    .returning('credits')
    .executeTakeFirst();
  if (!row) throw new Error(`no workspace with id ${workspaceId}`);
  return Number(row.credits);
}

/** The workspace's balance (0 for an unknown workspace). */
export async function getCredits(db: Executor, workspaceId: string): Promise<number> {
  const row = await db.selectFrom('workspaces').select('credits').where('id', '=', workspaceId).executeTakeFirst();
  return Number(row?.credits ?? 0);
}

function checkAmount(n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new TypeError(`a credit amount must be a whole number of at least 0, got ${n}`);
}
