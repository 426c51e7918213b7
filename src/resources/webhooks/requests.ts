// Webhook requests (`whr_`): each batch sent to a webhook, with its state and every attempt;
// readable, and resendable by hand for 7 days
// (https://emailit.com/docs/webhooks/retries-and-failures.md). Also the test delivery.
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import { newId, looksLikeId } from '../../platform/ids.ts';
import { ApiError, plainError } from '../../platform/http/errors.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { isCustomEventType, PAYLOAD_SHAPES, sampleEventObject } from '../events/service.ts';
import { batchBody, batchItem, MAX_ATTEMPTS, RESEND_WINDOW_MS } from './policy.ts';
import { batchBodyOf } from './dispatcher.ts';
import { nudgeDispatchers } from './queue.ts';
import { sendBatch } from './send.ts';
import { resolveWebhook } from './service.ts';
import type { WebhookRequestRow } from './tables.ts';

export function webhookRequestObject(row: WebhookRequestRow) {
  return {
    object: 'webhook_request' as const,
    id: row.id,
    webhook_id: row.webhook_id,
    status: row.status,
    attempts: row.attempts,
    max_attempts: MAX_ATTEMPTS,
    event_count: row.event_count,
    event_ids: JSON.parse(row.event_ids) as string[],
    response_status: row.response_status,
    response_body: row.response_body,
    duration_ms: row.duration_ms,
    error: row.error,
    next_attempt_at: row.next_attempt_at === null ? null : isoFromMs(row.next_attempt_at),
    last_attempt_at: row.last_attempt_at,
    delivered_at: row.delivered_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const listSpec: ListSpec = {
  fields: {
    status: { type: 'enum', values: ['pending', 'retrying', 'delivered', 'failed'] },
    response_status: { type: 'number' },
    attempts: { type: 'number' },
    created_at: { type: 'date' },
    updated_at: { type: 'date' },
  },
  sortConvention: 'order-direction',
};

export async function listWebhookRequests(db: Db, workspaceId: string, idOrName: string, query: Query, requestUrl: string) {
  const hook = await resolveWebhook(db, workspaceId, idOrName);
  const base = db.selectFrom('webhook_requests').selectAll().where('webhook_id', '=', hook.id);
  return pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, 10, webhookRequestObject);
}

async function findRequest(db: Db, webhookId: string, requestId: string): Promise<WebhookRequestRow> {
  const row = looksLikeId(requestId, 'whr')
    ? await db.selectFrom('webhook_requests').selectAll().where('id', '=', requestId).where('webhook_id', '=', webhookId).executeTakeFirst()
    : undefined;
  if (!row) throw plainError(404, 'Webhook request not found');
  return row;
}

/** One request with every attempt (oldest first) and the items it carries. */
export async function getWebhookRequest(db: Db, workspaceId: string, idOrName: string, requestId: string) {
  const hook = await resolveWebhook(db, workspaceId, idOrName);
  const row = await findRequest(db, hook.id, requestId);
  const attempts = await db.selectFrom('webhook_request_attempts').selectAll().where('request_id', '=', row.id).orderBy('id').execute();
  const body = await batchBodyOf(db, row);
  return {
    ...webhookRequestObject(row),
    payload: body === null ? null : JSON.parse(body),
    attempt_history: attempts.map((a) => ({
      attempt: a.attempt,
      manual: a.manual === 1,
      response_status: a.response_status,
      response_body: a.response_body,
      duration_ms: a.duration_ms,
      error: a.error,
      created_at: a.created_at,
    })),
  };
}

/**
 * Queues a request to be sent again now. A retrying request is tried at once and keeps its
 * schedule; a delivered or failed one gets one more attempt (failed again if it fails).
 */
export async function resendWebhookRequest(db: Db, workspaceId: string, idOrName: string, requestId: string) {
  const hook = await resolveWebhook(db, workspaceId, idOrName);
  const row = await findRequest(db, hook.id, requestId);
  if (nowMs() - Date.parse(row.created_at) > RESEND_WINDOW_MS) {
    throw plainError(422, 'Webhook requests can be resent only within 7 days of their creation');
  }
  if (hook.enabled !== 1) throw plainError(422, 'The webhook is disabled; enable it before resending requests');
  if (row.status === 'pending') throw plainError(409, 'The webhook request is already queued for delivery');
  const now = Math.floor(nowMs());
  const changes: Partial<WebhookRequestRow> =
    row.status === 'retrying'
      ? { next_attempt_at: now, updated_at: nowIso() }
      : { status: 'pending', manual: 1, next_attempt_at: now, updated_at: nowIso() };
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('webhook_requests').set(changes).where('id', '=', row.id).execute();
    // A resend by hand goes out now, even while new batches wait after a recent failure.
    await tx.updateTable('webhooks').set({ backoff_until: null }).where('id', '=', hook.id).execute();
  });
  nudgeDispatchers();
  return webhookRequestObject({ ...row, ...changes });
}

/** Posts a sample event of `type` to the webhook now and reports the endpoint's answer. */
export async function testWebhook(ctx: AppContext, workspaceId: string, idOrName: string, type: string) {
  const hook = await resolveWebhook(ctx.db, workspaceId, idOrName);
  const eventType = type.trim();
  if (!PAYLOAD_SHAPES[eventType] && !isCustomEventType(eventType)) {
    throw new ApiError(400, {
      error: `Unknown event type "${eventType}"`,
      message: 'Use a system event type such as email.delivered, or a w:/c: custom event type',
    });
  }
  const eventId = newId('evt');
  const body = batchBody([batchItem(eventId, eventType, JSON.stringify(sampleEventObject(eventType)))]);
  const outcome = await sendBatch(ctx, hook.url, ctx.secrets.open(hook.secret), body);
  return {
    object: 'webhook_test' as const,
    webhook_id: hook.id,
    event_id: eventId,
    type: eventType,
    success: outcome.success,
    status_code: outcome.status,
    response_body: outcome.excerpt,
    duration_ms: outcome.durationMs,
    error: outcome.error,
  };
}
