// Accepting a message for delivery: the one pipeline behind POST /emails, forwards, retries
// and the SMTP relay. It applies the sending rules in the spec's order (domain, key
// restriction, workspace verification, size, suppressions, limits, credits) and then writes
// everything of the request — content, one email row per unique recipient, events, deliver
// jobs, limit counters — in one transaction, so an accepted email is never lost or half-made.
import type { AppContext } from '../../platform/context.ts';
import { dialectOf, type Executor } from '../../platform/db/database.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { ApiError, messageError, plainError } from '../../platform/http/errors.ts';
import { emailToken, newId } from '../../platform/ids.ts';
import { isoFromDate, nowIso, nowMs } from '../../platform/clock.ts';
import { emitEvents, type EventToEmit } from '../../platform/events.ts';
import { enqueueJob, jobInsertPart, JOB_LEASE_MS } from '../../platform/jobs.ts';
import { spendCreditsAtCommit } from '../../platform/credits.ts';
import { checkSendLimits, countSends, sendLimitsRead, pruneLimitCountersNowAndThen, rateLimitHeaders, type SendLimitState } from '../../platform/limits.ts';
import { prefetch, preparedQuery } from '../../platform/db/prepared.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { observeAccepted } from '../../platform/metrics.ts';
import { activeSpan, currentTraceparent, emailIdAttribute, inSpan, tracingOn } from '../../platform/tracing.ts';
import { getWorkspace, workspaceRead, type Workspace } from '../workspaces/service.ts';
import { findSendingDomain, sendingDomainRead, type SendingDomain } from '../domains/service.ts';
import { activeSuppressions, suppressionRead } from '../suppressions/service.ts';
import { domainOf } from './addresses.ts';
import { MAX_MESSAGE_BYTES, messageSize, type StoredMessage } from './content.ts';
import { emailEventObject, type EmailRow } from './objects.ts';

export const DELIVER_JOB = 'email.deliver';
/** Deliveries of campaign mail: their own job type and worker share, so a large campaign never
 *  queues ahead of transactional mail (architecture.md). Same handler as DELIVER_JOB. */
export const CAMPAIGN_DELIVER_JOB = 'email.deliver.campaign';
/** Lease of a deliver job, renewed by the job runner while its SMTP exchange lasts: a dead
 *  worker's deliveries resume within this time. Here, beside the job names, so that what waits
 *  as long as a delivery (owner notices) reads it without loading the delivery engine. */
export const DELIVER_LEASE_MS = JOB_LEASE_MS;

export type TrackingRequest = boolean | { loads?: boolean; clicks?: boolean } | undefined;

export interface AcceptRequest {
  message: StoredMessage;
  /** The From header as sent (display name included). */
  fromHeader: string;
  meta: Record<string, string> | null;
  scheduledAt: Date | null;
  tracking: TrackingRequest;
  source: 'api' | 'smtp' | 'forward' | 'retry';
  originalId?: string | null;
  /** Raw MIME as submitted (SMTP relay), stored for reads. */
  raw?: string | null;
  /** Send even to suppressed recipients: a retry is the user's explicit decision to send that
   *  one email, while the suppression stays in place for every other send. */
  ignoreSuppressions?: boolean;
  /** Units counted against the sending limits; default one per unique recipient (API). The
   *  SMTP relay counts one per transaction (https://emailit.com/docs/smtp.md). */
  limitUnits?: number;
  /** Runs inside the transaction after the rows are written (idempotency, forward counter). */
  inTransaction?: (tx: Executor, rows: EmailRow[]) => Promise<void>;
}

export interface Accepted {
  rows: EmailRow[];
  limits: SendLimitState;
  counted: number;
  headers: Record<string, string>;
}

export interface Recipient {
  address: string;
  kind: 'to' | 'cc' | 'bcc';
}

