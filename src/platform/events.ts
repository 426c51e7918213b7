// The append-only event log. Every state change a user can subscribe to is recorded with
// emitEvent inside the caller's transaction, so an event exists exactly when its change does.
// Consumers that must react (webhook fan-out, automations) register a subscriber that runs
// in that same transaction, typically enqueueing a job: nothing is lost between the two.
//
// On PostgreSQL every statement is a round trip (and a socket write costing the emitter CPU),
// and an email.delivered event used to cost four: the event, the automation outcome, the
// trigger lookup, the webhook outbox. There, subscribers give their reaction as SQL instead,
// and the events of one emitEvents call with all their reactions are ONE statement: the
// writes as data-modifying CTEs (they all run, in one snapshot, or none does), the reads as
// its SELECT. SQLite runs in-process, where a statement costs microseconds: subscribers run
// their own statements there, event by event.
import { CompiledQuery } from 'kysely';
import { dialectOf, type Executor } from './db/database.ts';
import { newId } from './ids.ts';
import { nowIso } from './clock.ts';
import { preparedQuery, shiftPlaceholders } from './db/prepared.ts';
import { nameStatement, pipelinedWrite } from './db/pg-client.ts';

export interface EmittedEvent {
  id: string;
  workspaceId: string;
  type: string;
  object: Record<string, unknown>;
  createdAt: string;
}

export interface EventToEmit {
  workspaceId: string;
  type: string;
  object: Record<string, unknown>;
}

/** A statement with its values; placeholders are numbered $1… within the part. */
export interface SqlPart {
  sql: string;
  values: unknown[];
}

/** A subscriber's reaction to a batch of events, as parts of their statement (PostgreSQL). */
export interface PlannedReaction {
  /** INSERT, UPDATE or DELETE statements, run with the events' INSERT. */
  writes?: SqlPart[];
  /** A SELECT run in the same statement; its rows are handed to `after`. */
  read?: SqlPart;
  /** Runs once the statement is done, in the same transaction (rows: the read's, or none). */
  after?(tx: Executor, rows: Array<Record<string, unknown>>): Promise<void>;
}

export interface EventSubscriber {
  /** Reacts to one event with statements of its own, in the emitting transaction (SQLite). */
  react(tx: Executor, event: EmittedEvent): Promise<void>;
  /** The same reaction to `events` (in order) as SQL for their statement (PostgreSQL); null: nothing to do. */
  plan(tx: Executor, events: EmittedEvent[]): Promise<PlannedReaction | null>;
}

const subscribers: EventSubscriber[] = [];

export function subscribeToEvents(subscriber: EventSubscriber): void {
  if (!subscribers.includes(subscriber)) subscribers.push(subscriber);
}

export async function emitEvent(tx: Executor, workspaceId: string, type: string, object: Record<string, unknown>): Promise<EmittedEvent> {
  const event: EmittedEvent = { id: newId('evt'), workspaceId, type, object, createdAt: nowIso() };
  if (dialectOf(tx) === 'postgres') await emitInOneStatement(tx, [event], []);
  else await emitOnSqlite(tx, event);
  return event;
}

/** Emits several events in their order; on PostgreSQL in one statement with all their reactions.
 *  `pipelined`: when no reaction reads anything back, that statement goes out with the
 *  transaction's next query (pg-client.ts), whose caller then hears of its failure; for a
 *  caller whose transaction runs nothing it must see the outcome of before its COMMIT. */
export async function emitEvents(
  tx: Executor,
  items: EventToEmit[],
  alsoWrite: SqlPart[] = [],
  options: { pipelined?: boolean } = {},
): Promise<EmittedEvent[]> {
  const events = items.map(({ workspaceId, type, object }) => ({ id: newId('evt'), workspaceId, type, object, createdAt: nowIso() }));
  if (dialectOf(tx) === 'postgres') {
    if (events.length > 0 || alsoWrite.length > 0) await emitInOneStatement(tx, events, alsoWrite, options.pipelined ?? false);
    return events;
  }
  for (const part of alsoWrite) await tx.executeQuery(CompiledQuery.raw(part.sql, part.values));
  for (const event of events) await emitOnSqlite(tx, event);
  return events;
}

async function emitOnSqlite(tx: Executor, event: EmittedEvent): Promise<void> {
  await insertEvent(tx, {
    id: event.id,
    workspaceId: event.workspaceId,
    type: event.type,
    data: JSON.stringify(event.object),
    createdAt: event.createdAt,
  });
  for (const subscriber of subscribers) await subscriber.react(tx, event);
}

const insertEvent = preparedQuery((db, p: { id: string; workspaceId: string; type: string; data: string; createdAt: string }) =>
  db.insertInto('events').values({ id: p.id, workspace_id: p.workspaceId, type: p.type, data: p.data, created_at: p.createdAt }),
);

// Rows in the order given, so that `seq` follows the order of emission.
const EVENTS_INSERT =
  'insert into events (id, workspace_id, type, data, created_at) select id, workspace_id, type, data, created_at ' +
  'from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) with ordinality as e(id, workspace_id, type, data, created_at, n) order by n';

// `alsoWrite`: the caller's own INSERTs (a send's content, email and job rows), carried by the
// same statement, so a send takes one round trip for all its rows instead of four.
async function emitInOneStatement(tx: Executor, events: EmittedEvent[], alsoWrite: SqlPart[], pipelined = false): Promise<void> {
  const reactions: PlannedReaction[] = alsoWrite.length > 0 ? [{ writes: alsoWrite }] : [];
  if (events.length > 0)
    for (const subscriber of subscribers) {
      const reaction = await subscriber.plan(tx, events);
      if (reaction) reactions.push(reaction);
    }
  const values: unknown[] = [
    events.map((e) => e.id),
    events.map((e) => e.workspaceId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.object)),
    events.map((e) => e.createdAt),
  ];
  // A part's own $n becomes $(n + the values before it) in the whole statement.
  const place = (part: SqlPart) => {
    const placed = shiftPlaceholders(part.sql, values.length);
    values.push(...part.values);
    return placed;
  };
  const ctes: string[] = [];
  const reads: number[] = [];
  for (const [i, reaction] of reactions.entries()) {
    for (const write of reaction.writes ?? []) ctes.push(`w${ctes.length} as (${place(write)})`);
    if (reaction.read) reads.push(i);
  }
  let text: string;
  if (reads.length === 0) text = ctes.length === 0 ? EVENTS_INSERT : `with ${ctes.join(', ')} ${EVENTS_INSERT}`;
  else {
    ctes.unshift(`events_written as (${EVENTS_INSERT})`);
    // Each read's rows as JSON, tagged with the reaction they answer.
    const selects = reads.map((i) => `select ${i} as reaction, row_to_json(r)::text as row_json from (${place(reactions[i].read!)}) r`);
    text = `with ${ctes.join(', ')} ${selects.join(' union all ')}`;
  }
  nameStatement(text); // the same few shapes again and again (at most so many are named)
  if (pipelined && reactions.every((reaction) => !reaction.read && !reaction.after)) {
    await tx.executeQuery(CompiledQuery.raw(pipelinedWrite(text), values));
    return;
  }
  const result = await tx.executeQuery<{ reaction: number; row_json: string }>(CompiledQuery.raw(text, values));
  for (const [i, reaction] of reactions.entries()) {
    if (!reaction.after) continue;
    const rows = reaction.read
      ? result.rows.filter((row) => row.reaction === i).map((row) => JSON.parse(row.row_json) as Record<string, unknown>)
      : [];
    await reaction.after(tx, rows);
  }
}
