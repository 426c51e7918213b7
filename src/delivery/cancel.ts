// Canceling one queued email: the API's cancel (resources/emails/manage.ts) and a purge of the
// delivery queue (resources/delivery-queue/service.ts) both come here. The email's delivery jobs
// go first (once they are gone no worker can claim them), never one a worker holds (delivery has
// started: too late), then the row moves to `canceled` with its email.canceled event, all in the
// caller's transaction.
import type { Executor } from '../platform/db/database.ts';
import { nowIso, nowMs } from '../platform/clock.ts';
import { emitEvent } from '../platform/events.ts';
import { emailEventObject } from './email-object.ts';
import { DELIVER_JOBS } from './jobs.ts';
import type { EmailRow } from './tables.ts';

/** Thrown inside the caller's transaction, which it rolls back: `delivering`, a worker holds a
 *  delivery job of the email; `changed`, the email left the status it was read in. */
export class CancelRefused extends Error {
  readonly reason: 'delivering' | 'changed';
  constructor(reason: 'delivering' | 'changed') {
    super(reason === 'delivering' ? 'Delivery of this email has already started' : 'The email changed while it was being canceled');
    this.reason = reason;
  }
}

/** The email's live (not dead) delivery jobs, of either type, with or without a traceparent. */
export async function deliveryJobsOf(tx: Executor, emailId: string): Promise<Array<{ id: number; locked_until: number | null }>> {
  const payload = JSON.stringify({ email_id: emailId });
  const jobs = await tx
    .selectFrom('jobs')
    .select(['id', 'locked_until', 'payload'])
    .where('type', 'in', DELIVER_JOBS)
    .where((eb) => eb.or([eb('payload', '=', payload), eb('payload', 'like', `${payload.slice(0, -1)},%`)]))
    .where('dead_at', 'is', null)
    .execute();
  // LIKE is loose (case, `_`): the payload's own email id decides.
  return jobs
    .filter((job) => (JSON.parse(job.payload) as { email_id?: string }).email_id === emailId)
    .map((job) => ({ id: Number(job.id), locked_until: job.locked_until === null ? null : Number(job.locked_until) }));
}

/**
 * Cancels `email`, read in `email.status`, in the caller's transaction: its delivery jobs are
 * deleted, its status becomes canceled with `detail`, and email.canceled is emitted. Throws
 * CancelRefused (nothing of it to commit) when a worker holds a job or the status moved on.
 */
export async function cancelEmail(tx: Executor, email: Pick<EmailRow, 'id' | 'workspace_id' | 'status'>, detail: string): Promise<EmailRow> {
  const now = Math.floor(nowMs());
  for (const job of await deliveryJobsOf(tx, email.id)) {
    const removed = await tx
      .deleteFrom('jobs')
      .where('id', '=', job.id)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new CancelRefused('delivering');
  }
  const changed = await tx
    .updateTable('emails')
    .set({ status: 'canceled', status_detail: detail, updated_at: nowIso() })
    .where('id', '=', email.id)
    .where('status', '=', email.status)
    .returningAll()
    .executeTakeFirst();
  if (!changed) throw new CancelRefused('changed');
  await emitEvent(tx, email.workspace_id, 'email.canceled', emailEventObject(changed, 'email.canceled'));
  return changed;
}
