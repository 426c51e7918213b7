// Email status transitions after acceptance (https://emailit.com/docs/logs/email-statuses.md): each
// one is a conditional UPDATE (compare-and-set on the current status, so racing workers, DSNs and
// clicks never move an email backwards or twice) in ONE transaction with its event, its attempt
// rows and, for hard bounces and complaints, the automatic suppression.
import { sql, type Insertable } from 'kysely';
import { dialectOf, type Db, type Executor } from '../../../platform/db/database.ts';
import { nowIso } from '../../../platform/clock.ts';
import { preparedQuery } from '../../../platform/db/prepared.ts';
import { commitAlone, groupCommit } from '../../../platform/db/group-commit.ts';
import { emitEvent, emitEvents, type EventToEmit } from '../../../platform/events.ts';
import { completeJobs } from '../../../platform/jobs.ts';
import { EMAIL_EVENT_COLUMNS, emailEventObject, type EmailEventRow, type EmailRow } from '../objects.ts';
import type { EmailAttemptsTable } from '../tables.ts';
import { addAutomaticSuppression } from '../../suppressions/service.ts';
import type { DeliveryOutcome, HostAttempt } from '../../../mail/smtp-delivery.ts';
import { BOUNCE_REASONS, classifyReason, suppressesRecipient, type BounceReason } from '../../../mail/bounce-reasons.ts';
import { observeBounce, observeComplaint } from '../../../platform/metrics.ts';

/** Statuses a delivery worker may still send from. */
export const SENDABLE_STATUSES = ['accepted', 'scheduled', 'attempted'] as const;
// A late DSN can bounce mail that was accepted by the next hop (delivered can
// still move to bounced); the worker's own outcome may also be overtaken by it.
const BOUNCEABLE = ['accepted', 'attempted', 'delivered', 'loaded', 'clicked'];
// A complaint means the mail arrived, whatever we recorded meanwhile.
const COMPLAINABLE = ['accepted', 'attempted', 'delivered', 'loaded', 'clicked', 'bounced'];
// The message did leave when the next hop said 2xx, even if a cancel raced the send.
const DELIVERABLE = [...SENDABLE_STATUSES, 'canceled'];

type Change = Partial<Pick<EmailRow, 'status' | 'status_detail' | 'delivered_at' | 'bounce_reason' | 'bounce_type'>>;

