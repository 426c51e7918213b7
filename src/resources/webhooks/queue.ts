// Fan-out: every event is matched against the workspace's enabled webhooks inside the event's
// own transaction, and one outbox row per matching webhook is written there too (outbox), so
// an event is queued exactly when it exists. A disabled webhook gets nothing: events that
// happen while it is disabled are never sent.
//
// Emitting must stay cheap (a campaign emits thousands of events), so each process keeps the
// workspaces' subscriptions for a second: a workspace without matching webhooks costs no query,
// one with matching webhooks one INSERT (on PostgreSQL, a part of the event's own statement). Changes made in this process apply at once; changes
// made by another process within SUBSCRIPTIONS_TTL_MS. A row queued meanwhile for a webhook
// another process disabled or deleted is never sent: workers only serve enabled webhooks,
// enabling one again drops what was queued, and rows of deleted webhooks are pruned.
import type { Executor } from '../../platform/db/database.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import type { EmittedEvent, EventSubscriber } from '../../platform/events.ts';
import { nowIso } from '../../platform/clock.ts';
import { isCustomEventType, NOT_IN_ALL_EVENTS } from '../events/service.ts';
import { matchesFilter, type WebhookFilter } from '../../platform/event-filter.ts';

export const SUBSCRIPTIONS_TTL_MS = 1000;

interface Subscription {
  id: string;
  allEvents: boolean;
  events: Set<string>;
  /** null when there is none, or when the plan ignores filters (Pay as you go). */
  filter: WebhookFilter | null;
}

interface WorkspaceSubscriptions {
  loadedAt: number;
  hooks: Subscription[];
}

const subscriptions = new Map<string, WorkspaceSubscriptions>();

/** Drops a workspace's cached subscriptions (after any change to its webhooks). */
export function forgetSubscriptions(workspaceId: string): void {
  subscriptions.delete(workspaceId);
}

async function loadSubscriptions(tx: Executor, workspaceId: string): Promise<WorkspaceSubscriptions> {
  const rows = await tx
    .selectFrom('webhooks')
    .innerJoin('workspaces', 'workspaces.id', 'webhooks.workspace_id')
    .select(['webhooks.id', 'webhooks.all_events', 'webhooks.events', 'webhooks.filter', 'workspaces.plan'])
    .where('webhooks.workspace_id', '=', workspaceId)
    .where('webhooks.enabled', '=', 1)
    .execute();
  return {
    loadedAt: Date.now(),
    hooks: rows.map((row) => ({
      id: row.id,
      allEvents: row.all_events === 1,
      events: new Set(JSON.parse(row.events) as string[]),
      // On Pay as you go, existing filters are ignored.
      filter: row.filter === null || row.plan === 'payg' ? null : (JSON.parse(row.filter) as WebhookFilter),
    })),
  };
}

/** Whether a webhook subscribes to an event type (`all_events` covers system types only). */
export function subscribesTo(subscription: Pick<Subscription, 'allEvents' | 'events'>, type: string): boolean {
  if (subscription.events.has(type)) return true;
  if (isCustomEventType(type)) return subscription.events.has(`${type.slice(0, 2)}*`);
  return subscription.allEvents && !NOT_IN_ALL_EVENTS.has(type);
}

// On SQLite, one statement queues the event for all its webhooks: a multi-row INSERT, compiled
// once per number of webhooks (a workspace has at most 100).
type OutboxParams = Record<string, string>;
const outboxInserts = new Map<number, (db: Executor, params: OutboxParams) => Promise<unknown[]>>();
function outboxInsert(count: number) {
  let insert = outboxInserts.get(count);
  if (!insert) {
    insert = preparedQuery((db, p: OutboxParams) =>
      db
        .insertInto('webhook_outbox')
        .values(Array.from({ length: count }, (_, i) => ({ webhook_id: p[`webhook${i}`], event_id: p.eventId, created_at: p.createdAt }))),
    );
    outboxInserts.set(count, insert);
  }
  return insert;
}

/** The enabled webhooks of the event's workspace that the event matches. */
async function matchingWebhooks(tx: Executor, event: EmittedEvent): Promise<string[]> {
  let current = subscriptions.get(event.workspaceId);
  if (!current || Date.now() - current.loadedAt > SUBSCRIPTIONS_TTL_MS) {
    current = await loadSubscriptions(tx, event.workspaceId);
    if (subscriptions.size > 10_000) subscriptions.clear();
    subscriptions.set(event.workspaceId, current);
  }
  const matching: string[] = [];
  for (const hook of current.hooks) {
    if (subscribesTo(hook, event.type) && (hook.filter === null || matchesFilter(hook.filter, event.object))) matching.push(hook.id);
  }
  return matching;
}

// On PostgreSQL, the outbox rows of a batch of events from arrays, in the order of the events
// (a webhook's events are sent in outbox order), written in the events' own statement.
const OUTBOX_ROWS =
  'insert into webhook_outbox (webhook_id, event_id, created_at) select webhook_id, event_id, created_at ' +
  'from unnest($1::text[], $2::text[], $3::text[]) with ordinality as o(webhook_id, event_id, created_at, n) order by n';

/** The event subscriber: queue the event for every enabled webhook it matches. */
export const webhookFanOut: EventSubscriber = {
  async react(tx, event) {
    const matching = await matchingWebhooks(tx, event);
    if (matching.length === 0) return;
    const params: OutboxParams = { eventId: event.id, createdAt: event.createdAt };
    matching.forEach((webhookId, i) => (params[`webhook${i}`] = webhookId));
    await outboxInsert(matching.length)(tx, params);
    nudgeDispatchers();
  },
  async plan(tx, events) {
    const webhookIds: string[] = [];
    const eventIds: string[] = [];
    const createdAts: string[] = [];
    for (const event of events) {
      for (const webhookId of await matchingWebhooks(tx, event)) {
        webhookIds.push(webhookId);
        eventIds.push(event.id);
        createdAts.push(event.createdAt);
      }
    }
    if (webhookIds.length === 0) return null;
    nudgeDispatchers();
    return { writes: [{ sql: OUTBOX_ROWS, values: [webhookIds, eventIds, createdAts] }] };
  },
};

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
// commits, and a burst of events needs one wake, not one per event: the wake comes a few
// milliseconds later, once per burst. Other processes find the work by polling.
type Waker = () => void;
const wakers = new Set<Waker>();
let scheduled: NodeJS.Timeout | null = null;
const WAKE_DELAY_MS = 10;

export function onWebhookWork(waker: Waker): () => void {
  wakers.add(waker);
  return () => wakers.delete(waker);
}

export function nudgeDispatchers(): void {
  if (scheduled || wakers.size === 0) return;
  scheduled = setTimeout(() => {
    scheduled = null;
    for (const wake of wakers) wake();
  }, WAKE_DELAY_MS);
  scheduled.unref?.();
}
