// The delivery worker (https://emailit.com/docs/webhooks/retries-and-failures.md): for each enabled
// webhook with work, take its lease (one request in flight per webhook, across every worker
// process), then send its due retries and its queued events, oldest first, in batches of up to 100.
// Every attempt is recorded; a failure is retried on the schedule of policy.ts, then marked failed;
// a webhook with no success for 3 days is disabled.
//
// Crash safety: a batch is moved from the outbox into a `pending` request in one transaction
// before it is sent; a worker that dies leaves its lease to expire and the request due, so it
// is sent again (same event ids: receivers de-duplicate with event_id).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AppContext } from '../../platform/context.ts';
import { dialectOf, type Db, type Executor } from '../../platform/db/database.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import { newId } from '../../platform/ids.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import { BATCH_SIZE, batchBody, batchItem, failureBackoffMs, REQUEST_TIMEOUT_MS, retryDelayMs, shouldDisable } from './policy.ts';
import { forgetSubscriptions, onWebhookWork, stopDeliveries } from './queue.ts';
import { notifyWorkspaceOwners } from '../notifications/service.ts';
import { disabledNotice, failingNotice } from './notices.ts';
import { sendBatch, type SendOutcome } from './send.ts';
import { openBatchInOneStatement, pendingRequest, recordSuccessAndOpenNext, type OpenedBatch } from './one-statement.ts';
import type { WebhookRequestRow, WebhookRow } from './tables.ts';
import { traceparentsOf } from '../emails/service.ts';
import { emailIdAttribute, inSpan, markFailed, SpanKind, tracingOn } from '../../platform/tracing.ts';

const LEASE_MS = REQUEST_TIMEOUT_MS + 30_000;
/** Batches sent per turn before the webhook's lease is given back (fairness between webhooks). */
const BATCHES_PER_TURN = 50;
/** Webhook requests (and their attempts) are kept this long. */
const REQUEST_RETENTION_MS = 30 * 24 * 3600_000;
const MAINTENANCE_EVERY_MS = 3600_000;

export interface DispatcherOptions {
  pollMs?: number;
  concurrency?: number;
}

export class WebhookDispatcher {
  private readonly ctx: AppContext;
  private readonly db: Db;
  private readonly owner = randomUUID();
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private loopDone: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private pendingWake = false;
  private unsubscribe: (() => void) | null = null;
  private lastMaintenance = 0;
  /** Opened secrets by their sealed form (a regenerated secret is a new entry). */
  private readonly secrets = new Map<string, string>();

  constructor(ctx: AppContext, options: DispatcherOptions = {}) {
    this.ctx = ctx;
    this.db = ctx.db;
    this.pollMs = options.pollMs ?? 1000;
    this.concurrency = options.concurrency ?? 16;
  }

  start(): void {
    this.unsubscribe = onWebhookWork(() => this.wake());
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wake();
    await this.loopDone;
    await Promise.allSettled(this.running.values());
  }