/** Moves the email to `change.status` when its status is one of `from`; the updated row or null. */
async function transition(tx: Executor, emailId: string, from: readonly string[], change: Change): Promise<EmailRow | null> {
  const row = await tx
    .updateTable('emails')
    .set({ ...change, updated_at: nowIso() })
    .where('id', '=', emailId)
    .where('type', '=', 'outbound')
    .where('status', 'in', [...from])
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

type AttemptValues = Omit<Insertable<EmailAttemptsTable>, 'id'>;

// One attempt row, compiled once (platform/db/prepared.ts): on SQLite a batch's rows go in one
// at a time, since compiling a multi-row INSERT for each batch cost more than running it.
const insertAttempt = preparedQuery((db, p: AttemptValues) =>
  db.insertInto('email_attempts').values({
    email_id: p.email_id,
    attempted_at: p.attempted_at,
    outcome: p.outcome,
    mx_host: p.mx_host,
    smtp_code: p.smtp_code,
    enhanced_code: p.enhanced_code,
    response: p.response,
    reason: p.reason,
    tls: p.tls,
    source_address: p.source_address ?? null,
  }),
);

async function insertAttempts(tx: Executor, attempts: Array<{ emailId: string; attempt: HostAttempt }>): Promise<void> {
  if (attempts.length === 0) return;
  const at = nowIso();
  const rows: AttemptValues[] = attempts.map(({ emailId, attempt }) => ({
    email_id: emailId,
    attempted_at: at,
    outcome: attempt.kind,
    mx_host: attempt.mxHost,
    smtp_code: attempt.code,
    enhanced_code: attempt.enhancedCode,
    response: attempt.response.slice(0, 2000),
    reason: attempt.kind === 'delivered' ? null : (attempt.reason ?? reasonOf(attempt).reason),
    tls: attempt.tls ?? null,
    source_address: attempt.source ?? null,
  }));
  if (dialectOf(tx) === 'sqlite') {
    for (const row of rows) await insertAttempt(tx, row);
    return;
  }
  await tx.insertInto('email_attempts').values(rows).execute(); // one round trip
}

/** The documented reason of an attempt (the delivery client sets it; older callers may not). The
 *  command answered matters: "user unknown" after DATA is the recipient's filter, at MAIL FROM our sender. */
export function reasonOf(attempt: Pick<HostAttempt, 'code' | 'enhancedCode' | 'response' | 'reason' | 'command'>): {
  reason: BounceReason;
  hard: boolean;
  aboutRecipient: boolean;
} {
  const classified = classifyReason({
    status: attempt.enhancedCode ?? (attempt.code !== null ? String(attempt.code) : null),
    diagnostic: attempt.response,
    command: attempt.command ?? null,
  });
  if (!attempt.reason || attempt.reason === classified.reason) return classified;
  const entry = BOUNCE_REASONS[attempt.reason];
  return {
    reason: attempt.reason,
    hard: entry.hard && Boolean(attempt.enhancedCode?.startsWith('5') || (attempt.code ?? 0) >= 500),
    aboutRecipient: entry.aboutRecipient,
  };
}

const bounceType = (hard: boolean) => (hard ? 'hard' : 'soft');

const attemptsOf = (emailId: string, outcome: DeliveryOutcome) => outcome.attempts.map((attempt) => ({ emailId, attempt }));

function describe(outcome: Pick<HostAttempt, 'code' | 'response' | 'mxHost'>): string {
  const text =
    outcome.code !== null && !outcome.response.startsWith(String(outcome.code)) ? `${outcome.code} ${outcome.response}` : outcome.response;
  return (outcome.mxHost ? `${outcome.mxHost}: ${text}` : text).slice(0, 1000);
}

function statusEvent(row: EmailEventRow, extra: Record<string, unknown> = {}): EventToEmit {
  const type = `email.${row.status}`;
  return { workspaceId: row.workspace_id, type, object: { ...emailEventObject(row, type), ...extra } };
}

async function emitStatus(tx: Executor, row: EmailEventRow, extra: Record<string, unknown> = {}): Promise<void> {
  const { workspaceId, type, object } = statusEvent(row, extra);
  await emitEvent(tx, workspaceId, type, object);
}

/** The deliver job to complete with the outcome (in its transaction): its id and the worker holding it. */
export interface JobToComplete {
  id: number;
  lockedBy: string;
}

/** 2xx from the next hop → `delivered` + email.delivered. The attempts are recorded in any case;
 *  `job`, when given, is completed in the same transaction (no second commit to acknowledge it). */
export function recordDelivered(db: Db, emailId: string, outcome: DeliveryOutcome, job?: JobToComplete): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let queue = deliveredQueues.get(db);
    if (!queue) deliveredQueues.set(db, (queue = { items: [], flushing: false }));
    queue.items.push({ emailId, outcome, job, resolve, reject });
    if (!queue.flushing) {
      queue.flushing = true;
      setImmediate(() => void flushDelivered(db, queue));
    }
  });
}

// Group commit: deliveries that finish while a batch is being written share the next
// transaction, so under load one commit records many 2xx (each still before its job is
// acknowledged: the caller's promise resolves after the commit). On SQLite the batch is one
// unit of the sends' group commit: the 2xx and the sends accepted in the same turn of the
// event loop share a commit (a commit's WAL write costs more than a batch's statements).
interface DeliveredItem {
  emailId: string;
  outcome: DeliveryOutcome;
  job: JobToComplete | undefined;
  resolve(moved: boolean): void;
  reject(error: unknown): void;
}
const deliveredQueues = new Map<Db, { items: DeliveredItem[]; flushing: boolean }>();
const MAX_GROUP = 100;

