// The one intake into `emails`: every email, whoever makes it (the API and the SMTP relay through
// resources/emails/accept.ts, forwards, retries, automations, the campaign fan-out, the inbound
// MX), is created here, in the caller's transaction, with its stored content, its first event and
// its delivery job. So the 30-column row, its first status, which event it emits and which job
// delivers it are decided in one place; the callers decide who may send what (domains, limits,
// suppressions, credits) and pass the answers in as data.
//
// A batch of any size costs a few statements: one multi-row insert per 400 emails, one for their
// jobs, and their events in one call (on PostgreSQL one statement with all their reactions). A
// single email on PostgreSQL may ride entirely in its events' statement (`pipelined`).
import { dialectOf, type Executor } from '../platform/db/database.ts';
import { preparedQuery } from '../platform/db/prepared.ts';
import { emitEvents, type EventToEmit } from '../platform/events.ts';
import { emailToken, newId } from '../platform/ids.ts';
import { isoFromDate, nowIso, nowMs } from '../platform/clock.ts';
import { enqueueJob, enqueueJobs, jobInsertPart } from '../platform/jobs.ts';
import { emailEventObject } from './email-object.ts';
import { CAMPAIGN_DELIVER_JOB, DELIVER_JOB, DELIVER_MAX_ATTEMPTS, deliverPayload } from './jobs.ts';
import type { EmailRow } from './tables.ts';

export type EmailSource = 'api' | 'smtp' | 'forward' | 'retry' | 'campaign' | 'inbound';

export interface NewRecipient {
  to: string;
  kind: 'to' | 'cc' | 'bcc';
  /** This copy's subject when it differs from the batch's (a campaign's personalised subject). */
  subject?: string;
  /** On the workspace's suppression list: recorded as `suppressed`, never delivered. */
  suppressed?: boolean;
  /** This copy's domain when it differs from the batch's (inbound: the domain it was received for). */
  sendingDomainId?: string;
}

/** What the emails of one batch share, and their recipients. */
export interface NewEmails {
  workspaceId: string;
  /** `inbound`: received mail (status received, no delivery); any other: outbound mail. */
  source: EmailSource;
  contentId: string;
  /** The content row to store with the emails; absent when it exists already (a campaign's). */
  content?: { message: string; raw: string | null; size: number };
  /** The From header as sent (display name included), and its address. */
  from: string;
  fromAddress: string;
  subject: string;
  sendingDomainId: string | null;
  /** Host of each email's own Message-ID `<token@host>`: the sending domain (inbound: our host name). */
  messageIdHost: string;
  /** Inbound: the received message's own Message-ID, kept for every copy. */
  messageId?: string | null;
  size: number;
  /** JSON object of strings, or null. */
  meta: string | null;
  tracking?: { loads: boolean; clicks: boolean };
  apiKeyId?: string | null;
  originalId?: string | null;
  /** When to deliver (status scheduled); null: now. */
  scheduledAt?: Date | null;
  traceparent?: string | null;
  recipients: NewRecipient[];
}

export interface Created {
  rows: EmailRow[];
  /** Tells the delivery workers of the new jobs; call it after the commit (pipelined ones are
   *  written with it, and a worker told earlier would find nothing). */
  committed(): void;
}

export const SUPPRESSED_DETAIL = 'The recipient is on the suppression list';
/** 30 columns a row: 12,000 parameters, under every engine's limit per statement. */
const EMAIL_INSERT_CHUNK = 400;