  private wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = null;
        self.pendingWake = false;
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.dispatchDue();
        if (Date.now() - this.lastMaintenance > MAINTENANCE_EVERY_MS) {
          this.lastMaintenance = Date.now();
          await pruneWebhookRequests(this.db);
        }
      } catch (error) {
        if (!this.stopping) this.ctx.log.error({ err: error }, 'webhook dispatch failed');
      }
      await this.sleep(this.pollMs);
    }
  }

  /** Starts a turn for each webhook with due work that no worker holds. */
  private async dispatchDue(): Promise<void> {
    const free = this.concurrency - this.running.size;
    if (free <= 0) return;
    const now = Math.floor(nowMs());
    const hooks = await this.db
      .selectFrom('webhooks as w')
      .select('w.id')
      .where('w.enabled', '=', 1)
      .where((eb) => eb.or([eb('w.lock_until', 'is', null), eb('w.lock_until', '<', now)]))
      .where((eb) => eb.or([eb('w.backoff_until', 'is', null), eb('w.backoff_until', '<=', now)]))
      .where((eb) =>
        eb.or([
          eb.exists(eb.selectFrom('webhook_outbox as o').select(sql`1`.as('one')).whereRef('o.webhook_id', '=', 'w.id')),
          eb.exists(
            eb
              .selectFrom('webhook_requests as r')
              .select(sql`1`.as('one'))
              .whereRef('r.webhook_id', '=', 'w.id')
              .where('r.next_attempt_at', '<=', now),
          ),
        ]),
      )
      .limit(free)
      .execute();
    for (const { id } of hooks) {
      if (this.running.size >= this.concurrency) break;
      if (this.running.has(id)) continue;
      const turn = this.turn(id)
        .catch((error) => {
          if (!this.stopping) this.ctx.log.error({ err: error, webhookId: id }, 'webhook delivery turn failed');
        })
        .finally(() => {
          this.running.delete(id);
          this.wake();
        });
      this.running.set(id, turn);
    }
  }

  /**
   * Takes (or renews) the webhook's lease: the webhook row when held, enabled and not pausing,
   * with the id of its request due first (retries and resends, oldest first), if any. After a
   * success (`healthyAt`), the same UPDATE records the webhook's health.
   */
  private async lease(db: Executor, id: string, healthyAt: string | null = null): Promise<Leased | undefined> {
    const now = Math.floor(nowMs());
    const row = await db
      .updateTable('webhooks')
      .set({ lock_until: now + LEASE_MS, lock_owner: this.owner, ...(healthyAt ? healthAfterSuccess(healthyAt) : {}) })
      .where('id', '=', id)
      .where('enabled', '=', 1)
      .where((eb) => eb.or([eb('lock_until', 'is', null), eb('lock_until', '<', now), eb('lock_owner', '=', this.owner)]))
      .returningAll()
      // `next_attempt_at is not null` lets the partial index of due requests answer this, rather
      // than a walk through the webhook's whole history in created_at order.
      .returning((eb) =>
        eb
          .selectFrom('webhook_requests as r')
          .select('r.id')
          .whereRef('r.webhook_id', '=', 'webhooks.id')
          .where('r.next_attempt_at', 'is not', null)
          .where('r.next_attempt_at', '<=', now)
          .orderBy('r.created_at')
          .orderBy('r.id')
          .limit(1)
          .as('due_request_id'),
      )
      .executeTakeFirst();
    if (!row) {
      if (healthyAt) await db.updateTable('webhooks').set(healthAfterSuccess(healthyAt)).where('id', '=', id).execute();
      return undefined;
    }
    const { due_request_id: dueRequestId, ...hook } = row;
    if (hook.backoff_until !== null && hook.backoff_until > now) return undefined;
    return { hook, dueRequestId };
  }

  /**
   * One webhook's turn: while holding its lease, send due requests, then new batches, oldest
   * first. Recording a batch's outcome and picking the next (lease renewed, due request or new
   * batch) share one transaction: one commit per batch sent (on PostgreSQL, after a success,
   * one statement).
   */
  private async turn(id: string): Promise<void> {
    if (!(await this.lease(this.db, id))) return;
    let sent: Sent | null = null;
    try {
      for (let n = 0; n < BATCHES_PER_TURN && !this.stopping; n++) {
        const last: Sent | null = sent;
        sent = null;
        const oneStatement = last?.outcome.success && dialectOf(this.db) === 'postgres';
        const { work, disabled } = oneStatement
          ? { work: await this.nextAfterSuccess(id, last!), disabled: false }
          : await this.next(id, last);
        if (disabled) forgetSubscriptions(last!.hook.workspace_id);
        if (!work) return;
        sent = await this.send(work.hook, work.request, work.body);
      }
    } finally {
      try {
        if (sent) await recordOutcome(this.ctx, sent);
      } finally {
        await this.db
          .updateTable('webhooks')
          .set({ lock_until: null, lock_owner: null })
          .where('id', '=', id)
          .where('lock_owner', '=', this.owner)
          .execute();
      }
    }
  }

  /** Records the last outcome (if any) and takes the next work, in one transaction. */
  private async next(id: string, last: Sent | null): Promise<{ work: Work | undefined; disabled: boolean }> {
    let disabled = false;
    const work = await this.db.transaction().execute(async (tx): Promise<Work | undefined> => {
      let healthyAt: string | null = null;
      if (last) {
        const recorded = await recordOutcomeIn(tx, this.ctx, last, { healthWithLease: true });
        disabled = recorded.disabled;
        if (!last.outcome.success) return undefined;
        healthyAt = recorded.healthyAt;
      }
      const leased = await this.lease(tx, id, healthyAt);
      if (!leased) return undefined;
      const due = leased.dueRequestId ? await requestById(tx, leased.dueRequestId) : undefined;
      const batch = due ? { request: due, body: await batchBodyOf(tx, due) } : await openBatch(tx, leased.hook);
      return batch ? { hook: leased.hook, ...batch } : undefined;
    });
    return { work, disabled };
  }

  /** PostgreSQL, after a success: records it and takes the next work in one statement. */
  private async nextAfterSuccess(id: string, last: Sent): Promise<Work | undefined> {
    const next = await recordSuccessAndOpenNext(this.db, {
      hook: last.hook,
      request: last.request,
      outcome: last.outcome,
      owner: this.owner,
      leaseMs: LEASE_MS,
    });
    if (!next.hook) {
      // Not leased again (disabled meanwhile, or the lease lost): the success still counts.
      if (next.recorded) await this.db.updateTable('webhooks').set(healthAfterSuccess(nowIso())).where('id', '=', id).execute();
      return undefined;
    }
    if (next.dueRequestId) {
      const due = await requestById(this.db, next.dueRequestId);
      return due ? { hook: next.hook, request: due, body: await batchBodyOf(this.db, due) } : undefined;
    }
    return next.batch ? { hook: next.hook, ...next.batch } : undefined;
  }

  /** The webhook's signing secret, decrypted once rather than at every attempt. */
  private secretOf(hook: WebhookRow): string {
    let secret = this.secrets.get(hook.secret);
    if (secret === undefined) {
      if (this.secrets.size >= 1000) this.secrets.clear();
      secret = this.ctx.secrets.open(hook.secret);
      this.secrets.set(hook.secret, secret);
    }
    return secret;
  }

  /** Sends one request (the outcome is recorded by the caller). */
  private async send(hook: WebhookRow, request: WebhookRequestRow, body: string | null): Promise<Sent> {
    if (body === null) {
      return {
        hook,
        request,
        final: true,
        outcome: { success: false, status: null, excerpt: null, error: 'The events of this request are no longer stored', durationMs: 0 },
      };
    }
    const outcome = tracingOn ? await this.sendTraced(hook, request, body) : await sendBatch(this.ctx, hook.url, this.secretOf(hook), body);
    return { hook, request, final: false, outcome };
  }

  /** The POST as a client span in the traces of the emails its events are about (the first
   *  one's its parent, the others linked), carrying that span's `traceparent` header. */
  private async sendTraced(hook: WebhookRow, request: WebhookRequestRow, body: string): Promise<SendOutcome> {
    const emailIds = [
      ...new Set(
        (JSON.parse(body) as Array<{ type: string; object: { id?: unknown } }>)
          .filter((item) => item.type.startsWith('email.') && typeof item.object?.id === 'string')
          .map((item) => item.object.id as string),
      ),
    ];
    const parents = [...new Set((await traceparentsOf(this.db, emailIds)).values())];
    const attributes = {
      ...(emailIds.length > 0 ? emailIdAttribute(emailIds) : {}),
      'postlane.webhook_id': hook.id,
      'postlane.webhook_request_id': request.id,
      'postlane.event_count': request.event_count,
    };
    return inSpan('webhook.send', { kind: SpanKind.CLIENT, parent: parents[0], links: parents.slice(1), attributes }, async (span) => {
      const outcome = await sendBatch(this.ctx, hook.url, this.secretOf(hook), body);
      span?.setAttributes(outcome.status === null ? { 'error.type': 'no_response' } : { 'http.response.status_code': outcome.status });
      if (!outcome.success) markFailed(span, outcome.error ?? 'failed');
      return outcome;
    });
  }
}

