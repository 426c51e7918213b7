// The append-only event log. Every state change a user can subscribe to is recorded with
// emitEvent inside the caller's transaction, so an event exists exactly when its change does.
// Consumers that must react (webhook fan-out, automations) register a subscriber that runs
// in that same transaction, typically enqueueing a job: nothing is lost between the two.
//
// On PostgreSQL every statement is a round trip, and an email.delivered event used to cost
// four (the event, the automation outcome, the trigger lookup, the webhook outbox) from an
// emitter that waits for each. There, subscribers give their reaction as SQL instead, and the
// event with all its reactions is ONE statement: the writes as data-modifying CTEs of the
// event's INSERT (they all run, in the same snapshot, or none does), the reads as its SELECT.
// SQLite runs in-process, where a statement costs microseconds: subscribers run their own.
import { CompiledQuery } from 'kysely';
import { dialectOf, type Executor } from './db/database.ts';
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

/** A statement with its values; placeholders are numbered $1… within the part. */
export interface SqlPart {
  sql: string;
  values: unknown[];
}

/** A subscriber's reaction as parts of the event's statement (PostgreSQL). */
export interface PlannedReaction {
  /** INSERT, UPDATE or DELETE statements, run with the event's INSERT. */
  writes?: SqlPart[];
  /** A SELECT run in the same statement; its rows are handed to `then`, in the transaction. */
  read?: SqlPart & { then(tx: Executor, rows: Array<Record<string, unknown>>): Promise<void> };
}

export interface EventSubscriber {
  /** Reacts with statements of its own, in the emitting transaction (SQLite). */
  react(tx: Executor, event: EmittedEvent): Promise<void>;
  /** The same reaction as SQL for the event's own statement (PostgreSQL); null: nothing to do. */
  plan(tx: Executor, event: EmittedEvent): Promise<PlannedReaction | null>;
}

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
  const data = JSON.stringify(object);
  if (dialectOf(tx) === 'postgres') {
    await emitInOneStatement(tx, event, data);
    return event;
  }
  await insertEvent(tx, { id: event.id, workspaceId, type, data, createdAt: event.createdAt });
  for (const subscriber of subscribers) await subscriber.react(tx, event);
  return event;
}

const EVENT_INSERT = 'insert into events (id, workspace_id, type, data, created_at) values ($1, $2, $3, $4, $5)';

async function emitInOneStatement(tx: Executor, event: EmittedEvent, data: string): Promise<void> {
  const reactions: PlannedReaction[] = [];
  for (const subscriber of subscribers) {
    const reaction = await subscriber.plan(tx, event);
    if (reaction) reactions.push(reaction);
  }
  const values: unknown[] = [event.id, event.workspaceId, event.type, data, event.createdAt];
  // A part's own $n becomes $(n + the values before it) in the whole statement.
  const place = (part: SqlPart) => {
    const offset = values.length;
    values.push(...part.values);
    return part.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
  };
  const ctes: string[] = [];
  const reads: Array<NonNullable<PlannedReaction['read']>> = [];
  for (const reaction of reactions) {
    for (const write of reaction.writes ?? []) ctes.push(`w${ctes.length} as (${place(write)})`);
    if (reaction.read) reads.push(reaction.read);
  }
  let text: string;
  if (reads.length === 0) text = ctes.length === 0 ? EVENT_INSERT : `with ${ctes.join(', ')} ${EVENT_INSERT}`;
  else {
    ctes.unshift(`event as (${EVENT_INSERT})`);
    // Each read's rows as JSON, tagged with the read they answer.
    const selects = reads.map((read, i) => `select ${i} as read_no, row_to_json(r)::text as row_json from (${place(read)}) r`);
    text = `with ${ctes.join(', ')} ${selects.join(' union all ')}`;
  }
  const result = await tx.executeQuery<{ read_no: number; row_json: string }>(CompiledQuery.raw(text, values));
  if (reads.length === 0) return;
  for (const [i, read] of reads.entries()) {
    const rows = result.rows.filter((row) => row.read_no === i).map((row) => JSON.parse(row.row_json) as Record<string, unknown>);
    await read.then(tx, rows);
  }
}
