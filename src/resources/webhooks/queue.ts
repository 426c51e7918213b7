// Fan-out: every event is matched against the workspace's enabled webhooks inside the event's
// own transaction, and one outbox row per matching webhook is written there too (outbox), so
// an event is queued exactly when it exists. A disabled webhook gets nothing: events that
// happen while it is disabled are never sent.
import type { Executor } from '../../platform/db/database.ts';
import type { EmittedEvent } from '../../platform/events.ts';
import { nowIso } from '../../platform/clock.ts';
import { isCustomEventType, NOT_IN_ALL_EVENTS } from '../events/payloads.ts';
import { matchesFilter, type WebhookFilter } from './filter.ts';

interface Subscription {
  updatedAt: string;
  allEvents: boolean;
  events: Set<string>;
  filter: WebhookFilter | null;
}

// Parsed subscriptions, keyed by webhook id and refreshed when the row's updated_at changes.
const parsed = new Map<string, Subscription>();

export function forgetWebhook(id: string): void {
  parsed.delete(id);
}

function subscriptionOf(row: { id: string; updated_at: string; all_events: number; events: string; filter: string | null }): Subscription {
  const cached = parsed.get(row.id);
  if (cached && cached.updatedAt === row.updated_at) return cached;
  const subscription = {
    updatedAt: row.updated_at,
    allEvents: row.all_events === 1,
    events: new Set(JSON.parse(row.events) as string[]),
    filter: row.filter === null ? null : (JSON.parse(row.filter) as WebhookFilter),
  };
  if (parsed.size > 10_000) parsed.clear();
  parsed.set(row.id, subscription);
  return subscription;
}

/** Whether a webhook subscribes to an event type (`all_events` covers system types only). */
export function subscribesTo(subscription: Pick<Subscription, 'allEvents' | 'events'>, type: string): boolean {
  if (subscription.events.has(type)) return true;
  if (isCustomEventType(type)) return subscription.events.has(`${type.slice(0, 2)}*`);
  return subscription.allEvents && !NOT_IN_ALL_EVENTS.has(type);
}

/** The event subscriber: queue the event for every enabled webhook it matches. */
export async function queueEventForWebhooks(tx: Executor, event: EmittedEvent): Promise<void> {
  const hooks = await tx
    .selectFrom('webhooks')
    .innerJoin('workspaces', 'workspaces.id', 'webhooks.workspace_id')
    .select(['webhooks.id', 'webhooks.updated_at', 'webhooks.all_events', 'webhooks.events', 'webhooks.filter', 'workspaces.plan'])
    .where('webhooks.workspace_id', '=', event.workspaceId)
    .where('webhooks.enabled', '=', 1)
    .execute();
  if (hooks.length === 0) return;
  const rows = [];
  for (const hook of hooks) {
    const subscription = subscriptionOf(hook);
    if (!subscribesTo(subscription, event.type)) continue;
    // On Pay as you go, existing filters are ignored (addendum §5.5).
    if (subscription.filter && hook.plan !== 'payg' && !matchesFilter(subscription.filter, event.object)) continue;
    rows.push({ webhook_id: hook.id, event_id: event.id, created_at: event.createdAt });
  }
  if (rows.length === 0) return;
  await tx.insertInto('webhook_outbox').values(rows).execute();
  nudgeDispatchers();
}

/**
 * Stops what is waiting for a webhook (disabled, by hand or for failing): its outbox is
 * emptied and requests waiting for an attempt are marked failed (`reason`); null only
 * empties the outbox (enabling again must not send what queued up before).
 */
export async function stopDeliveries(tx: Executor, webhookId: string, reason: string | null): Promise<void> {
  await tx.deleteFrom('webhook_outbox').where('webhook_id', '=', webhookId).execute();
  if (reason === null) return;
  await tx
    .updateTable('webhook_requests')
    .set({ status: 'failed', next_attempt_at: null, manual: 0, error: reason, updated_at: nowIso() })
    .where('webhook_id', '=', webhookId)
    .where('status', 'in', ['pending', 'retrying'])
    .execute();
}

// Wakes the dispatchers of this process. The subscriber runs before the event's transaction
// commits, so a second wake follows shortly after; other processes find the work by polling.
type Waker = () => void;
const wakers = new Set<Waker>();
let delayed: NodeJS.Timeout | null = null;

export function onWebhookWork(waker: Waker): () => void {
  wakers.add(waker);
  return () => wakers.delete(waker);
}

export function nudgeDispatchers(): void {
  for (const wake of wakers) wake();
  delayed ??= setTimeout(() => {
    delayed = null;
    for (const wake of wakers) wake();
  }, 20);
  delayed.unref?.();
}