/** The next request to send for a leased webhook (body null: its events are gone). */
interface Work {
  hook: WebhookRow;
  request: WebhookRequestRow;
  body: string | null;
}

/** A webhook leased, with its request due first. */
interface Leased {
  hook: WebhookRow;
  dueRequestId: string | null;
}

/** The webhook's health after a successful delivery at `now`. */
function healthAfterSuccess(now: string) {
  return { last_used_at: now, failing_since: null, failure_notified_at: null, consecutive_failures: 0, backoff_until: null };
}

/** A request sent (or found unsendable) whose outcome is still to be recorded. */
interface Sent {
  hook: WebhookRow;
  request: WebhookRequestRow;
  outcome: SendOutcome;
  /** No retry, whatever the outcome. */
  final: boolean;
}

/**
 * The body of a request, rebuilt from the stored events (they never change, so every attempt
 * sends the same items); null when its events are no longer stored.
 */
export async function batchBodyOf(db: Executor, request: WebhookRequestRow): Promise<string | null> {
  const ids = JSON.parse(request.event_ids) as string[];
  const rows = await db.selectFrom('events').select(['id', 'type', 'data']).where('id', 'in', ids).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const items = ids.filter((id) => byId.has(id)).map((id) => batchItem(id, byId.get(id)!.type, byId.get(id)!.data));
  return items.length === 0 ? null : batchBody(items);
}