const insertContent = preparedQuery(
  (db, p: { id: string; workspaceId: string; message: string; raw: string | null; size: number; createdAt: string }) =>
    db.insertInto('email_contents').values({
      id: p.id,
      workspace_id: p.workspaceId,
      message: p.message,
      raw: p.raw,
      size: p.size,
      created_at: p.createdAt,
      purged_at: null,
    }),
);
// Every column of a row bound by name: the single-email insert compiled once.
const EMAIL_COLUMNS = [
  'id',
  'workspace_id',
  'type',
  'source',
  'token',
  'message_id',
  'content_id',
  'from',
  'from_address',
  'to',
  'recipient_kind',
  'subject',
  'status',
  'scheduled_at',
  'api_key_id',
  'sending_domain_id',
  'tag',
  'spam_score',
  'size',
  'meta',
  'track_loads',
  'track_clicks',
  'original_id',
  'status_detail',
  'delivered_at',
  'bounce_reason',
  'bounce_type',
  'traceparent',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof EmailRow>;
// Fails to compile when a column is added to the table but not to the list above.
const everyColumnListed: Exclude<keyof EmailRow, (typeof EMAIL_COLUMNS)[number]> extends never ? true : never = true;
void everyColumnListed;
const insertEmail = preparedQuery((db, p: EmailRow) =>
  db.insertInto('emails').values(Object.fromEntries(EMAIL_COLUMNS.map((column) => [column, p[column]])) as EmailRow),
);

const nothingToTell = () => {};

/**
 * Creates a batch of emails in the caller's transaction: their content (when given), one row per
 * recipient, their events (`email.<status>`; SMTP sends and retries emit no email.accepted) and
 * one delivery job per email that is to be delivered (campaign mail on its own job type).
 * `pipelined` (PostgreSQL, one email): all of it goes out with the transaction's next query;
 * for a caller that reads nothing back before its commit (resources/emails/accept.ts).
 */
export async function createEmails(tx: Executor, batch: NewEmails, options: { pipelined?: boolean } = {}): Promise<Created> {
  const rows = emailRows(batch);
  if (rows.length === 0) return { rows, committed: nothingToTell };
  const deliverable = rows.filter((row) => row.status === 'accepted' || row.status === 'scheduled');
  const jobType = batch.source === 'campaign' ? CAMPAIGN_DELIVER_JOB : DELIVER_JOB;
  const jobOptions = { runAt: batch.scheduledAt ? batch.scheduledAt.getTime() : nowMs(), maxAttempts: DELIVER_MAX_ATTEMPTS };
  // SMTP sends and retries do not emit email.accepted.
  const quietAccept = batch.source === 'smtp' || batch.source === 'retry';
  const events: EventToEmit[] = [];
  for (const row of rows) {
    const type = `email.${row.status}`;
    if (!(quietAccept && type === 'email.accepted'))
      events.push({ workspaceId: row.workspace_id, type, object: emailEventObject(row, type) });
  }
  const content = batch.content
    ? {
        id: batch.contentId,
        workspaceId: batch.workspaceId,
        message: batch.content.message,
        raw: batch.content.raw,
        size: batch.content.size,
        createdAt: rows[0].created_at,
      }
    : null;

  if (options.pipelined && rows.length === 1 && dialectOf(tx) === 'postgres') {
    // The content, email and job rows ride in the events' statement, and that statement goes
    // out with the transaction's next query (the COMMIT, when the send runs alone): nothing
    // after needs its answer, and a failure still fails the transaction before it commits.
    const jobs = deliverable.map((row) => jobInsertPart(tx, jobType, deliverPayload(row), { ...jobOptions, key: row.id }));
    const parts = [...(content ? [insertContent.part(tx, content)] : []), insertEmail.part(tx, rows[0]), ...jobs.map((job) => job.part)];
    await emitEvents(tx, events, parts, { pipelined: true });
    return { rows, committed: () => jobs.forEach((job) => job.enqueued()) };
  }
  if (content) await insertContent(tx, content);
  if (rows.length === 1) await insertEmail(tx, rows[0]);
  else
    for (let i = 0; i < rows.length; i += EMAIL_INSERT_CHUNK)
      await tx
        .insertInto('emails')
        .values(rows.slice(i, i + EMAIL_INSERT_CHUNK))
        .execute();
  await enqueueDeliveries(tx, deliverable, jobType, jobOptions.runAt);
  // All the batch's events in one call: on PostgreSQL one statement with their reactions.
  await emitEvents(tx, events);
  return { rows, committed: nothingToTell };
}

/** Delivery jobs for emails that exist (also a scheduled email found without its job), each
 *  keyed by its email's id: cancel and reschedule find it by that key (cancel.ts). */
export async function enqueueDeliveries(
  tx: Executor,
  emails: Array<Pick<EmailRow, 'id' | 'traceparent'>>,
  jobType: string = DELIVER_JOB,
  runAt: number = nowMs(),
): Promise<void> {
  const options = { runAt, maxAttempts: DELIVER_MAX_ATTEMPTS };
  if (emails.length === 1) await enqueueJob(tx, jobType, deliverPayload(emails[0]), { ...options, key: emails[0].id });
  else if (emails.length > 1)
    await enqueueJobs(tx, jobType, emails.map(deliverPayload), { ...options, keys: emails.map((email) => email.id) });
}

function emailRows(batch: NewEmails): EmailRow[] {
  const now = nowIso();
  const inbound = batch.source === 'inbound';
  const scheduledAt = batch.scheduledAt ? isoFromDate(batch.scheduledAt) : null;
  const trackLoads = batch.tracking?.loads ? 1 : 0;
  const trackClicks = batch.tracking?.clicks ? 1 : 0;
  return batch.recipients.map((recipient) => {
    const token = emailToken();
    const status = inbound ? 'received' : recipient.suppressed ? 'suppressed' : scheduledAt ? 'scheduled' : 'accepted';
    return {
      id: newId('em'),
      workspace_id: batch.workspaceId,
      type: inbound ? 'inbound' : 'outbound',
      source: batch.source,
      token,
      message_id: batch.messageId ?? `<${token}@${batch.messageIdHost}>`,
      content_id: batch.contentId,
      from: batch.from,
      from_address: batch.fromAddress,
      to: recipient.to,
      recipient_kind: recipient.kind,
      subject: recipient.subject ?? batch.subject,
      status,
      scheduled_at: inbound ? null : scheduledAt,
      api_key_id: batch.apiKeyId ?? null,
      sending_domain_id: recipient.sendingDomainId ?? batch.sendingDomainId,
      tag: null,
      spam_score: null,
      size: batch.size,
      meta: batch.meta,
      track_loads: trackLoads,
      track_clicks: trackClicks,
      original_id: batch.originalId ?? null,
      status_detail: status === 'suppressed' ? SUPPRESSED_DETAIL : null,
      delivered_at: null,
      bounce_reason: null,
      bounce_type: null,
      traceparent: batch.traceparent ?? null,
      created_at: now,
      updated_at: now,
    };
  });
}
