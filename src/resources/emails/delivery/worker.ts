// The delivery worker: runs `email.deliver` jobs ({email_id}) queued by acceptMessage.
//
// One job = one try. The email row says what is left to do, which makes the job idempotent:
// canceled, suppressed, delivered or otherwise final emails are done; a job that is due before
// the email's scheduled_at (rescheduled) moves itself; a job re-run after a crash finds the
// outcome its first run recorded. The outcome of a try (attempt rows, status, event,
// suppression) is committed BEFORE the job is acknowledged (a 2xx and the job's deletion in one
// transaction). A final answer (2xx, 5xx) is also appended to this process's outcome journal
// the moment it is read (journal.ts), before that commit, which is batched: a worker killed
// between the two leaves the answer in the journal, and the next start records it before any
// job is claimed (journal-replay.ts), so a 250 is never followed by a second send. Killed
// before the 2xx, the next hop did not take it, and the job runs again once its lease expires.
//
// 2xx → delivered. 4xx / network / DNS trouble → attempted, retried with exponential backoff
// until DELIVERY_RETRY_WINDOW_HOURS after the email was due, then failed. 5xx (and NXDOMAIN,
// null MX) → bounced + bounce suppression.
import type { AppContext } from '../../../platform/context.ts';
import type { Db } from '../../../platform/db/database.ts';
import { isoFromMs, nowMs } from '../../../platform/clock.ts';
import { JOB_COMPLETED, RetryJobAt, type Job } from '../../../platform/jobs.ts';
import { createOutboundDelivery, type DeliveryOutcome, type SmtpDelivery } from '../../../mail/smtp-delivery.ts';
import { findSendingDomainById, type SendingDomain } from '../../domains/service.ts';
import { BuildError, BuildPool } from './build-pool.ts';
import { ByteBudget } from './byte-budget.ts';
import { EmailReader, type EmailWithContent } from './email-reader.ts';
import { deriveTrackingSecret, storeTrackingLinks } from './tracking.ts';
import { personalizationFor } from './personalize.ts';
import {
  applyJournaledOutcome,
  recordAttempted,
  recordBouncedAtDelivery,
  recordDelivered,
  recordFailed,
  SENDABLE_STATUSES,
} from './outcomes.ts';
import { OutcomeJournal } from './journal.ts';
import { destinationOf, feedbackOf, parseShapingOverrides, TrafficShaper, type Priority } from '../../../mail/shaping.ts';
import { activeHolds, holdFor, HOLD_RECHECK_MS, saveDestinationStates } from '../../delivery-queue/service.ts';
import { poolFor } from '../../delivery-queue/service.ts';
import { WarmupGate, type WarmupTicket } from '../../warmup/service.ts';
import { metricsEnabled, observeDelivery } from '../../../platform/metrics.ts';
import { currentTraceparent, EMAIL_ID, inSpan, recordSpan, setSpanAttributes, SpanKind, tracingOn } from '../../../platform/tracing.ts';

/** A delivery the destination throttled beyond its in-delivery retries is tried again after this. */
const THROTTLED_RETRY_MS = 10_000;
/** How often the shaper's state is written for the API and the CLI. */
const STATE_SNAPSHOT_MS = 5_000;

/** Sources of bulk mail (marketing); everything else is transactional and goes first. */
const BULK_SOURCES = new Set(['campaign', 'automation', 'broadcast', 'bulk']);
export const priorityOf = (source: string): Priority => (BULK_SOURCES.has(source) ? 'bulk' : 'transactional');

const RETRY_BASE_MS = 60_000;
const RETRY_CAP_MS = 60 * 60 * 1000;
const DOMAIN_CACHE_MS = 30_000;
/** How long recording a journaled outcome is retried (the database away) before the job gives
 *  up its try; the outcome stays journaled and is recorded when the job runs again here. */
const RECORD_RETRY_MS = 30_000;
/** Stored message bytes being built and sent at once per process (see byte-budget.ts). */
const IN_FLIGHT_BYTES = 128 * 1024 * 1024;
/** Connections open at once to one destination address: Postfix's default_destination_concurrency_limit. */
export const DESTINATION_CONCURRENCY = 20;

