// Content retention (CONTENT_RETENTION_DAYS, default 30): a daily job purges stored message
// content older than that. The email rows stay; the content row keeps only the addresses and
// subject (bodies, headers, attachments and raw MIME are dropped) and gets `purged_at`, after
// which reads show the content as null and retry and forward answer 422.
//
// The work is a recurring job (src/platform/recurring-jobs.ts): one instance however many
// processes start, run daily, and again at once while a run's time budget left content due.
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';
import { recurringJob } from '../../platform/recurring-jobs.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import type { StoredMessage } from './content.ts';

export const PURGE_JOB = 'emails.purge-content';
const DAY_MS = 86_400_000;
/** Statuses whose content delivery still needs: never purged, however old. */
const PENDING_STATUSES = ['accepted', 'scheduled', 'attempted'];
/** Rows read per query (each may hold a message of up to 40 MB). */
const BATCH_SIZE = 20;
/** A run stops after this long and lets its successor continue at once. */
const RUN_BUDGET_MS = 5 * 60 * 1000;

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
export async function purgeExpiredContent(
  db: Db,
  retentionDays: number,
  now: number = nowMs(),
  budgetMs = RUN_BUDGET_MS,
): Promise<PurgeResult> {
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
        not(
          exists(selectFrom('emails as e').select('e.id').whereRef('e.content_id', '=', 'c.id').where('e.status', 'in', PENDING_STATUSES)),
        ),
      )
      .orderBy('c.created_at')
      .limit(BATCH_SIZE)
      .execute();
    for (const { id } of due) {
      const row = await db
        .selectFrom('email_contents')
        .select('message')
        .where('id', '=', id)
        .where('purged_at', 'is', null)
        .executeTakeFirst();
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

/** The recurring purge: what is due now, then again in a day (at once if the budget ran out). */
export function purgeJob(ctx: AppContext) {
  return recurringJob({
    name: PURGE_JOB,
    every: DAY_MS,
    async run() {
      const result = await purgeExpiredContent(ctx.db, ctx.config.contentRetentionDays);
      if (result.purged > 0) ctx.log.info({ purged: result.purged }, 'purged stored email content past its retention period');
      if (result.more) return { nextRunAt: nowMs() };
    },
  });
}
