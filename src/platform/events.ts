// The append-only event log. Every state change a user can subscribe to is recorded with
// emitEvent inside the caller's transaction, so an event exists exactly when its change does.
// Consumers that must react (webhook fan-out, automations) register a subscriber that runs
// in that same transaction, typically enqueueing a job: nothing is lost between the two.
import type { Executor } from './db/database.ts';
import { newId } from './ids.ts';
import { nowIso } from './clock.ts';

export interface EmittedEvent {
  id: string;
  workspaceId: string;
  type: string;
  object: Record<string, unknown>;
  createdAt: string;
}

type EventSubscriber = (tx: Executor, event: EmittedEvent) => Promise<void>;
const subscribers: EventSubscriber[] = [];

export function subscribeToEvents(subscriber: EventSubscriber): void {
  if (!subscribers.includes(subscriber)) subscribers.push(subscriber);
}

export async function emitEvent(
  tx: Executor,
  workspaceId: string,
  type: string,
  object: Record<string, unknown>,
): Promise<EmittedEvent> {
  const event: EmittedEvent = { id: newId('evt'), workspaceId, type, object, createdAt: nowIso() };
  await tx
    .insertInto('events')
    .values({ id: event.id, workspace_id: workspaceId, type, data: JSON.stringify(object), created_at: event.createdAt })
    .execute();
  for (const subscriber of subscribers) await subscriber(tx, event);
  return event;
}
