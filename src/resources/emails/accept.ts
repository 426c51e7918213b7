// Accepting a message for delivery: the one pipeline behind POST /emails, forwards, retries
// and the SMTP relay. It applies the sending rules in the spec's order (domain, key
// restriction, workspace verification, size, suppressions, limits, credits) and then writes
// everything of the request — content, one email row per unique recipient, events, deliver
// jobs, limit counters — in one transaction, so an accepted email is never lost or half-made.
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { ApiError, messageError, plainError } from '../../platform/http/errors.ts';
import { newId } from '../../platform/ids.ts';
import { isoFromDate, nowMs } from '../../platform/clock.ts';
import { spendCreditsAtCommit } from '../../platform/credits.ts';
import {
  checkSendLimits,
  countSends,
  sendLimitsRead,
  pruneLimitCountersNowAndThen,
  rateLimitHeaders,
  type SendLimitState,
} from '../../platform/limits.ts';
import { prefetch } from '../../platform/db/prepared.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { observeAccepted } from '../../platform/metrics.ts';
import { activeSpan, currentTraceparent, emailIdAttribute, inSpan, tracingOn } from '../../platform/tracing.ts';
import { getWorkspace, workspaceRead, type Workspace } from '../workspaces/service.ts';
import { findSendingDomain, sendingDomainRead, type SendingDomain } from '../domains/service.ts';
import { activeSuppressions, suppressionRead } from '../suppressions/service.ts';
import { domainOf } from './addresses.ts';
import { MAX_MESSAGE_BYTES, messageSize, type StoredMessage } from './content.ts';
import type { EmailRow } from './objects.ts';
import { createEmails, type NewEmails } from '../../delivery/intake.ts';

// The delivery jobs are named by the intake that enqueues them (src/delivery/jobs.ts).
export { CAMPAIGN_DELIVER_JOB, DELIVER_JOB, DELIVER_LEASE_MS } from '../../delivery/jobs.ts';

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
export async function authorizedSendingDomain(
  ctx: AppContext,
  db: Executor,
  principal: Principal,
  fromAddress: string,
): Promise<SendingDomain> {
  const domain = await findSendingDomain(db, ctx.secrets, principal.workspaceId, domainOf(fromAddress));
  if (principal.sendingDomainId && domain?.id !== principal.sendingDomainId) {
    throw messageError(
      403,
      'Domain not authorized',
      `This API key may only send from its own sending domain, not from ${domainOf(fromAddress)}.`,
    );
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
  return inSpan(
    'email.accept',
    { attributes: { 'postlane.source': request.source, 'postlane.workspace_id': principal.workspaceId } },
    async (span) => {
      const accepted = await acceptNow(ctx, principal, request, currentTraceparent() ?? null);
      const ids = emailIdAttribute(accepted.rows.map((row) => row.id));
      span?.setAttributes(ids);
      caller?.setAttributes(ids);
      return accepted;
    },
  );
}

async function acceptNow(ctx: AppContext, principal: Principal, request: AcceptRequest, traceparent: string | null): Promise<Accepted> {
  const { message } = request;
  const recipients = uniqueRecipients(message);
  const size = messageSize(message);
  if (size > MAX_MESSAGE_BYTES) {
    throw messageError(
      413,
      'Message too large',
      `The message is ${size} bytes; at most ${MAX_MESSAGE_BYTES} bytes (40 MB) including attachments are allowed.`,
    );
  }
  pruneLimitCountersNowAndThen(ctx.db);
  // Checks and writes share one transaction, so what was checked is what gets written; sends
  // arriving together share it (group commit). On PostgreSQL the delivery workers are told of
  // the new job once it is committed, so the claim that wakes them finds it (told earlier,
  // they mostly claimed nothing and asked again).
  let committed = () => {};
  const checkSuppressions = !request.ignoreSuppressions;
  // On PostgreSQL the reads below, of a single-recipient send, in one round trip: the send's
  // own, or its group's (all its sends' reads in one statement, at the time the group starts,
  // which the send then takes as its own `now`).
  const readsAt = (at: number) => [
    workspaceRead(principal.workspaceId),
    sendingDomainRead(principal.workspaceId, domainOf(message.from.address)),
    ...(checkSuppressions && recipients.length === 1
      ? [suppressionRead(principal.workspaceId, recipients[0].address, 'recipient', isoFromDate(new Date(at)))]
      : []),
    sendLimitsRead(principal.workspaceId, at),
  ];
  let groupStartedAt = 0;
  const accepted = await groupCommit(
    ctx.db,
    async (tx) => {
      const now = groupStartedAt || nowMs();
      groupStartedAt = 0; // run again alone (group-commit.ts), the send reads afresh
      const nowText = isoFromDate(new Date(now));
      await prefetch(tx, readsAt(now));
      const workspace = await getWorkspace(tx, principal.workspaceId);
      if (!workspace) throw plainError(404, 'Workspace not found');
      const domain = await authorizedSendingDomain(ctx, tx, principal, message.from.address);
      checkMembers(workspace, recipients);
      const suppressed = new Set(
        checkSuppressions
          ? (
              await activeSuppressions(
                tx,
                workspace.id,
                recipients.map((r) => r.address),
                ['recipient'],
                nowText,
              )
            ).map((s) => s.email)
          : [],
      );
      const check = await checkSendLimits(tx, workspace, now);
      if (!check.ok) throw check.error;

      const created = await createEmails(
        tx,
        newEmails(principal, request, { workspace, domain, recipients, suppressed, size, traceparent }),
        { pipelined: true },
      );
      const { rows } = created;
      committed = created.committed;
      const billable = rows.filter((row) => row.status !== 'suppressed');
      const units = request.limitUnits ?? recipients.length;
      await request.inTransaction?.(tx, rows);
      // The workspace's hot rows (credits, counters) last: on PostgreSQL their row locks are
      // then held only from here to the commit, not across the whole send.
      if (billable.length > 0) await spendCreditsAtCommit(tx, workspace.id, billable.length);
      await countSends(tx, workspace.id, units);
      return { rows, limits: check.state, counted: units, headers: rateLimitHeaders(check.state, units) };
    },
    { reads: () => readsAt((groupStartedAt = nowMs())) },
  );
  committed();
  return accepted;
}

interface RowContext {
  workspace: Workspace;
  domain: SendingDomain;
  recipients: Recipient[];
  suppressed: Set<string>;
  size: number;
  traceparent: string | null;
}

/** One email per unique recipient, all sharing one content row. */
function newEmails(
  principal: Principal,
  request: AcceptRequest,
  { workspace, domain, recipients, suppressed, size, traceparent }: RowContext,
): NewEmails {
  return {
    workspaceId: workspace.id,
    source: request.source,
    contentId: newId('emc'),
    content: { message: JSON.stringify(request.message), raw: request.raw ?? null, size },
    from: request.fromHeader,
    fromAddress: request.message.from.address,
    subject: request.message.subject,
    sendingDomainId: domain.id,
    messageIdHost: domain.name,
    size,
    meta: request.meta ? JSON.stringify(request.meta) : null,
    tracking: resolveTracking(request.tracking, domain),
    apiKeyId: principal.keyId || null,
    originalId: request.originalId ?? null,
    scheduledAt: request.scheduledAt,
    traceparent,
    recipients: recipients.map(({ address, kind }) => ({ to: address, kind, suppressed: suppressed.has(address.toLowerCase()) })),
  };
}
