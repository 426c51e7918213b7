// Recording product events (https://emailit.com/docs/events/send-events/): one or a batch of
// up to 100, from a server (API) or the tracking script. A batch is checked whole before
// anything is written, then written in one transaction: the events in the event log (where
// webhooks and automations pick them up through its subscriber hook), the contact each is
// tied to, and the custom types first seen. A refused batch leaves nothing behind.
import type { Db, Executor } from '../../platform/db/database.ts';
import { emitEvents, type EmittedEvent } from '../../platform/events.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { nowIso } from '../../platform/clock.ts';
import { ApiError, fieldValidationError, messageError, planRequiredError } from '../../platform/http/errors.ts';
import { beginIdempotent, completeIdempotent, parseIdempotencyKey, releaseIdempotent } from '../../platform/idempotency.ts';
import { getWorkspace } from '../workspaces/service.ts';
import {
  addProblem,
  checkCustomProperties,
  checkWorkspaceProperties,
  EVENT_TYPE,
  isoDate,
  PLAN_EVENT_TYPES,
  type PropertyDefinition,
  type Problems,
} from './definitions.ts';

// What the tracking keys feature reads: the plan's event types and its table.
export { PLAN_EVENT_TYPES } from './definitions.ts';
export type { TrackingKeysTable } from './tables.ts';

export interface EventInput {
  type: string;
  properties?: Record<string, unknown>;
  email?: string;
  contact_id?: string;
  occurred_at?: string;
  /** Where a tracking script event came from (anonymous id, page); not part of the API body. */
  context?: Record<string, unknown>;
}

export type EventSource = 'api' | 'tracking';

interface CheckedEvent {
  type: string;
  scope: 'workspace' | 'custom';
  properties: Record<string, unknown>;
  email: string | null;
  contactId: string | null;
  occurredAt: string;
  context?: Record<string, unknown>;
}

const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Refuses workspaces whose plan has no event tracking (Pay as you go). */
export async function requireEventsPlan(db: Executor, workspaceId: string): Promise<{ plan: string }> {
  const workspace = await getWorkspace(db, workspaceId);
  if (!workspace) throw messageError(404, 'Workspace not found', 'The workspace of this key no longer exists');
  if (PLAN_EVENT_TYPES[workspace.plan] === 0)
    throw planRequiredError('pro', 'Workspace and custom events are available on the Pro, Business and Custom plans');
  return workspace;
}

export const typeLimitError = (limit: number) =>
  messageError(
    403,
    'event_type_limit_reached',
    `This workspace's plan allows ${limit} event types (workspace definitions and custom types together); upgrade the plan for more`,
    { limit },
  );

/** The definitions of the `w:` types named (by name without prefix). */
async function definitionsOf(tx: Executor, workspaceId: string, names: string[]): Promise<Map<string, PropertyDefinition[]>> {
  if (names.length === 0) return new Map();
  const rows = await tx
    .selectFrom('event_definitions')
    .select(['name', 'properties'])
    .where('workspace_id', '=', workspaceId)
    .where('name', 'in', names)
    .execute();
  return new Map(rows.map((r) => [r.name, JSON.parse(r.properties) as PropertyDefinition[]]));
}

async function contactsByEmail(tx: Executor, workspaceId: string, emails: string[]): Promise<Map<string, string>> {
  if (emails.length === 0) return new Map();
  const rows = await tx
    .selectFrom('contacts')
    .select(['id', 'email'])
    .where('workspace_id', '=', workspaceId)
    .where('email', 'in', emails)
    .execute();
  return new Map(rows.map((r) => [r.email, r.id]));
}

async function contactsById(tx: Executor, workspaceId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await tx
    .selectFrom('contacts')
    .select(['id', 'email'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.email]));
}

/** Checks every event of a batch; throws 400 `Validation failed` naming each problem. */
async function checkEvents(
  tx: Executor,
  workspaceId: string,
  inputs: EventInput[],
  prefix: (i: number) => string,
): Promise<CheckedEvent[]> {
  const problems: Problems = {};
  const wanted = [
    ...new Set(
      inputs
        .map((e) => EVENT_TYPE.exec(e.type))
        .filter((m) => m?.[1] === 'w')
        .map((m) => m![2]),
    ),
  ];
  const emails = [...new Set(inputs.map((e) => e.email?.trim().toLowerCase()).filter((e): e is string => !!e && ADDRESS.test(e)))];
  const ids = [...new Set(inputs.map((e) => e.contact_id).filter((id): id is string => !!id))];
  const [definitions, byEmail, byId] = [
    await definitionsOf(tx, workspaceId, wanted),
    await contactsByEmail(tx, workspaceId, emails),
    await contactsById(tx, workspaceId, ids),
  ];
  const checked = inputs.map((input, i): CheckedEvent => {
    const at = prefix(i);
    const match = EVENT_TYPE.exec(input.type);
    const properties = input.properties ?? {};
    let stored: Record<string, unknown> = properties;
    if (!match) {
      addProblem(
        problems,
        `${at}type`,
        `The type "${input.type}" must be w:<name> (a workspace event) or c:<name> (a custom event); the name has 1 to 100 letters, digits, ., - or _ and starts with a letter or digit. System events can't be sent.`,
      );
    } else if (match[1] === 'w') {
      const definition = definitions.get(match[2]);
      if (!definition)
        addProblem(
          problems,
          `${at}type`,
          `The workspace event ${input.type} is not defined in this workspace; define it first, or send a custom event (c:${match[2]}).`,
        );
      else stored = checkWorkspaceProperties(input.type, definition, properties, `${at}properties`, problems);
    } else stored = checkCustomProperties(properties, `${at}properties`, problems);

    let email: string | null = null;
    if (input.email !== undefined) {
      email = input.email.trim().toLowerCase();
      if (!ADDRESS.test(email)) addProblem(problems, `${at}email`, `"${input.email}" is not an email address.`);
    }
    let contactId: string | null = null;
    if (input.contact_id !== undefined) {
      const address = byId.get(input.contact_id);
      if (address === undefined) addProblem(problems, `${at}contact_id`, `No contact ${input.contact_id} in this workspace.`);
      else {
        contactId = input.contact_id;
        email ??= address;
      }
    } else if (email) contactId = byEmail.get(email) ?? null;

    let occurredAt = nowIso();
    if (input.occurred_at !== undefined) {
      const iso = isoDate(input.occurred_at);
      if (!iso) addProblem(problems, `${at}occurred_at`, `"${input.occurred_at}" is not an ISO 8601 date and time.`);
      else occurredAt = iso;
    }
    return {
      type: input.type,
      scope: match?.[1] === 'w' ? 'workspace' : 'custom',
      properties: stored,
      email,
      contactId,
      occurredAt,
      ...(input.context ? { context: input.context } : {}),
    };
  });
  if (Object.keys(problems).length > 0) throw fieldValidationError(problems);
  return checked;
}