export interface DeliverPayload {
  email_id?: unknown;
}

/** Delay before try `attempt + 1` after `attempt` temporary failures: 1 min, 2, 4 … capped at 1 h, ±10 %. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const delay = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(delay * (0.9 + random() * 0.2));
}

/** When the retry window of an email ends: the window runs from when it was due (created or scheduled). */
export function retryDeadlineMs(email: { created_at: string; scheduled_at: string | null }, windowHours: number): number {
  const start = Math.max(Date.parse(email.created_at), email.scheduled_at ? Date.parse(email.scheduled_at) : 0);
  return start + windowHours * 3600_000;
}

export class DeliveryWorker {
  private readonly ctx: AppContext;
  private readonly db: Db;
  private readonly trackingSecret: Buffer;
  private smtp: SmtpDelivery | null = null;
  /** Traffic shaping per destination (DELIVERY_SHAPING overrides the provider defaults). */
  readonly shaper: TrafficShaper;
  private readonly snapshots: NodeJS.Timeout;
  private readonly builder = new BuildPool();
  private readonly inFlight = new ByteBudget(IN_FLIGHT_BYTES);
  private readonly emails: EmailReader;
  private readonly domains = new Map<string, { expires: number; domain: Promise<SendingDomain | null> }>();
  /** Final answers read and not yet committed (see journal.ts). */
  private readonly journal: OutcomeJournal;
  private closed = false;
  /** Daily caps of domains and source addresses warming up (docs/delivery.md "Warm-up"). */
  private readonly warmup: WarmupGate;

  constructor(ctx: AppContext) {
    this.ctx = ctx;
    this.db = ctx.db;
    this.trackingSecret = deriveTrackingSecret(ctx.verpSecret);
    this.emails = new EmailReader(ctx.db);
    this.journal = new OutcomeJournal(ctx.config.dataDir);
    this.shaper = new TrafficShaper({ overrides: parseShapingOverrides(process.env.DELIVERY_SHAPING) });
    this.snapshots = setInterval(() => void this.saveStates(), STATE_SNAPSHOT_MS);
    this.snapshots.unref();
    this.warmup = new WarmupGate(ctx.db);
  }

  /** Writes every destination's shaping state (read by GET /v2/delivery/destinations and the CLI). */
  async saveStates(): Promise<void> {
    try {
      await saveDestinationStates(this.db, this.shaper.states());
    } catch (error) {
      this.ctx.log.warn({ err: error }, 'saving the traffic shaping state failed');
    }
  }

