// The delivery jobs the intake enqueues and the delivery engine runs (resources/emails/resource.ts).
import type { Executor } from '../platform/db/database.ts';
import { JOB_LEASE_MS, rescheduleByKey } from '../platform/jobs.ts';

export const DELIVER_JOB = 'email.deliver';
/** Deliveries of campaign mail: their own job type and worker share, so a large campaign never
 *  queues ahead of transactional mail (docs/architecture.md). Same handler as DELIVER_JOB. */
export const CAMPAIGN_DELIVER_JOB = 'email.deliver.campaign';
export const DELIVER_JOBS = [DELIVER_JOB, CAMPAIGN_DELIVER_JOB];
/** Lease of a deliver job, renewed by the job runner while its SMTP exchange lasts: a dead
 *  worker's deliveries resume within this time. Here, beside the job names, so that what waits
 *  as long as a delivery (owner notices) reads it without loading the delivery engine. */
export const DELIVER_LEASE_MS = JOB_LEASE_MS;
/** A delivery is retried until it succeeds or its email's retry window ends, never by count. */
export const DELIVER_MAX_ATTEMPTS = 1_000_000;

/** A deliver job's payload; its traceparent (tracing on) makes the job's span a child of the acceptance. */
export function deliverPayload(email: { id: string; traceparent: string | null }): { email_id: string; traceparent?: string } {
  return email.traceparent ? { email_id: email.id, traceparent: email.traceparent } : { email_id: email.id };
}

/** Moves an email's delivery job, of whichever type, to `runAt` (it is keyed by the email's id):
 *  never one a worker holds ('running'); 'absent' when the email has none. */
export async function rescheduleDelivery(tx: Executor, emailId: string, runAt: number): Promise<'rescheduled' | 'running' | 'absent'> {
  for (const type of DELIVER_JOBS) {
    const moved = await rescheduleByKey(tx, type, emailId, runAt);
    if (moved !== 'absent') return moved;
  }
  return 'absent';
}
