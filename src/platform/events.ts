// The append-only event log. Every state change a user can subscribe to is recorded with
// emitEvent inside the caller's transaction, so an event exists exactly when its change does.
// Consumers that must react (webhook fan-out, automations) register a subscriber that runs
// in that same transaction, typically enqueueing a job: nothing is lost between the two.
import type { Executor } from './db/database.ts';
import { newId } from './ids.ts';
import { nowIso } from './clock.ts';
import { preparedQuery } from './db/prepared.ts';

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

const insertEvent = preparedQuery((db, p: { id: string; workspaceId: string; type: string; data: string; createdAt: string }) =>
  db.insertInto('events').values({ id: p.id, workspace_id: p.workspaceId, type: p.type, data: p.data, created_at: p.createdAt }),
);

export async function emitEvent(
  tx: Executor,
  workspaceId: string,
  type: string,
  object: Record<string, unknown>,
): Promise<EmittedEvent> {
  const event: EmittedEvent = { id: newId('evt'), workspaceId, type, object, createdAt: nowIso() };
  await insertEvent(tx, { id: event.id, workspaceId, type, data: JSON.stringify(object), createdAt: event.createdAt });
  for (const subscriber of subscribers) await subscriber(tx, event);
  return event;
}