/** One entry per unique address across to, cc and bcc (case-insensitive), first kind wins. */
export function uniqueRecipients(message: Pick<StoredMessage, 'to' | 'cc' | 'bcc'>): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  for (const kind of ['to', 'cc', 'bcc'] as const) {
    for (const { address } of message[kind]) {
      const key = address.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ address, kind });
    }
  }
  return out;
}

export const domainNotVerified = () => plainError(422, 'Domain not verified');

/** The workspace's verified sending domain for `fromAddress`, honouring a key's restriction. */
export async function authorizedSendingDomain(ctx: AppContext, db: Executor, principal: Principal, fromAddress: string): Promise<SendingDomain> {
  const domain = await findSendingDomain(db, ctx.secrets, principal.workspaceId, domainOf(fromAddress));
  if (principal.sendingDomainId && domain?.id !== principal.sendingDomainId) {
    throw messageError(403, 'Domain not authorized', `This API key may only send from its own sending domain, not from ${domainOf(fromAddress)}.`);
  }
  if (!domain || !domain.verified) throw domainNotVerified();
  return domain;
}

function resolveTracking(requested: TrackingRequest, domain: SendingDomain): { loads: boolean; clicks: boolean } {
  let loads = domain.trackLoads;
  let clicks = domain.trackClicks;
  if (typeof requested === 'boolean') loads = clicks = requested;
  else if (requested) {
    if (typeof requested.loads === 'boolean') loads = requested.loads;
    if (typeof requested.clicks === 'boolean') clicks = requested.clicks;
  }
  // Tracking works only through a verified tracking CNAME; otherwise it is off.
  if (!domain.trackingVerified) loads = clicks = false;
  return { loads, clicks };
}

function checkMembers(workspace: Workspace, recipients: Recipient[]): void {
  if (workspace.verified) return;
  const members = new Set(workspace.members);
  const blocked = recipients.map((r) => r.address.toLowerCase()).filter((address) => !members.has(address));
  if (blocked.length === 0) return;
  throw new ApiError(403, {
    code: 'unverified_workspace_recipient',
    error: 'Recipient not allowed',
    message: "This workspace is not verified yet: it can send only to its members' account emails.",
    blocked_recipients: blocked,
  });
}