async function flushDelivered(db: Db, queue: { items: DeliveredItem[]; flushing: boolean }): Promise<void> {
  while (queue.items.length > 0) {
    const batch = queue.items.splice(0, MAX_GROUP);
    try {
      const record = (tx: Executor) => recordDeliveredBatch(tx, batch);
      // On PostgreSQL commitAlone sends the BEGIN with the first statement: a round trip fewer
      // than Kysely's transaction, each of which waits on a busy event loop.
      const moved = await (dialectOf(db) === 'sqlite' ? groupCommit(db, record) : commitAlone(db, record));
      batch.forEach((item, i) => item.resolve(moved[i]));
    } catch {
      // One bad item must not fail the others: each is recorded on its own.
      for (const item of batch) {
        await commitAlone(db, (tx) => recordDeliveredBatch(tx, [item])).then(([moved]) => item.resolve(moved), item.reject);
      }
    }
  }
  queue.flushing = false;
}

/** The batch's attempts, status changes and events, and its jobs completed: whether each moved. */
async function recordDeliveredBatch(tx: Executor, batch: DeliveredItem[]): Promise<boolean[]> {
  await insertAttempts(
    tx,
    batch.flatMap((item) => attemptsOf(item.emailId, item.outcome)),
  );
  const results = batch.length === 1 ? [await markDelivered(tx, batch[0].emailId, batch[0].outcome)] : await markAllDelivered(tx, batch);
  await completeDeliverJobs(tx, batch);
  return results;
}

/** Deletes the batch's jobs, each only if its worker still holds it (as JobRunner would after the commit). */
async function completeDeliverJobs(tx: Executor, batch: DeliveredItem[]): Promise<void> {
  const byWorker = new Map<string, number[]>();
  for (const { job } of batch) if (job) byWorker.set(job.lockedBy, [...(byWorker.get(job.lockedBy) ?? []), job.id]);
  for (const [workerId, ids] of byWorker) await completeJobs(tx, ids, workerId);
}

// The hot transition, compiled once (see platform/db/prepared.ts).
const toDelivered = preparedQuery((db, p: { id: string; at: string; detail: string }) =>
  db
    .updateTable('emails')
    .set({ status: 'delivered', delivered_at: p.at, status_detail: p.detail, bounce_reason: null, bounce_type: null, updated_at: p.at })
    .where('id', '=', p.id)
    .where('type', '=', 'outbound')
    .where('status', 'in', DELIVERABLE)
    .returning(EMAIL_EVENT_COLUMNS),
);

/** markDelivered for a whole batch; events in batch order. */
async function markAllDelivered(tx: Executor, batch: DeliveredItem[]): Promise<boolean[]> {
  const at = nowIso();
  const rows = dialectOf(tx) === 'sqlite' ? await deliveredOneByOne(tx, batch, at) : await deliveredInOneUpdate(tx, batch, at);
  const moved = new Map(rows.map((row) => [row.id, row]));
  const results: boolean[] = [];
  const events: EventToEmit[] = [];
  for (const item of batch) {
    const row = moved.get(item.emailId);
    // Taken once: a second item for the same email finds it delivered already, as it would alone.
    moved.delete(item.emailId);
    if (row) events.push(statusEvent(row));
    results.push(row !== undefined);
  }
  // One call for the batch: on PostgreSQL its events and their reactions are one statement.
  await emitEvents(tx, events);
  return results;
}

// SQLite: the prepared single-row UPDATE per item, with no Kysely compile of a statement whose
// text changes with the batch's size. An email twice in the batch moves once: its second
// UPDATE finds it delivered already.
async function deliveredOneByOne(tx: Executor, batch: DeliveredItem[], at: string): Promise<EmailEventRow[]> {
  const rows: EmailEventRow[] = [];
  for (const item of batch) rows.push(...(await toDelivered(tx, { id: item.emailId, at, detail: describe(item.outcome) })));
  return rows;
}