// Custom types already counted, per workspace (a type once seen stays seen).
const knownCustomTypes = new Map<string, Set<string>>();

/** Counts the custom types first seen in this batch against the plan's event types. */
async function countCustomTypes(tx: Executor, workspaceId: string, plan: string, types: string[]): Promise<void> {
  let known = knownCustomTypes.get(workspaceId);
  const fresh = types.filter((t) => !known?.has(t));
  if (fresh.length === 0) return;
  const stored = await tx
    .selectFrom('custom_event_types')
    .select('name')
    .where('workspace_id', '=', workspaceId)
    .where('name', 'in', fresh)
    .execute();
  const storedNames = new Set(stored.map((r) => r.name));
  const added = fresh.filter((t) => !storedNames.has(t));
  if (added.length > 0) {
    const limit = PLAN_EVENT_TYPES[plan] ?? 0;
    if (Number.isFinite(limit)) {
      const used = await countEventTypes(tx, workspaceId);
      if (used + added.length > limit) throw typeLimitError(limit);
    }
    const now = nowIso();
    await tx
      .insertInto('custom_event_types')
      .values(added.map((name) => ({ workspace_id: workspaceId, name, created_at: now })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  if (!known) {
    if (knownCustomTypes.size > 10_000) knownCustomTypes.clear();
    knownCustomTypes.set(workspaceId, (known = new Set()));
  }
  for (const t of fresh) known.add(t);
}

/** Event types in use: definitions plus custom types seen. */
export async function countEventTypes(tx: Executor, workspaceId: string): Promise<number> {
  const [defs, customs] = await Promise.all([
    tx
      .selectFrom('event_definitions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow(),
    tx
      .selectFrom('custom_event_types')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow(),
  ]);
  return Number(defs.n) + Number(customs.n);
}

export function recordedEventObject(event: EmittedEvent) {
  return { object: 'event' as const, id: event.id, type: event.type, data: { object: event.object }, created_at: event.createdAt };
}

/** Checks and writes events in `tx`; returns them as recorded. */
export async function recordEvents(
  tx: Executor,
  workspaceId: string,
  plan: string,
  inputs: EventInput[],
  source: EventSource,
  prefix: (i: number) => string,
) {
  const checked = await checkEvents(tx, workspaceId, inputs, prefix);
  await countCustomTypes(tx, workspaceId, plan, [...new Set(checked.filter((e) => e.scope === 'custom').map((e) => e.type.slice(2)))]);
  const events = await emitEvents(
    tx,
    checked.map((e) => ({
      workspaceId,
      type: e.type,
      object: {
        type: e.type,
        scope: e.scope,
        properties: e.properties,
        email: e.email,
        contact_id: e.contactId,
        occurred_at: e.occurredAt,
        source,
        ...(e.context ? { context: e.context } : {}),
      },
    })),
  );
  const tied = events.flatMap((event, i) =>
    checked[i].contactId
      ? [{ event_id: event.id, workspace_id: workspaceId, contact_id: checked[i].contactId!, created_at: event.createdAt }]
      : [],
  );
  if (tied.length > 0) await tx.insertInto('contact_events').values(tied).execute();
  return events.map(recordedEventObject);
}

/**
 * Records events under the request's Idempotency-Key, as sends are (src/platform/idempotency.ts):
 * the stored response commits with the events and is replayed for 24 hours. Keys of events
 * have a namespace of their own, apart from the keys of sends.
 */
export async function recordIdempotently(
  db: Db,
  workspaceId: string,
  idempotencyHeader: string | string[] | undefined,
  respond: (recorded: ReturnType<typeof recordedEventObject>[]) => unknown,
  inputs: EventInput[],
  source: EventSource,
  prefix: (i: number) => string,
): Promise<unknown> {
  const header = parseIdempotencyKey(idempotencyHeader);
  const { plan } = await requireEventsPlan(db, workspaceId);
  const key = header ? `events:${header}` : null;
  const claim = key ? await beginIdempotent(db, workspaceId, key) : null;
  if (claim?.kind === 'replay') return claim.body;
  try {
    return await groupCommit(db, async (tx) => {
      const body = respond(await recordEvents(tx, workspaceId, plan, inputs, source, prefix));
      if (claim && key) await completeIdempotent(tx, workspaceId, key, claim.token, 200, body);
      return body;
    });
  } catch (error) {
    if (claim && key) await releaseIdempotent(db, workspaceId, key, claim.token).catch(() => {});
    if (error instanceof ApiError) throw error;
    throw error;
  }
}