/** Moves up to 100 of a webhook's oldest queued events into a new pending request. */
export async function openBatch(tx: Executor, hook: WebhookRow): Promise<OpenedBatch | undefined> {
  if (dialectOf(tx) === 'postgres') return openBatchInOneStatement(tx, hook);
  const queued = await tx
    .selectFrom('webhook_outbox as o')
    .leftJoin('events as e', 'e.id', 'o.event_id')
    .select(['o.id as outbox_id', 'o.event_id', 'e.type', 'e.data'])
    .where('o.webhook_id', '=', hook.id)
    .orderBy('o.id')
    .limit(BATCH_SIZE)
    .execute();
  if (queued.length === 0) return undefined;
  await tx
    .deleteFrom('webhook_outbox')
    .where(
      'id',
      'in',
      queued.map((q) => q.outbox_id),
    )
    .execute();
  const events = queued.filter((q) => q.type !== null && q.data !== null); // an event removed since: nothing to send
  if (events.length === 0) return undefined;
  const request = pendingRequest(
    hook,
    events.map((e) => e.event_id),
  );
  await tx.insertInto('webhook_requests').values(request).execute();
  return { request, body: batchBody(events.map((e) => batchItem(e.event_id, e.type!, e.data!))) };
}

const requestById = async (db: Executor, id: string): Promise<WebhookRequestRow | undefined> => (await requestByIdQuery(db, { id }))[0];
const requestByIdQuery = preparedQuery((db, p: { id: string }) => db.selectFrom('webhook_requests').selectAll().where('id', '=', p.id));

/**
 * Records one attempt: the request's new state (delivered; retrying at the next time of the
 * schedule; failed once attempts run out or after a resend by hand), the attempt itself, and
 * the webhook's health (last_used_at on success; disabled after 3 days without one).
 */