// PostgreSQL: one UPDATE for the batch, one round trip.
function deliveredInOneUpdate(tx: Executor, batch: DeliveredItem[], at: string): Promise<EmailEventRow[]> {
  const detail = sql<string>`case ${sql.ref('id')} ${sql.join(
    batch.map((item) => sql`when ${item.emailId} then ${describe(item.outcome)}`),
    sql` `,
  )} end`;
  return tx
    .updateTable('emails')
    .set({ status: 'delivered', delivered_at: at, status_detail: detail, bounce_reason: null, bounce_type: null, updated_at: at })
    .where(
      'id',
      'in',
      batch.map((item) => item.emailId),
    )
    .where('type', '=', 'outbound')
    .where('status', 'in', DELIVERABLE)
    .returning(EMAIL_EVENT_COLUMNS)
    .execute();
}

async function markDelivered(tx: Executor, emailId: string, outcome: DeliveryOutcome): Promise<boolean> {
  const [row] = await toDelivered(tx, { id: emailId, at: nowIso(), detail: describe(outcome) });
  if (row) await emitStatus(tx, row);
  return row !== undefined;
}

/** 4xx or a network failure with time left → `attempted` + email.attempted (with the SMTP reply). */
export async function recordAttempted(db: Db, emailId: string, outcome: DeliveryOutcome, nextAttemptAt: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await insertAttempts(tx, attemptsOf(emailId, outcome));
    const { reason } = reasonOf(outcome);
    const row = await transition(tx, emailId, SENDABLE_STATUSES, {
      status: 'attempted',
      status_detail: describe(outcome),
      bounce_reason: reason,
      bounce_type: 'soft',
    });
    if (row) {
      await emitStatus(tx, row, {
        smtp_code: outcome.code,
        enhanced_code: outcome.enhancedCode,
        smtp_response: outcome.response,
        mx_host: outcome.mxHost,
        next_attempt_at: nextAttemptAt,
      });
    }
    return row !== null;
  });
}

/** The retry window ran out, or the email cannot be built (content purged, domain gone) → `failed`. */
export async function recordFailed(db: Db, emailId: string, reason: string, outcome?: DeliveryOutcome): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    if (outcome) await insertAttempts(tx, attemptsOf(emailId, outcome));
    // With an outcome the retry window ran out: `expired` (soft). Without one the message could not be built.
    const bounce: Change = outcome ? { bounce_reason: 'expired', bounce_type: 'soft' } : { bounce_reason: null, bounce_type: null };
    const row = await transition(tx, emailId, SENDABLE_STATUSES, { status: 'failed', status_detail: reason.slice(0, 1000), ...bounce });
    if (row) await emitStatus(tx, row);
    return row !== null;
  });
}

/** 5xx (or a permanent DNS answer such as NXDOMAIN / null MX) at delivery → `bounced` + suppression. */
export async function recordBouncedAtDelivery(db: Db, emailId: string, outcome: DeliveryOutcome): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await insertAttempts(tx, attemptsOf(emailId, outcome));
    return bounceAtDelivery(tx, emailId, outcome);
  });
}

async function bounceAtDelivery(tx: Executor, emailId: string, outcome: DeliveryOutcome): Promise<boolean> {
  const reason = describe(outcome);
  const classified = reasonOf(outcome);
  const row = await transition(tx, emailId, SENDABLE_STATUSES, {
    status: 'bounced',
    status_detail: reason,
    bounce_reason: classified.reason,
    bounce_type: bounceType(classified.hard),
  });
  if (!row) return false;
  // Only reasons about the recipient suppress it (a too-large or spam-rejected message does not).
  if (suppressesRecipient(classified)) await addAutomaticSuppression(tx, row.workspace_id, row.to, 'bounce', reason);
  await emitStatus(tx, row);
  return true;
}

/** An outcome read before a crash (journal.ts), recorded as the worker would have: the status,
 *  its event, its attempt rows and the job's completion, in one transaction. Applying it again
 *  changes nothing (the status moved already; attempts are written only with the move). */
