// The delivery jobs the intake enqueues and the delivery engine runs (resources/emails/resource.ts).
import { JOB_LEASE_MS } from '../platform/jobs.ts';

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