async function recordOutcome(ctx: AppContext, sent: Sent): Promise<void> {
  const { disabled } = await ctx.db.transaction().execute((tx) => recordOutcomeIn(tx, ctx, sent));
  if (disabled) forgetSubscriptions(sent.hook.workspace_id);
}

interface Recorded {
  /** The attempt disabled the webhook. */
  disabled: boolean;
  /** With `healthWithLease`, when a success was recorded: the time the caller records the webhook healthy at. */
  healthyAt: string | null;
}

/**
 * recordOutcome inside the caller's transaction. With `healthWithLease`, a success leaves the
 * webhook's health to the caller, which writes it with its lease renewal (one UPDATE less).
 */
async function recordOutcomeIn(tx: Executor, ctx: AppContext, sent: Sent, { healthWithLease = false } = {}): Promise<Recorded> {
  const { hook, request, outcome, final } = sent;
  const nowMsValue = Math.floor(nowMs());
  const now = isoFromMs(nowMsValue);
  const attempt = request.attempts + 1;
  if (outcome.success) {
    // A request of a webhook deleted meanwhile went with it: nothing is recorded.
    if (!(await recordAttempt(tx, sent, { status: 'delivered', next_attempt_at: null, delivered_at: now }, now)))
      return { disabled: false, healthyAt: null };
    if (healthWithLease) return { disabled: false, healthyAt: now };
    await tx.updateTable('webhooks').set(healthAfterSuccess(now)).where('id', '=', hook.id).execute();
    return { disabled: false, healthyAt: null };
  }
  const wait = final || request.manual === 1 ? null : retryDelayMs(attempt);
  let state: RequestState =
    wait === null
      ? { status: 'failed', next_attempt_at: null, delivered_at: request.delivered_at }
      : { status: 'retrying', next_attempt_at: nowMsValue + wait, delivered_at: request.delivered_at };
  const current = await tx
    .selectFrom('webhooks')
    .select(['failing_since', 'consecutive_failures', 'enabled', 'failure_notified_at'])
    .where('id', '=', hook.id)
    .executeTakeFirst();
  if (!current) return { disabled: false, healthyAt: null }; // deleted meanwhile: its requests went with it
  // Disabled while this attempt was in flight: nothing more is tried.
  if (current.enabled !== 1 && state.status === 'retrying') state = { ...state, status: 'failed', next_attempt_at: null };
  if (!(await recordAttempt(tx, sent, state, now))) return { disabled: false, healthyAt: null };
  const disabled = await recordFailure(tx, ctx, sent, current, nowMsValue, now, attempt);
  return { disabled, healthyAt: null };
}

type RequestState = Pick<WebhookRequestRow, 'status' | 'next_attempt_at' | 'delivered_at'>;