  /** One long-lived SMTP client per process: pooled connections per destination. */
  private delivery(): SmtpDelivery {
    this.smtp ??= createOutboundDelivery(this.ctx.config, {
      maxConnectionsPerDestination: DESTINATION_CONCURRENCY,
      shaper: this.shaper,
    });
    return this.smtp;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.snapshots);
    await this.saveStates();
    await this.smtp?.close();
    this.smtp = null;
    this.shaper.close();
    await this.builder.close();
    this.journal.close();
  }

  /** The sending domain, cached briefly: the build pool opens its key once per domain object and
   *  thread (decrypting the key per message is waste). */
  private domain(workspaceId: string, domainId: string): Promise<SendingDomain | null> {
    const now = Date.now();
    const hit = this.domains.get(domainId);
    if (hit && hit.expires > now) return hit.domain;
    if (this.domains.size > 1000) this.domains.clear();
    const domain = findSendingDomainById(this.db, this.ctx.secrets, workspaceId, domainId);
    this.domains.set(domainId, { expires: now + DOMAIN_CACHE_MS, domain });
    domain.catch(() => this.domains.delete(domainId));
    return domain;
  }

  /** One try of a deliver job; JOB_COMPLETED when the job was deleted with the recorded 2xx. */
  async run(job: Job<DeliverPayload>): Promise<void | typeof JOB_COMPLETED> {
    const emailId = job.payload?.email_id;
    if (typeof emailId !== 'string') return;
    setSpanAttributes({ [EMAIL_ID]: emailId });
    const found = await this.emails.read(emailId);
    if (!found || found.type !== 'outbound') return;
    const { content_message: message, content_purged_at: purgedAt, ...email } = found;
    if (!(SENDABLE_STATUSES as readonly string[]).includes(email.status)) return; // canceled, suppressed, delivered, final
    // Answered already in this process, its commit failed (the database was away): record it, never send again.
    const journaled = this.journal.pendingFor(email.id);
    if (journaled) {
      await applyJournaledOutcome(
        this.db,
        email.id,
        journaled.outcome,
        journaled.at,
        job.lockedBy ? { id: job.id, lockedBy: job.lockedBy } : null,
      );
      this.journal.committed(email.id);
      return job.lockedBy ? JOB_COMPLETED : undefined;
    }
    const dueAt = email.scheduled_at ? Date.parse(email.scheduled_at) : 0;
    if (dueAt > nowMs() + 500) throw new RetryJobAt(dueAt, `scheduled for ${email.scheduled_at}`);

    if (!message || purgedAt) {
      await recordFailed(this.db, email.id, 'The message content is no longer stored');
      return;
    }
    // Held by an operator or the workspace (queue administration): checked again later.
    const holds = await activeHolds(this.db);
    if (holds.length > 0) {
      const hold = await holdFor(holds, email, () => this.delivery().destinationKeyOf(email.to));
      if (hold) throw new RetryJobAt(nowMs() + HOLD_RECHECK_MS, `held by ${hold.id}`);
    }
    const domain = email.sending_domain_id ? await this.domain(email.workspace_id, email.sending_domain_id) : null;
    if (!domain) {
      await recordFailed(this.db, email.id, 'The sending domain no longer exists');
      return;
    }

    // Over today's warm-up cap: deferred to a later day (not an attempt).
    const warm = await this.warmup.admit({
      emailId: email.id,
      domain: domain.name,
      sources: [],
      priority: priorityOf(email.source),
      destination: () => this.delivery().destinationKeyOf(email.to),
    });
    if (warm && 'deferUntil' in warm) throw new RetryJobAt(warm.deferUntil, warm.reason);
    const release = await this.inFlight.acquire(message.length);
    const ticket = warm?.ticket ?? null;
    try {
      return await this.send(job, email, message, domain, ticket);
    } finally {
      release();
      // Not handed to the receiver (build failed, crash of the try): the place goes back.
      if (ticket && !ticket.settled) await this.warmup.settle(ticket, null);
    }
  }

  private async send(
    job: Job<DeliverPayload>,
    email: Omit<EmailWithContent, 'content_message' | 'content_purged_at'>,
    message: string,
    domain: SendingDomain,
    warm: WarmupTicket | null,
  ): Promise<void | typeof JOB_COMPLETED> {
    let outgoing;
    try {
      const personal = await personalizationFor(this.db, email);
      outgoing = await this.builder.build(
        email,
        message,
        domain,
        { verpSecret: this.ctx.verpSecret, trackingSecret: this.trackingSecret },
        personal,
        currentTraceparent(),
      );
    } catch (error) {
      if (!(error instanceof BuildError)) throw error; // the build worker died: try again later
      // A message that cannot be composed or signed will not get better by waiting.
      this.ctx.log.error({ err: error, emailId: email.id }, 'building the message failed');
      await recordFailed(this.db, email.id, `The message could not be built: ${error.message}`);
      return;
    }
    if (outgoing.span) {
      recordSpan('email.build', outgoing.span.traceparent, outgoing.span.startMs, outgoing.span.endMs, {
        [EMAIL_ID]: email.id,
        'postlane.message_bytes': outgoing.raw.length,
        'postlane.dkim_domain': domain.name,
      });
    }
    if (outgoing.tracked) await storeTrackingLinks(this.db, email, outgoing.tracked);

    const priority = priorityOf(email.source);
    // IP pools (docs/delivery.md): the workspace's pool for this kind of mail; null: the OS chooses.
    const pool = await poolFor(this.db, this.ctx.config.ipPools, email.workspace_id, priority);
    const delivery = { from: outgoing.envelopeFrom, to: email.to, raw: outgoing.raw, priority, pool };
    const outcome = tracingOn ? await this.deliverTraced(email.id, delivery) : await this.delivery().deliver(delivery);
    // Accepted stays counted in the warm-up's day (before the outcome is recorded: a crash between keeps it counted).
    if (warm) await this.warmup.settle(warm, outcome.deferredUntilMs === undefined ? outcome : null);
    // No slot at the destination in time: not an attempt, just later (the queue waits its turn).
    if (outcome.deferredUntilMs !== undefined) throw new RetryJobAt(outcome.deferredUntilMs, outcome.response);
    if (metricsEnabled()) {
      const destination = outcome.mxHost ? (destinationOf(outcome.mxHost).provider ?? 'other') : 'other';
      observeDelivery(
        outcome.kind === 'delivered' ? 'delivered' : outcome.kind === 'permanent' ? 'bounced' : 'deferred',
        destination,
        outcome.tls,
        feedbackOf(outcome),
      );
    }
    const lockedBy = job.lockedBy;
    const held = lockedBy ? { id: job.id, lockedBy } : undefined;
    if (outcome.kind === 'delivered') {
      this.journal.append({ email: email.id, job: held ?? null, at: new Date().toISOString(), outcome });
      await this.untilRecorded(() => recordDelivered(this.db, email.id, outcome, held));
      this.journal.committed(email.id);
      if (lockedBy) return JOB_COMPLETED;
    } else if (outcome.kind === 'permanent') {
      this.journal.append({ email: email.id, job: held ?? null, at: new Date().toISOString(), outcome });
      await this.untilRecorded(() => recordBouncedAtDelivery(this.db, email.id, outcome));
      this.journal.committed(email.id);
    } else {
      await this.temporaryFailure(job, email, outcome);
    }
  }

  /** The SMTP exchange as a client span: where it went and what the server answered. */
  private deliverTraced(emailId: string, delivery: Parameters<SmtpDelivery['deliver']>[0]): Promise<DeliveryOutcome> {
    return inSpan('smtp.deliver', { kind: SpanKind.CLIENT, attributes: { [EMAIL_ID]: emailId } }, async (span) => {
      const outcome = await this.delivery().deliver(delivery);
      span?.setAttributes({
        'postlane.outcome': outcome.kind,
        ...(outcome.mxHost ? { 'server.address': outcome.mxHost } : {}),
        ...(outcome.code !== undefined && outcome.code !== null ? { 'smtp.response.code': outcome.code } : {}),
        ...(outcome.tls ? { 'postlane.tls': outcome.tls } : {}),
      });
      return outcome;
    });
  }

  /** Records a journaled outcome, retrying while the database is away (a PostgreSQL restart):
   *  the job stays running meanwhile, so its lease is renewed and nobody sends it again. */
  private async untilRecorded<T>(record: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + RECORD_RETRY_MS;
    for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
      try {
        return await record();
      } catch (error) {
        if (this.closed || Date.now() + wait > giveUpAt) throw error;
        this.ctx.log.warn({ err: error }, 'recording a delivery outcome failed; trying again');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private async temporaryFailure(
    job: Job,
    email: { id: string; created_at: string; scheduled_at: string | null },
    outcome: DeliveryOutcome,
  ): Promise<void> {
    const now = nowMs();
    const deadline = retryDeadlineMs(email, this.ctx.config.deliveryRetryWindowHours);
    if (now >= deadline) {
      const hours = this.ctx.config.deliveryRetryWindowHours;
      await recordFailed(
        this.db,
        email.id,
        `Not delivered within ${hours} hours; last answer: ${outcome.mxHost ? `${outcome.mxHost}: ` : ''}${outcome.response}`,
        outcome,
      );
      return;
    }
    // The last try happens at the end of the window, not after it. A throttled delivery comes
    // back soon: the destination's pace (traffic shaping) decides when it goes, not the backoff.
    const delay = outcome.reason === 'rate_limited' ? THROTTLED_RETRY_MS * (0.9 + Math.random() * 0.2) : retryDelayMs(job.attempts);
    const next = Math.floor(Math.min(now + delay, deadline));
    const moved = await recordAttempted(this.db, email.id, outcome, isoFromMs(next));
    if (moved) throw new RetryJobAt(next, `temporary failure: ${outcome.response}`);
  }
}
