// Rescheduling and canceling (https://emailit.com/docs/email-api/scheduling.md). Both refuse a
// scheduled email inside the last 3 minutes before it is due; a new time must itself be at least 3
// minutes away. The email row and its pending delivery job change in one transaction, and
// the job is never touched while a worker holds its lease (delivery has started: too late to
// cancel). Canceling itself is src/delivery/cancel.ts, shared with purges of the delivery queue.
import type { AppContext } from '../../platform/context.ts';
import { messageError } from '../../platform/http/errors.ts';
import { nowIso, nowMs, isoFromDate } from '../../platform/clock.ts';
import { enqueueDeliveries } from '../../delivery/intake.ts';
import { cancelEmail as cancelQueuedEmail, CancelRefused } from '../../delivery/cancel.ts';
import { rescheduleDelivery } from '../../delivery/jobs.ts';
import type { EmailRow } from './objects.ts';
import { emailMetadata, findEmail } from './retrieved.ts';
import { parseScheduledAt } from './scheduling.ts';

/** How close to its time a scheduled email can still be moved or canceled. */
export const SCHEDULE_CHANGE_MARGIN_MS = 3 * 60 * 1000;
export const CANCELABLE_STATUSES = ['scheduled', 'accepted', 'attempted'];

const cannotReschedule = (message: string) => messageError(422, 'Cannot reschedule email', message);
const cannotCancel = (message: string) => messageError(422, 'Cannot cancel email', message);

function dueTooSoon(row: EmailRow, now: number): boolean {
  return row.scheduled_at !== null && Date.parse(row.scheduled_at) - now < SCHEDULE_CHANGE_MARGIN_MS;
}

/** Thrown inside a transaction when the row changed under us; rolls everything back. */
class Changed extends Error {}

export async function rescheduleEmail(ctx: AppContext, workspaceId: string, id: string, value: unknown) {
  const row = await findEmail(ctx.db, workspaceId, id);
  const now = nowMs();
  if (row.status !== 'scheduled') {
    throw cannotReschedule(`Only scheduled emails can be rescheduled; this email is ${row.status}.`);
  }
  if (dueTooSoon(row, now)) {
    throw cannotReschedule('This email is due in less than 3 minutes; it can no longer be rescheduled.');
  }
  const at = parseScheduledAt(value, new Date(now));
  if (!at || at.getTime() - now < SCHEDULE_CHANGE_MARGIN_MS) {
    throw cannotReschedule(
      'scheduled_at must be at least 3 minutes in the future: an ISO 8601 date-time with a time zone, or English such as "tomorrow at 9am" (UTC).',
    );
  }
  const scheduledAt = isoFromDate(at);
  try {
    const updated = await ctx.db.transaction().execute(async (tx) => {
      const changed = await tx
        .updateTable('emails')
        .set({ scheduled_at: scheduledAt, updated_at: nowIso() })
        .where('id', '=', row.id)
        .where('status', '=', 'scheduled')
        .where('scheduled_at', '=', row.scheduled_at)
        .returningAll()
        .executeTakeFirst();
      if (!changed) throw new Changed();
      // The deliver job is keyed by the email's id (src/delivery/intake.ts).
      const moved = await rescheduleDelivery(tx, row.id, at.getTime());
      if (moved === 'running') throw new Changed();
      // Should not happen (accept enqueues one); a scheduled email without a job would never go.
      if (moved === 'absent') await enqueueDeliveries(tx, [changed], undefined, at.getTime());
      return changed;
    });
    return { ...emailMetadata(updated), message: `Email rescheduled to ${scheduledAt}.` };
  } catch (error) {
    if (error instanceof Changed) throw cannotReschedule('The email changed while it was being rescheduled; read it again and retry.');
    throw error;
  }
}

export async function cancelEmail(ctx: AppContext, workspaceId: string, id: string) {
  const row = await findEmail(ctx.db, workspaceId, id);
  const now = nowMs();
  if (!CANCELABLE_STATUSES.includes(row.status)) {
    throw cannotCancel(
      `Only scheduled, accepted or attempted emails that are not yet delivered can be canceled; this email is ${row.status}.`,
    );
  }
  if (row.status === 'scheduled' && dueTooSoon(row, now)) {
    throw cannotCancel('This email is due in less than 3 minutes; it can no longer be canceled.');
  }
  try {
    const canceled = await ctx.db.transaction().execute((tx) => cancelQueuedEmail(tx, row, 'Canceled by request'));
    return { ...emailMetadata(canceled), message: 'Email canceled.' };
  } catch (error) {
    if (error instanceof CancelRefused && error.reason === 'delivering') {
      throw cannotCancel('Delivery of this email has already started; it can no longer be canceled.');
    }
    if (error instanceof CancelRefused) {
      const current = await findEmail(ctx.db, workspaceId, id);
      throw cannotCancel(`The email's status changed to ${current.status} while it was being canceled.`);
    }
    throw error;
  }
}
