// The dispatcher's hot steps on PostgreSQL, one round trip each. A webhook sends one request
// at a time, so its rate is one batch per (send + the writes between two sends): written as
// separate statements, those writes cost more than the send itself on a busy machine.
// - openBatchInOneStatement: the oldest queued rows are deleted, joined with their events (an
//   event removed since has nothing to send) and written as a pending request.
// - recordSuccessAndOpenNext: after a success, the request's new state, its attempt, the
//   webhook's health and lease renewal, its next due request, and (when none is due) the next
//   batch — all in one statement, so one atomic commit and no transaction round trips.
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { isoFromMs, nowIso, nowMs } from '../../platform/clock.ts';
import { BATCH_SIZE, batchBody, batchItem } from './policy.ts';
import type { SendOutcome } from './send.ts';
import type { WebhookRequestRow, WebhookRow } from './tables.ts';

export interface OpenedBatch {
  request: WebhookRequestRow;
  body: string;
}

/** A new pending request of `hook` carrying `eventIds`, due now (so a crash leaves it to resend). */
export function pendingRequest(hook: WebhookRow, eventIds: string[]): WebhookRequestRow {
  const now = nowIso();
  return {
    id: newId('whr'),
    webhook_id: hook.id,
    workspace_id: hook.workspace_id,
    status: 'pending',
    attempts: 0,
    manual: 0,
    event_ids: JSON.stringify(eventIds),
    event_count: eventIds.length,
    response_status: null,
    response_body: null,
    duration_ms: null,
    error: null,
    next_attempt_at: Math.floor(nowMs()),
    last_attempt_at: null,
    delivered_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** CTEs `taken`, `items` and `created` that move the next batch into `draft` when `when` holds. */
function batchParts(hook: WebhookRow, draft: WebhookRequestRow, when: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`taken as (
      delete from webhook_outbox where id in (select id from webhook_outbox where webhook_id = ${hook.id} order by id limit ${BATCH_SIZE}) and ${when}
      returning id, event_id
    ), items as (
      select taken.id, taken.event_id, e.type, e.data from taken join events e on e.id = taken.event_id
    ), created as (
      insert into webhook_requests (id, webhook_id, workspace_id, status, attempts, manual, event_ids, event_count, next_attempt_at, created_at, updated_at)
      select ${draft.id}, ${hook.id}, ${hook.workspace_id}, 'pending', 0, 0, to_json(array_agg(event_id order by id))::text, count(*),
        ${draft.next_attempt_at}::bigint, ${draft.created_at}, ${draft.updated_at}
      from items having count(*) > 0
    )`;
}

interface Item {
  event_id: string;
  type: string;
  data: string;
}

function opened(draft: WebhookRequestRow, items: Item[]): OpenedBatch | undefined {
  if (items.length === 0) return undefined;
  const eventIds = items.map((item) => item.event_id);
  return {
    request: { ...draft, event_ids: JSON.stringify(eventIds), event_count: eventIds.length },
    body: batchBody(items.map((item) => batchItem(item.event_id, item.type, item.data))),
  };
}

/** Moves up to 100 of the webhook's oldest queued events into a new pending request. */
export async function openBatchInOneStatement(tx: Executor, hook: WebhookRow): Promise<OpenedBatch | undefined> {
  const draft = pendingRequest(hook, []);
  const { rows } = await sql<Item>`with ${batchParts(hook, draft, sql`true`)} select event_id, type, data from items order by id`.execute(
    tx,
  );
  return opened(draft, rows);
}

export interface SuccessThenNext {
  /** The request was still there and is now recorded as delivered. */
  recorded: boolean;
  /** The webhook, leased again (null: disabled, taken over or gone)... */
  hook: WebhookRow | null;
  /** ...its request due first, to send before anything new... */
  dueRequestId: string | null;
  /** ...or else its next batch (none when nothing is queued). */
  batch?: OpenedBatch;
}

/** After `request` succeeded: records it, renews the lease of `hook` and takes the next work. */
export async function recordSuccessAndOpenNext(
  db: Executor,
  p: { hook: WebhookRow; request: WebhookRequestRow; outcome: SendOutcome; owner: string; leaseMs: number },
): Promise<SuccessThenNext> {
  const { hook, request, outcome, owner } = p;
  const nowMsValue = Math.floor(nowMs());
  const now = isoFromMs(nowMsValue);
  const attempt = request.attempts + 1;
  const draft = pendingRequest(hook, []);
  const result = await sql<{ recorded: number; leased: string | null; items: string | null }>`
    with updated as (
      update webhook_requests set status = 'delivered', next_attempt_at = null, delivered_at = ${now}, attempts = ${attempt}, manual = 0,
        response_status = ${outcome.status}::integer, response_body = ${outcome.excerpt}::text, duration_ms = ${outcome.durationMs}::integer,
        error = ${outcome.error}::text, last_attempt_at = ${now}, updated_at = ${now}
      where id = ${request.id}
      returning id
    ), attempt as (
      insert into webhook_request_attempts (request_id, attempt, manual, response_status, response_body, duration_ms, error, created_at)
      select id, ${attempt}::integer, ${request.manual}::integer, ${outcome.status}::integer, ${outcome.excerpt}::text, ${outcome.durationMs}::integer, ${outcome.error}::text, ${now}
      from updated
    ), leased as (
      update webhooks set lock_until = ${nowMsValue + p.leaseMs}::bigint, lock_owner = ${owner},
        last_used_at = ${now}, failing_since = null, failure_notified_at = null, consecutive_failures = 0, backoff_until = null
      where id = ${hook.id} and enabled = 1 and (lock_until is null or lock_until < ${nowMsValue}::bigint or lock_owner = ${owner})
        and exists (select 1 from updated)
      returning *, (
        -- The statement's snapshot still shows the request just sent as due: it is left out.
        select r.id from webhook_requests r
        where r.webhook_id = webhooks.id and r.id <> ${request.id} and r.next_attempt_at is not null and r.next_attempt_at <= ${nowMsValue}::bigint
        order by r.created_at, r.id limit 1
      ) as due_request_id
    ), ${batchParts(hook, draft, sql`exists (select 1 from leased where due_request_id is null)`)}
    select (select count(*) from updated)::integer as recorded,
      (select row_to_json(leased)::text from leased) as leased,
      (select json_agg(json_build_object('event_id', event_id, 'type', type, 'data', data) order by id)::text from items) as items`.execute(
    db,
  );
  const row = result.rows[0];
  const leased = row.leased ? (JSON.parse(row.leased) as WebhookRow & { due_request_id: string | null }) : null;
  if (!leased) return { recorded: row.recorded > 0, hook: null, dueRequestId: null };
  const { due_request_id: dueRequestId, ...leasedHook } = leased;
  return { recorded: true, hook: leasedHook, dueRequestId, batch: opened(draft, row.items ? (JSON.parse(row.items) as Item[]) : []) };
}
