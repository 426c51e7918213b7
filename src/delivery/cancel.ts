// Canceling one queued email: the API's cancel (resources/emails/manage.ts) and a purge of the
// delivery queue (resources/delivery-queue/service.ts) both come here. The email's delivery jobs
// go first (once they are gone no worker can claim them), never one a worker holds (delivery has
// started: too late), then the row moves to `canceled` with its email.canceled event, all in the
// caller's transaction.
import type { Executor } from '../platform/db/database.ts';
import { nowIso } from '../platform/clock.ts';
import { cancelByKey } from '../platform/jobs.ts';
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

/**
 * Cancels `email`, read in `email.status`, in the caller's transaction: its delivery jobs are
 * deleted, its status becomes canceled with `detail`, and email.canceled is emitted. Throws
 * CancelRefused (nothing of it to commit) when a worker holds a job or the status moved on.
 */
export async function cancelEmail(
  tx: Executor,
  email: Pick<EmailRow, 'id' | 'workspace_id' | 'status'>,
  detail: string,
): Promise<EmailRow> {
  // Delivery jobs are keyed by their email's id (intake.ts), whichever their type.
  for (const type of DELIVER_JOBS) {
    if ((await cancelByKey(tx, type, email.id)) === 'running') throw new CancelRefused('delivering');
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