/** The request's new state and its attempt row; false when the request is gone. */
async function recordAttempt(tx: Executor, { request, outcome }: Sent, state: RequestState, now: string): Promise<boolean> {
  const attempt = request.attempts + 1;
  const changes = {
    ...state,
    attempts: attempt,
    manual: 0,
    response_status: outcome.status,
    response_body: outcome.excerpt,
    duration_ms: outcome.durationMs,
    error: outcome.error,
    last_attempt_at: now,
    updated_at: now,
  };
  const attemptRow = {
    attempt,
    manual: request.manual,
    response_status: outcome.status,
    response_body: outcome.excerpt,
    duration_ms: outcome.durationMs,
    error: outcome.error,
    created_at: now,
  };
  if (dialectOf(tx) === 'postgres') {
    // One statement: the attempt is inserted only when the request was updated.
    const result = await tx
      .with('updated', (db) => db.updateTable('webhook_requests').set(changes).where('id', '=', request.id).returning('id'))
      .insertInto('webhook_request_attempts')
      .columns(['request_id', 'attempt', 'manual', 'response_status', 'response_body', 'duration_ms', 'error', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('updated')
          .select((s) => [
            'updated.id',
            s.cast(s.val(attemptRow.attempt), 'integer').as('attempt'),
            s.cast(s.val(attemptRow.manual), 'integer').as('manual'),
            s.cast(s.val(attemptRow.response_status), 'integer').as('response_status'),
            s.cast(s.val(attemptRow.response_body), 'text').as('response_body'),
            s.cast(s.val(attemptRow.duration_ms), 'integer').as('duration_ms'),
            s.cast(s.val(attemptRow.error), 'text').as('error'),
            s.cast(s.val(attemptRow.created_at), 'text').as('created_at'),
          ]),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }
  const updated = await tx.updateTable('webhook_requests').set(changes).where('id', '=', request.id).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return false;
  await tx
    .insertInto('webhook_request_attempts')
    .values({ request_id: request.id, ...attemptRow })
    .execute();
  return true;
}

/** A failed attempt's effect on the webhook: owners told, backoff, or disabled (true). */
async function recordFailure(
  tx: Executor,
  ctx: AppContext,
  { hook, request, outcome }: Sent,
  current: { failing_since: number | null; consecutive_failures: number; enabled: number; failure_notified_at: string | null },
  nowMsValue: number,
  now: string,
  attempt: number,
): Promise<boolean> {
  const failingSince = current.failing_since ?? nowMsValue;
  const failures = current.consecutive_failures + 1;
  // The owners are emailed at a request's 3rd failure (once per run of failures: a dead
  // endpoint's backlog would otherwise send one per batch) and when the webhook is disabled
  // (https://emailit.com/docs/webhooks/retries-and-failures.md).
  let notifiedAt = current.failure_notified_at;
  if (attempt === 3 && !request.manual) {
    ctx.log.warn(
      { webhookId: hook.id, requestId: request.id, workspaceId: hook.workspace_id },
      'webhook request failed for the third time',
    );
    if (notifiedAt === null) {
      await notifyWorkspaceOwners(tx, hook.workspace_id, failingNotice(hook, request, outcome));
      notifiedAt = now;
    }
  }
  if (current.enabled === 1 && shouldDisable(failingSince, nowMsValue)) {
    await tx
      .updateTable('webhooks')
      .set({
        enabled: 0,
        disabled_reason: 'failing',
        failing_since: failingSince,
        failure_notified_at: notifiedAt,
        consecutive_failures: failures,
        backoff_until: null,
        updated_at: now,
      })
      .where('id', '=', hook.id)
      .execute();
    await stopDeliveries(tx, hook.id, 'Webhook was disabled after 3 days without a successful delivery');
    ctx.log.warn({ webhookId: hook.id, workspaceId: hook.workspace_id }, 'webhook disabled after 3 days without a successful delivery');
    await notifyWorkspaceOwners(tx, hook.workspace_id, disabledNotice(hook, outcome));
    return true;
  }
  await tx
    .updateTable('webhooks')
    .set({
      failing_since: failingSince,
      failure_notified_at: notifiedAt,
      consecutive_failures: failures,
      backoff_until: nowMsValue + failureBackoffMs(failures),
    })
    .where('id', '=', hook.id)
    .execute();
  return false;
}

/**
 * Retention: requests are kept 30 days (resendable for 7); queued rows of webhooks deleted or
 * disabled meanwhile (never to be sent) are dropped.
 */
export async function pruneWebhookRequests(db: Db): Promise<void> {
  const now = nowMs();
  await db
    .deleteFrom('webhook_outbox')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhooks as w')
            .select(sql`1`.as('one'))
            .whereRef('w.id', '=', 'webhook_outbox.webhook_id')
            .where('w.enabled', '=', 1),
        ),
      ),
    )
    .execute();
  await db
    .deleteFrom('webhook_requests')
    .where('created_at', '<', isoFromMs(now - REQUEST_RETENTION_MS))
    .execute();
}
