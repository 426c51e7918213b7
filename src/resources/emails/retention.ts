// Content retention (CONTENT_RETENTION_DAYS, default 30): a daily job purges stored message
// content older than that. The email rows stay; the content row keeps only the addresses and
// subject (bodies, headers, attachments and raw MIME are dropped) and gets `purged_at`, after
// which reads show the content as null and retry and forward answer 422.
//
// One durable chain of `emails.purge-content` jobs does the work: each run purges, then
// enqueues its successor unless another live chain job exists. Starting the chain and handing
// over both run under one lock (a transaction-scoped advisory lock on PostgreSQL; SQLite
// transactions are serialized already), so however many processes start, one chain exists.
import { sql } from 'kysely';
import type { AppContext } from '../../platform/context.ts';
import { dialectOf, type Db, type Executor } from '../../platform/db/database.ts';
import { enqueueJob, type Job } from '../../platform/jobs.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import type { StoredMessage } from './content.ts';

export const PURGE_JOB = 'emails.purge-content';
const DAY_MS = 86_400_000;
const CHAIN_ATTEMPTS = 1_000_000;
/** Arbitrary constant naming the chain's advisory lock on PostgreSQL. */
const CHAIN_LOCK = 7_301_522_041;
/** Statuses whose content delivery still needs: never purged, however old. */
const PENDING_STATUSES = ['accepted', 'scheduled', 'attempted'];
/** Rows read per query (each may hold a message of up to 40 MB). */
const BATCH_SIZE = 20;
/** A run stops after this long and lets its successor continue at once. */
const RUN_BUDGET_MS = 5 * 60 * 1000;

async function lockChain(tx: Executor): Promise<void> {
  if (dialectOf(tx) === 'postgres') await sql`select pg_advisory_xact_lock(${CHAIN_LOCK})`.execute(tx);
}

function liveChainJobs(tx: Executor, exceptId?: number) {
  let query = tx.selectFrom('jobs').select('id').where('type', '=', PURGE_JOB).where('dead_at', 'is', null);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  return query.execute();
}

/** Starts the chain unless a live one exists. Safe from every process at every start. */
export async function ensurePurgeChain(db: Db, runAt: number = nowMs()): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await lockChain(tx);
    if ((await liveChainJobs(tx)).length === 0) await enqueueJob(tx, PURGE_JOB, {}, { runAt, maxAttempts: CHAIN_ATTEMPTS });
  });
}

/** What a purged content row keeps: who it was from and to, and the subject. */
export function purgedStub(message: StoredMessage): StoredMessage {
  return {
    from: message.from,
    to: message.to,
    cc: message.cc,
    bcc: message.bcc,
    reply_to: message.reply_to,
    subject: message.subject,
    html: null,
    text: null,
    headers: {},
    attachments: [],
  };
}

export interface PurgeResult {
  purged: number;
  /** True when the time budget ran out with content still due. */
  more: boolean;
}

/** Purges content created more than `retentionDays` ago whose emails no longer need it. */
export async function purgeExpiredContent(db: Db, retentionDays: number, now: number = nowMs(), budgetMs = RUN_BUDGET_MS): Promise<PurgeResult> {
  const cutoff = isoFromMs(now - retentionDays * DAY_MS);
  const started = nowMs();
  let purged = 0;
  for (;;) {
    const due = await db
      .selectFrom('email_contents as c')
      .select('c.id')
      .where('c.purged_at', 'is', null)
      .where('c.created_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('emails as e').select('e.id').whereRef('e.content_id', '=', 'c.id').where('e.status', 'in', PENDING_STATUSES))),
      )
      .orderBy('c.created_at')
      .limit(BATCH_SIZE)
      .execute();
    for (const { id } of due) {
      const row = await db.selectFrom('email_contents').select('message').where('id', '=', id).where('purged_at', 'is', null).executeTakeFirst();
      if (!row) continue; // another run got there first
      const result = await db
        .updateTable('email_contents')
        .set({ message: JSON.stringify(purgedStub(JSON.parse(row.message) as StoredMessage)), raw: null, purged_at: nowIso() })
        .where('id', '=', id)
        .where('purged_at', 'is', null)
        .executeTakeFirst();
      purged += Number(result.numUpdatedRows);
    }
    if (due.length < BATCH_SIZE) return { purged, more: false };
    if (nowMs() - started > budgetMs) return { purged, more: true };
  }
}

/** The chain job: purge what is due, then hand over to the next run (once, even if re-run). */
export async function runPurgeJob(ctx: AppContext, job: Job): Promise<void> {
  const result = await purgeExpiredContent(ctx.db, ctx.config.contentRetentionDays);
  if (result.purged > 0) ctx.log.info({ purged: result.purged }, 'purged stored email content past its retention period');
  const runAt = result.more ? nowMs() : nowMs() + DAY_MS;
  await ctx.db.transaction().execute(async (tx) => {
    await lockChain(tx);
    if ((await liveChainJobs(tx, job.id)).length === 0) await enqueueJob(tx, PURGE_JOB, {}, { runAt, maxAttempts: CHAIN_ATTEMPTS });
  });
}