export async function applyJournaledOutcome(
  db: Db,
  emailId: string,
  outcome: DeliveryOutcome,
  answeredAt: string,
  job: JobToComplete | null,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    let moved = false;
    if (outcome.kind === 'delivered') {
      const [row] = await toDelivered(tx, { id: emailId, at: answeredAt, detail: describe(outcome) });
      if (row) await emitStatus(tx, row);
      moved = row !== undefined;
    } else if (outcome.kind === 'permanent') {
      moved = await bounceAtDelivery(tx, emailId, outcome);
    }
    if (moved) await insertAttempts(tx, attemptsOf(emailId, outcome));
    // The job its dead worker held is done (unless another worker took it over since).
    if (job) await completeJobs(tx, [job.id], job.lockedBy);
    return moved;
  });
}

export interface BounceInput {
  /** Human-readable reason (stored as the email's detail and the suppression's reason). */
  reason: string;
  /** RFC 3463 status, e.g. 5.1.1. */
  status?: string;
  diagnostic?: string;
  /** A permanent failure. */
  hard: boolean;
  /** The documented reason; a `bounce` suppression needs a hard one about the recipient. */
  bounceReason?: BounceReason;
}

/**
 * An asynchronous bounce (DSN to the VERP address) → `bounced` + email.bounced (+ suppression
 * when hard). Also after `delivered`. Idempotent: false when the email is unknown, already
 * bounced, or in a status a bounce cannot apply to (canceled, suppressed, failed…).
 */
export async function applyBounce(db: Db, emailId: string, input: BounceInput): Promise<boolean> {
  const detail = [input.status, input.reason || input.diagnostic].filter(Boolean).join(' ').slice(0, 1000) || 'Bounced';
  const applied = await db.transaction().execute(async (tx) => {
    const reason = input.bounceReason ?? classifyReason({ status: input.status, diagnostic: input.diagnostic ?? input.reason }).reason;
    const hard = input.hard && BOUNCE_REASONS[reason].hard;
    const row = await transition(tx, emailId, BOUNCEABLE, {
      status: 'bounced',
      status_detail: detail,
      bounce_reason: reason,
      bounce_type: bounceType(hard),
    });
    if (!row) return false;
    if (suppressesRecipient({ reason, hard, aboutRecipient: BOUNCE_REASONS[reason].aboutRecipient })) {
      await addAutomaticSuppression(tx, row.workspace_id, row.to, 'bounce', detail);
    }
    await emitStatus(tx, row);
    return true;
  });
  if (applied) observeBounce();
  return applied;
}

export interface ComplaintInput {
  reason: string;
  /** ARF Feedback-Type (abuse, fraud, …). */
  feedbackType?: string;
}

/** A feedback-loop complaint (ARF) → `complained` + email.complained + `complaint` suppression. Idempotent. */
export async function applyComplaint(db: Db, emailId: string, input: ComplaintInput): Promise<boolean> {
  const detail = (input.reason || `Complaint${input.feedbackType ? ` (${input.feedbackType})` : ''}`).slice(0, 1000);
  const applied = await db.transaction().execute(async (tx) => {
    const row = await transition(tx, emailId, COMPLAINABLE, {
      status: 'complained',
      status_detail: detail,
      bounce_reason: 'complaint',
      bounce_type: 'soft',
    });
    if (!row) return false;
    await addAutomaticSuppression(tx, row.workspace_id, row.to, 'complaint', detail);
    await emitStatus(tx, row);
    return true;
  });
  if (applied) observeComplaint();
  return applied;
}

// Opens and clicks move forward only: accepted/delivered → loaded → clicked (a load after a
// click leaves `clicked`; bounced or complained mail keeps its status).
const ENGAGEMENT_FROM: Record<'loaded' | 'clicked', readonly string[]> = {
  loaded: ['accepted', 'attempted', 'delivered'],
  clicked: ['accepted', 'attempted', 'delivered', 'loaded'],
};

/** Inside the caller's transaction (which emits the load/click event): moves the status forward. */
export async function advanceEngagement(tx: Executor, emailId: string, status: 'loaded' | 'clicked'): Promise<EmailRow | null> {
  return transition(tx, emailId, ENGAGEMENT_FROM[status], { status });
}