const insertContent = preparedQuery((db, p: { id: string; workspaceId: string; message: string; raw: string | null; size: number; createdAt: string }) =>
  db.insertInto('email_contents').values({ id: p.id, workspace_id: p.workspaceId, message: p.message, raw: p.raw, size: p.size, created_at: p.createdAt, purged_at: null }),
);
// Every column of a row bound by name: the single-recipient insert compiled once.
const EMAIL_COLUMNS = [
  'id', 'workspace_id', 'type', 'source', 'token', 'message_id', 'content_id', 'from', 'from_address', 'to', 'recipient_kind',
  'subject', 'status', 'scheduled_at', 'api_key_id', 'sending_domain_id', 'tag', 'spam_score', 'size', 'meta', 'track_loads',
  'track_clicks', 'original_id', 'status_detail', 'delivered_at', 'bounce_reason', 'bounce_type', 'traceparent', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof EmailRow>;
// Fails to compile when a column is added to the table but not to the list above.
const everyColumnListed: Exclude<keyof EmailRow, (typeof EMAIL_COLUMNS)[number]> extends never ? true : never = true;
void everyColumnListed;
const insertEmail = preparedQuery((db, p: EmailRow) =>
  db.insertInto('emails').values(Object.fromEntries(EMAIL_COLUMNS.map((column) => [column, p[column]])) as EmailRow),
);

export async function acceptMessage(ctx: AppContext, principal: Principal, request: AcceptRequest): Promise<Accepted> {
  const accepted = tracingOn ? await acceptTraced(ctx, principal, request) : await acceptNow(ctx, principal, request, null);
  observeAccepted(accepted.rows.length);
  return accepted;
}

/** The acceptance as a span, whose traceparent is stored with the emails and their deliver
 *  jobs: what happens to them later joins this trace. The caller's span (the request, the
 *  SMTP submission) is given the email ids too. */
function acceptTraced(ctx: AppContext, principal: Principal, request: AcceptRequest): Promise<Accepted> {
  const caller = activeSpan();
  return inSpan('email.accept', { attributes: { 'postlane.source': request.source, 'postlane.workspace_id': principal.workspaceId } }, async (span) => {
    const accepted = await acceptNow(ctx, principal, request, currentTraceparent() ?? null);
    const ids = emailIdAttribute(accepted.rows.map((row) => row.id));
    span?.setAttributes(ids);
    caller?.setAttributes(ids);
    return accepted;
  });
}

async function acceptNow(ctx: AppContext, principal: Principal, request: AcceptRequest, traceparent: string | null): Promise<Accepted> {
  const { message } = request;
  const recipients = uniqueRecipients(message);
  const size = messageSize(message);
  if (size > MAX_MESSAGE_BYTES) {
    throw messageError(413, 'Message too large', `The message is ${size} bytes; at most ${MAX_MESSAGE_BYTES} bytes (40 MB) including attachments are allowed.`);
  }
  pruneLimitCountersNowAndThen(ctx.db);
  // Checks and writes share one transaction, so what was checked is what gets written; sends
  // arriving together share it (group commit). On PostgreSQL the delivery workers are told of
  // the new job once it is committed, so the claim that wakes them finds it (told earlier,
  // they mostly claimed nothing and asked again).
  let committedJobs: Array<() => void> = [];
  const checkSuppressions = !request.ignoreSuppressions;
  // On PostgreSQL the reads below, of a single-recipient send, in one round trip: the send's
  // own, or its group's (all its sends' reads in one statement, at the time the group starts,
  // which the send then takes as its own `now`).
  const readsAt = (at: number) => [
    workspaceRead(principal.workspaceId),
    sendingDomainRead(principal.workspaceId, domainOf(message.from.address)),
    ...(checkSuppressions && recipients.length === 1 ? [suppressionRead(principal.workspaceId, recipients[0].address, 'recipient', isoFromDate(new Date(at)))] : []),
    sendLimitsRead(principal.workspaceId, at),
  ];
  let groupStartedAt = 0;
  const accepted = await groupCommit(ctx.db, async (tx) => {
    const now = groupStartedAt || nowMs();
    groupStartedAt = 0; // run again alone (group-commit.ts), the send reads afresh
    const nowText = isoFromDate(new Date(now));
    await prefetch(tx, readsAt(now));
    const workspace = await getWorkspace(tx, principal.workspaceId);
    if (!workspace) throw plainError(404, 'Workspace not found');
    const domain = await authorizedSendingDomain(ctx, tx, principal, message.from.address);
    checkMembers(workspace, recipients);
    const suppressed = new Set(
      checkSuppressions ? (await activeSuppressions(tx, workspace.id, recipients.map((r) => r.address), ['recipient'], nowText)).map((s) => s.email) : [],
    );
    const check = await checkSendLimits(tx, workspace, now);
    if (!check.ok) throw check.error;

    const rows = emailRows(principal, request, { workspace, domain, recipients, suppressed, size, traceparent });
    const billable = rows.filter((row) => row.status !== 'suppressed');
    const units = request.limitUnits ?? recipients.length;
    const runAt = request.scheduledAt ? request.scheduledAt.getTime() : now;
    // SMTP sends and retries do not emit email.accepted.
    const quietAccept = request.source === 'smtp' || request.source === 'retry';

    const content = { id: rows[0].content_id, workspaceId: workspace.id, message: JSON.stringify(message), raw: request.raw ?? null, size, createdAt: rows[0].created_at };
    const events: EventToEmit[] = [];
    for (const row of rows) {
      const type = `email.${row.status}`;
      if (!(quietAccept && type === 'email.accepted')) events.push({ workspaceId: workspace.id, type, object: emailEventObject(row, type) });
    }
    if (dialectOf(tx) === 'postgres' && rows.length === 1) {
      // The content, email and job rows ride in the events' statement, and that statement goes
      // out with the transaction's next query (the COMMIT, when the send runs alone): nothing
      // below needs its answer, and a failure still fails the send before it is committed.
      const jobs = billable.map((row) => jobInsertPart(tx, DELIVER_JOB, deliverPayload(row), { runAt, maxAttempts: 1_000_000, key: row.id }));
      await emitEvents(tx, events, [insertContent.part(tx, content), insertEmail.part(tx, rows[0]), ...jobs.map((job) => job.part)], { pipelined: true });
      committedJobs = jobs.map((job) => job.enqueued);
    } else {
      await insertContent(tx, content);
      if (rows.length === 1) await insertEmail(tx, rows[0]);
      else await tx.insertInto('emails').values(rows).execute();
      for (const row of billable) await enqueueJob(tx, DELIVER_JOB, deliverPayload(row), { runAt, maxAttempts: 1_000_000, key: row.id });
      // All recipients' events in one call: on PostgreSQL one statement with their reactions.
      await emitEvents(tx, events);
    }
    await request.inTransaction?.(tx, rows);
    // The workspace's hot rows (credits, counters) last: on PostgreSQL their row locks are
    // then held only from here to the commit, not across the whole send.
    if (billable.length > 0) await spendCreditsAtCommit(tx, workspace.id, billable.length);
    await countSends(tx, workspace.id, units);
    return { rows, limits: check.state, counted: units, headers: rateLimitHeaders(check.state, units) };
  }, { reads: () => readsAt((groupStartedAt = nowMs())) });
  for (const enqueued of committedJobs) enqueued();
  return accepted;
}

/** A deliver job's payload; its traceparent (tracing on) makes the job's span a child of the acceptance. */
const deliverPayload = (row: EmailRow) => (row.traceparent ? { email_id: row.id, traceparent: row.traceparent } : { email_id: row.id });

interface RowContext {
  workspace: Workspace;
  domain: SendingDomain;
  recipients: Recipient[];
  suppressed: Set<string>;
  size: number;
  traceparent: string | null;
}

/** One email row per unique recipient, all sharing one content row. */
function emailRows(principal: Principal, request: AcceptRequest, { workspace, domain, recipients, suppressed, size, traceparent }: RowContext): EmailRow[] {
  const tracking = resolveTracking(request.tracking, domain);
  const now = nowIso();
  const scheduledAt = request.scheduledAt ? isoFromDate(request.scheduledAt) : null;
  const contentId = newId('emc');
  return recipients.map(({ address, kind }) => {
    const token = emailToken();
    const isSuppressed = suppressed.has(address.toLowerCase());
    return {
      id: newId('em'),
      workspace_id: workspace.id,
      type: 'outbound',
      source: request.source,
      token,
      message_id: `<${token}@${domain.name}>`,
      content_id: contentId,
      from: request.fromHeader,
      from_address: request.message.from.address,
      to: address,
      recipient_kind: kind,
      subject: request.message.subject,
      status: isSuppressed ? 'suppressed' : scheduledAt ? 'scheduled' : 'accepted',
      scheduled_at: scheduledAt,
      api_key_id: principal.keyId || null,
      sending_domain_id: domain.id,
      tag: null,
      spam_score: null,
      size,
      meta: request.meta ? JSON.stringify(request.meta) : null,
      track_loads: tracking.loads ? 1 : 0,
      track_clicks: tracking.clicks ? 1 : 0,
      original_id: request.originalId ?? null,
      status_detail: isSuppressed ? 'The recipient is on the suppression list' : null,
      delivered_at: null,
      bounce_reason: null,
      bounce_type: null,
      traceparent,
      created_at: now,
      updated_at: now,
    };
  });
}
