// The automation runner, on the service's own jobs table (architecture "The marketing half").
//
// - Triggers: the event log's subscriber hook looks up, in the emitting transaction, the
//   running automations whose triggers the event's type fires (automation_triggers) and
//   enqueues one `automation.trigger` job each; so an event is never lost and never seen by an
//   automation that was not running when it happened.
// - A run starts in one transaction: the run row (unique per automation, event and trigger, and
//   per contact or email while running when re-entry is off), the cooldown stamp (a conditional
//   upsert), the concurrency place (a conditional update), 3 credits, its first step visit
//   and that visit's job. Two events arriving together can never both pass a limit.
// - A step visit is a row unique per (run, step key, visit) with its own job. The step's
//   effect, its outcome and its successors' rows and jobs are written in one transaction that
//   starts with a conditional update of the visit's status, so a job run twice (a worker killed
//   after the commit, before the job was deleted) finds the visit done and does nothing.
//   send_email writes that transaction together with the email (the email pipeline's own
//   transaction), so one email per visit however often the job runs.
// - A wait is the visit's job enqueued again for later; a paused automation's visits hold.
import type { Selectable } from 'kysely';
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { enqueueJob, RetryJobAt, type Job } from '../../platform/jobs.ts';
import { getCredits, spendCreditsAtCommit } from '../../platform/credits.ts';
import { ApiError } from '../../platform/http/errors.ts';
import type { Principal } from '../../platform/http/auth.ts';
import type { EmittedEvent, EventSubscriber, PlannedReaction } from '../../platform/events.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { fetchPinned, parseHttpUrl, resolvePublicAddress, FetchError, UrlRefusedError } from '../../platform/net.ts';
import { normalizeFilter, type WebhookFilter } from '../webhooks/filter.ts';
import { automationFilterMatches, automationRuleMatches } from './filter.ts';
import { resolverFor } from '../webhooks/service.ts';
import { buildSendRequest, acceptMessage, forwardEmail } from '../emails/service.ts';
import { feedbackId } from '../../mail/feedback-id.ts';
import { unsubscribeUrl } from '../campaigns/service.ts';
import { customFieldsOf, findContact, findContactByEmail, findOrCreateContact, updateContact, type ContactRow } from '../contacts/service.ts';
import { findAudience, removeContactFromAudience, subscribeContact } from '../audiences/service.ts';
import { createSuppression, deleteSuppression } from '../suppressions/service.ts';
import type { Connection, Step } from './graph.ts';
import { firesTriggers } from './event-triggers.ts';
import { connectionsOf, settingsOf, stepsOf, type AutomationRow } from './service.ts';
import type { Settings } from './graph.ts';
import type { AutomationRunsTable, AutomationRunStepsTable } from './tables.ts';

export const TRIGGER_JOB = 'automation.trigger';
export const STEP_JOB = 'automation.step';

export type RunRow = Selectable<AutomationRunsTable>;
export type RunStepRow = Selectable<AutomationRunStepsTable>;

/** Thrown inside a transaction to roll it back when a run must not start (the reason kept). */
export class RunSkipped extends Error {}
/** Thrown inside a step's transaction when its visit was already done (a repeated job). */
class StaleVisit extends Error {}


// ---------------------------------------------------------------------------------------
// Triggers

const triggersFor = preparedQuery((db, p: { workspaceId: string; type: string }) =>
  db.selectFrom('automation_triggers').select(['automation_id', 'step_key']).where('workspace_id', '=', p.workspaceId).where('event_type', '=', p.type),
);

// An email's outcome as its events arrive (for step statistics): engagement moves forward,
// bounces and failures replace only an accepted email, complaints replace anything.
const OUTCOME_EVENTS: Record<string, { outcome: string; from: string[] }> = {
  'email.delivered': { outcome: 'delivered', from: ['accepted'] },
  'email.loaded': { outcome: 'loaded', from: ['accepted', 'delivered'] },
  'email.clicked': { outcome: 'clicked', from: ['accepted', 'delivered', 'loaded'] },
  'email.bounced': { outcome: 'bounced', from: ['accepted'] },
  'email.failed': { outcome: 'failed', from: ['accepted'] },
  'email.canceled': { outcome: 'canceled', from: ['accepted'] },
  'email.complained': { outcome: 'complained', from: ['accepted', 'delivered', 'loaded', 'clicked'] },
};
// Every email event runs one of these in its emitting transaction: compiled once each.
const updateOutcome = new Map(
  Object.entries(OUTCOME_EVENTS).map(([type, { outcome, from }]) => [
    type,
    preparedQuery((db, p: { emailId: string }) =>
      db.updateTable('automation_run_steps').set({ outcome }).where('email_id', '=', p.emailId).where('outcome', 'in', from),
    ),
  ]),
);

/** The email an email event is about: its object, or the email inside a load or click. */
function emailIdOf(object: Record<string, any>): string | null {
  if (object.email && typeof object.email.id === 'string') return object.email.id;
  return typeof object.id === 'string' && object.id.startsWith('em_') ? object.id : null;
}

/** The recipient address of an email event (`to`, or `rcpt_to` of a load or click). */
function recipientOf(object: Record<string, any>): string | null {
  const to = typeof object.to === 'string' ? object.to : typeof object.email?.rcpt_to === 'string' ? object.email.rcpt_to : null;
  return to ? to.toLowerCase() : null;
}

/** The event hook's trigger jobs: one per running automation the event fires. */
async function enqueueTriggers(tx: Executor, event: EmittedEvent, rows: Array<{ automation_id: string; step_key: string }>): Promise<void> {
  for (const row of rows) {
    await enqueueJob(
      tx,
      TRIGGER_JOB,
      { automation_id: row.automation_id, step_key: row.step_key, event: { id: event.id, type: event.type, object: event.object, created_at: event.createdAt } },
      { maxAttempts: 25 },
    );
  }
}

/** The event hook: runs in the transaction that emits the event. */
export async function queueAutomationTriggers(tx: Executor, event: EmittedEvent): Promise<void> {
  const outcome = OUTCOME_EVENTS[event.type];
  const emailId = emailIdOf(event.object);
  if (outcome && emailId) await updateOutcome.get(event.type)!(tx, { emailId });
  if (!firesTriggers(event.type)) return;
  await enqueueTriggers(tx, event, await triggersFor(tx, { workspaceId: event.workspaceId, type: event.type }));
}

// The same hook for a batch of events as parts of their statement on PostgreSQL (see
// platform/events.ts): the outcome updates of distinct emails in one UPDATE; an email met again
// in the batch is updated after it, in event order, as the events would have one by one.
const OUTCOME_UPDATES =
  'update automation_run_steps s set outcome = v.outcome from unnest($1::text[], $2::text[], $3::text[]) as v(email_id, outcome, from_list) ' +
  "where s.email_id = v.email_id and s.outcome = any(string_to_array(v.from_list, ','))";
const TRIGGER_LOOKUP =
  'select t.workspace_id, t.event_type, t.automation_id, t.step_key from automation_triggers t ' +
  'join (select distinct * from unnest($1::text[], $2::text[]) as k(workspace_id, event_type)) k on t.workspace_id = k.workspace_id and t.event_type = k.event_type';

interface TriggerRow {
  workspace_id: string;
  event_type: string;
  automation_id: string;
  step_key: string;
}

export const automationEventHook: EventSubscriber = {
  react: queueAutomationTriggers,
  async plan(_tx, events) {
    const first = { emailIds: [] as string[], outcomes: [] as string[], froms: [] as string[] };
    const again: Array<{ type: string; emailId: string }> = [];
    const seen = new Set<string>();
    for (const event of events) {
      const outcome = OUTCOME_EVENTS[event.type];
      const emailId = emailIdOf(event.object);
      if (!outcome || !emailId) continue;
      if (seen.has(emailId)) again.push({ type: event.type, emailId });
      else {
        seen.add(emailId);
        first.emailIds.push(emailId);
        first.outcomes.push(outcome.outcome);
        first.froms.push(outcome.from.join(','));
      }
    }
    const sources = events.filter((event) => firesTriggers(event.type));
    if (first.emailIds.length === 0 && sources.length === 0) return null;
    const reaction: PlannedReaction = {
      async after(tx, rows) {
        for (const { type, emailId } of again) await updateOutcome.get(type)!(tx, { emailId });
        const triggers = rows as unknown as TriggerRow[];
        for (const event of sources) {
          await enqueueTriggers(tx, event, triggers.filter((t) => t.workspace_id === event.workspaceId && t.event_type === event.type));
        }
      },
    };
    if (first.emailIds.length > 0) reaction.writes = [{ sql: OUTCOME_UPDATES, values: [first.emailIds, first.outcomes, first.froms] }];
    if (sources.length > 0) reaction.read = { sql: TRIGGER_LOOKUP, values: [sources.map((e) => e.workspaceId), sources.map((e) => e.type)] };
    return reaction;
  },
};

/** What bulk mail carries (docs/deliverability.md): Feedback-ID, and for a contact's mail the
 *  RFC 8058 one-click List-Unsubscribe, whose POST unsubscribes the contact from all campaigns. */
function bulkMailHeaders(ctx: AppContext, automationId: string, workspaceId: string, fromAddress: string, contact: ContactRow | null): Record<string, string> {
  const headers: Record<string, string> = { 'Feedback-ID': feedbackId(automationId, workspaceId, 'automation', fromAddress.slice(fromAddress.lastIndexOf('@') + 1)) };
  if (!contact) return headers;
  const url = unsubscribeUrl(ctx, automationId, contact.id);
  headers['List-Unsubscribe'] = `<${url}>`;
  if (url.startsWith('https://')) headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  return headers;
}

interface TriggerJob {
  automation_id: string;
  step_key: string;
  event: { id: string; type: string; object: Record<string, any>; created_at: string };
}

function passes(filter: unknown, object: unknown): boolean {
  if (!filter) return true;
  try {
    return automationFilterMatches(normalizeFilter(filter as never), object);
  } catch {
    return false;
  }
}

const automationById = preparedQuery((db, p: { id: string }) => db.selectFrom('automations').selectAll().where('id', '=', p.id));

/** The parsed graph and settings of an automation row, kept while its text is unchanged
 *  (every trigger and step job reads them; parsing them each time costs more than the reads). */
interface Parsed {
  text: string;
  steps: Step[];
  connections: Connection[];
  settings: Settings;
}
const parsedGraphs = new Map<string, Parsed>();
function parsedOf(automation: AutomationRow): Parsed {
  const text = `${automation.settings}\u0000${automation.connections}\u0000${automation.steps}`;
  const cached = parsedGraphs.get(automation.id);
  if (cached && cached.text === text) return cached;
  const parsed = { text, steps: stepsOf(automation), connections: connectionsOf(automation), settings: settingsOf(automation) };
  if (parsedGraphs.size >= 1000) parsedGraphs.delete(parsedGraphs.keys().next().value!);
  parsedGraphs.set(automation.id, parsed);
  return parsed;
}

// The trigger's checks and the run's start share one transaction: one connection and, on
// SQLite, one group commit with the other triggers and steps of the moment.
export async function runTriggerJob(ctx: AppContext, job: Job<TriggerJob>): Promise<void> {
  try {
    await startRunWith(ctx, async (tx) => {
      const input = await triggeredRun(tx, job.payload);
      if (!input) throw new RunSkipped('The event does not start a run.');
      return input;
    });
  } catch (error) {
    if (!(error instanceof RunSkipped)) throw error;
  }
}

/** The run an event starts through a trigger, or null when the trigger does not fire. */
async function triggeredRun(tx: Executor, { automation_id, step_key, event }: TriggerJob): Promise<{ automation: AutomationRow; input: RunInput } | null> {
  const [automation] = await automationById(tx, { id: automation_id });
  if (!automation || automation.status !== 'running' || !automation.started_at || event.created_at < automation.started_at) return null;
  const trigger = parsedOf(automation).steps.find((s) => s.key === step_key && s.type === 'trigger');
  if (!trigger?.trigger) return null;
  const object = event.object;
  const config = trigger.config ?? {};
  if (trigger.trigger === 'contact.added_to_audience' && event.type === 'subscriber.created' && object.subscribed !== true) return null;
  if (config.audience_id && (trigger.trigger === 'contact.added_to_audience' || trigger.trigger === 'contact.removed_from_audience') && object.audience?.id !== config.audience_id) return null;
  if (!passes(config.filter, object)) return null;

  let contactId: string | null = null;
  let emailId: string | null = null;
  if (automation.context === 'contact') {
    if (event.type.startsWith('subscriber.')) contactId = object.contact?.id ?? null;
    else if (event.type === 'contact.updated') contactId = object.id ?? null;
    else {
      const to = recipientOf(object);
      if (to) contactId = (await findContactByEmail(tx, automation.workspace_id, to))?.id ?? null;
    }
    if (!contactId) return null;
  } else if (automation.context === 'email') {
    emailId = emailIdOf(object);
    if (!emailId) return null;
    const to = recipientOf(object);
    if (to) contactId = (await findContactByEmail(tx, automation.workspace_id, to))?.id ?? null;
  }
  return {
    automation,
    input: {
      triggerKey: trigger.key,
      event: trigger.trigger,
      eventId: event.id,
      payload: { type: event.type, object },
      meta: { source_event_id: event.id },
      contactId,
      emailId,
    },
  };
}

// ---------------------------------------------------------------------------------------
// Runs

export interface RunInput {
  triggerKey: string;
  event: string;
  eventId: string | null;
  payload: Record<string, unknown>;
  meta: Record<string, unknown>;
  contactId: string | null;
  emailId: string | null;
}

const lastTriggered = new Map<string, number>();

/** Starts a run in one transaction; RunSkipped when a setting or a duplicate stops it. */
export async function startRun(ctx: AppContext, automation: AutomationRow, input: RunInput): Promise<RunRow> {
  return startRunWith(ctx, async () => ({ automation, input }));
}

const isInsufficientCredits = (error: unknown) => error instanceof ApiError && error.status === 402;

/**
 * Starts the run `decide` names (it may read in the transaction, or throw RunSkipped). The
 * 3 credits are taken at the commit without reading the balance first (on PostgreSQL the
 * workspace row, which every run start and send locks, is then held only for the commit);
 * when they are short, a second transaction reads the balance and records the unpaid run.
 */
async function startRunWith(ctx: AppContext, decide: (tx: Executor) => Promise<{ automation: AutomationRow; input: RunInput }>): Promise<RunRow> {
  let started: { automation: AutomationRow; run: RunRow };
  try {
    started = await groupCommit(ctx.db, async (tx) => {
      const { automation, input } = await decide(tx);
      return { automation, run: await startRunIn(tx, automation, input, true) };
    });
  } catch (error) {
    if (!isInsufficientCredits(error)) throw error;
    started = await groupCommit(ctx.db, async (tx) => {
      const { automation, input } = await decide(tx);
      return { automation, run: await startRunIn(tx, automation, input, false) };
    });
  }
  const { automation, run } = started;
  // last_triggered_at: at most once a second per automation and process (not a hot-row write per run).
  const at = Date.now();
  if ((lastTriggered.get(automation.id) ?? 0) < at - 1000) {
    lastTriggered.set(automation.id, at);
    await ctx.db.updateTable('automations').set({ last_triggered_at: run.created_at }).where('id', '=', automation.id).execute();
  }
  return run;
}

// The statements of every run start, compiled once (the columns named: a prepared query's
// parameters stand in for values only).
const RUN_COLUMNS = ['id', 'workspace_id', 'automation_id', 'trigger_key', 'contact_id', 'email_id', 'event_id', 'event', 'payload', 'meta', 'status', 'active_subject', 'pending_steps', 'counted', 'started_at', 'completed_at', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof RunRow>;
const STEP_COLUMNS = ['id', 'run_id', 'automation_id', 'step_key', 'step_id', 'visit', 'status', 'outcome', 'email_id', 'data', 'started_at', 'completed_at', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof RunStepRow>;
const pick = <T, K extends keyof T>(p: T, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, p[k]])) as Pick<T, K>;
const insertRun = preparedQuery((db, p: RunRow) => db.insertInto('automation_runs').values(pick(p, RUN_COLUMNS)).onConflict((oc) => oc.doNothing()).returning('id'));
const setPendingSteps = preparedQuery((db, p: { id: string; pending: number }) => db.updateTable('automation_runs').set({ pending_steps: p.pending }).where('id', '=', p.id));
const insertRunStep = preparedQuery((db, p: RunStepRow) => db.insertInto('automation_run_steps').values(pick(p, STEP_COLUMNS)));

/** The run's writes; `optimistic`: take the credits at the commit without reading the balance
 *  (a short balance then fails the transaction with the 402), else read it and record an
 *  unpaid run as failed. */
async function startRunIn(tx: Executor, automation: AutomationRow, input: RunInput, optimistic: boolean): Promise<RunRow> {
  const { settings, connections, steps } = parsedOf(automation);
  const now = nowIso();
  const subject = input.contactId ?? input.emailId;
  const row: RunRow = {
    id: newId('aur'),
    workspace_id: automation.workspace_id,
    automation_id: automation.id,
    trigger_key: input.triggerKey,
    contact_id: input.contactId,
    email_id: input.emailId,
    event_id: input.eventId,
    event: input.event,
    payload: JSON.stringify(input.payload),
    meta: JSON.stringify(input.meta),
    status: 'running',
    active_subject: !settings.allow_reentry && subject ? subject : null,
    pending_steps: 0,
    counted: settings.max_concurrent_runs > 0 ? 1 : 0,
    started_at: now,
    completed_at: null,
    created_at: now,
    updated_at: now,
  };
  // Both unique keys (the event, the running subject) are decided by the database.
  const inserted = await tx.insertInto('automation_runs').values(row).onConflict((oc) => oc.doNothing()).returning('id').execute();
  if (inserted.length === 0) throw new RunSkipped(input.eventId ? 'This event already started a run, or the contact or email already has a running run.' : 'The contact or email already has a running run (re-entry is off).');
  if (settings.cooldown_seconds > 0 && subject) {
    const nowAt = Math.floor(nowMs());
    const stamped = await tx
      .insertInto('automation_cooldowns')
      .values({ automation_id: automation.id, subject, last_started_ms: nowAt })
      .onConflict((oc) =>
        oc
          .columns(['automation_id', 'subject'])
          .doUpdateSet({ last_started_ms: nowAt })
          .where('automation_cooldowns.last_started_ms', '<=', nowAt - settings.cooldown_seconds * 1000),
      )
      .returning('subject')
      .execute();
    if (stamped.length === 0) throw new RunSkipped(`The contact or email started a run less than ${settings.cooldown_seconds} seconds ago.`);
  }
  if (settings.max_concurrent_runs > 0) {
    const placed = await tx
      .updateTable('automations')
      .set((eb) => ({ running_runs: eb('running_runs', '+', 1) }))
      .where('id', '=', automation.id)
      .where('running_runs', '<', settings.max_concurrent_runs)
      .returning('id')
      .execute();
    if (placed.length === 0) throw new RunSkipped(`The automation already has ${settings.max_concurrent_runs} running runs.`);
  }
  const firsts = connections.filter((c) => c.from === input.triggerKey).map((c) => steps.find((s) => s.key === c.to)!).filter(Boolean);
  const available = optimistic ? Infinity : await getCredits(tx, automation.workspace_id);
  if (available < 3) {
    // A run that cannot pay fails at its first step with the reason.
    const message = `Insufficient credits: starting a run needs 3 credits but the workspace has ${available} available.`;
    for (const step of firsts) await insertVisit(tx, row, step, 'root', { status: 'failed', outcome: 'error', data: { error: message } });
    await endRun(tx, { ...row }, 'failed');
    return { ...row, status: 'failed', completed_at: now };
  }
  const queued = await advance(tx, row, automation, 'root', firsts, lazyScope(tx, row));
  let result: RunRow;
  if (queued === 0) {
    await endRun(tx, row, 'completed');
    result = { ...row, status: 'completed', completed_at: now };
  } else {
    await tx.updateTable('automation_runs').set({ pending_steps: queued }).where('id', '=', row.id).execute();
    result = { ...row, pending_steps: queued };
  }
  // Taken by someone else since it was read, the spend fails, the transaction rolls back
  // and the trigger is tried again.
  await spendCreditsAtCommit(tx, automation.workspace_id, 3);
  return result;
}

async function insertVisit(
  tx: Executor,
  run: RunRow,
  step: Step,
  visit: string,
  done?: { status: string; outcome: string | null; data: Record<string, unknown> },
): Promise<string> {
  const now = nowIso();
  const row: RunStepRow = {
    id: newId('ars'),
    run_id: run.id,
    automation_id: run.automation_id,
    step_key: step.key,
    step_id: step.id,
    visit,
    status: done?.status ?? 'running',
    outcome: done?.outcome ?? null,
    email_id: null,
    data: JSON.stringify(done?.data ?? {}),
    started_at: now,
    completed_at: done ? now : null,
    created_at: now,
    updated_at: now,
  };
  await insertRunStep(tx, row);
  if (!done) await enqueueJob(tx, STEP_JOB, { run_step_id: row.id }, { maxAttempts: 10 });
  return row.id;
}

/** Steps that only read and decide (no effect outside the run): run inside the transaction
 *  that reaches them, instead of a job of their own. */
function isInstant(step: Step): boolean {
  return step.action === 'condition' || step.action === 'experiment' || step.action === 'end' || (step.action === 'wait' && Number(step.config?.seconds ?? 0) <= 0);
}

function instantResult(step: Step, scope: Scope, context: string): Finish {
  switch (step.action) {
    case 'condition': {
      const filter = normalizeFilter(step.config.filter);
      const matched = conditionMatches({ ...filter, rules: filter.rules.map((r) => ({ ...r, value: withPlaceholders(r.value, scope) })) }, scope, context);
      return { status: 'completed', outcome: matched ? 'matched' : 'not_matched', data: { result: matched ? 'yes' : 'no' }, branches: [matched ? 'yes' : 'no'] };
    }
    case 'experiment': {
      const variant = pickVariant(step.config.variants);
      return { status: 'completed', outcome: variant, data: { variant }, branches: [variant, 'default'] };
    }
    case 'end':
      return { status: 'completed', outcome: 'completed', data: { result: 'ended' }, branches: [] };
    default:
      return { status: 'completed', outcome: 'completed', data: { status: 'completed', delayMs: 0, seconds: 0 } };
  }
}

function successorsOf(automation: AutomationRow, key: string, branches: string[]): Step[] {
  const { steps, connections } = parsedOf(automation);
  const next = connections
    .filter((c: Connection) => c.from === key && branches.includes(c.branch))
    .map((c) => steps.find((s) => s.key === c.to))
    .filter((s): s is Step => s !== undefined);
  // Several edges to one step from one visit run it once.
  return [...new Map(next.map((s) => [s.key, s])).values()];
}

type ScopeLoader = () => Promise<Scope>;
const EMPTY_SCOPE: Scope = { contact: null, email: null, payload: {}, meta: {}, run: { id: '', automation_id: '' } };

function lazyScope(tx: Executor, run: RunRow): ScopeLoader {
  let loaded: Promise<Scope> | null = null;
  return () => (loaded ??= scopeOf(tx, run).then((r) => r.scope));
}

/**
 * Reaches `steps` from visit `from`, in the caller's transaction: instant steps are done here
 * and their successors reached in turn; every other step gets its visit row and job. Returns
 * how many visits were left to jobs.
 */
async function advance(tx: Executor, run: RunRow, automation: AutomationRow, from: string, steps: Step[], scope: ScopeLoader): Promise<number> {
  let queued = 0;
  for (const step of steps) {
    if (isInstant(step)) {
      let result: Finish | null = null;
      try {
        // Only a condition reads the contact or email.
        result = instantResult(step, step.action === 'condition' ? await scope() : EMPTY_SCOPE, automation.context);
      } catch {
        result = null; // left to a job, which records the failure
      }
      if (result) {
        const id = await insertVisit(tx, run, step, from, { status: result.status, outcome: result.outcome, data: result.data });
        queued += await advance(tx, run, automation, id, successorsOf(automation, step.key, result.branches ?? ['default']), scope);
        continue;
      }
    }
    await insertVisit(tx, run, step, from);
    queued++;
  }
  return queued;
}

const closeRun = preparedQuery((db, p: { id: string; status: string; now: string }) =>
  db.updateTable('automation_runs').set({ status: p.status, active_subject: null, completed_at: p.now, updated_at: p.now }).where('id', '=', p.id).where('status', '=', 'running').returning('counted'),
);

/** Ends a running run (no-op otherwise), giving back its concurrency place. */
export async function endRun(tx: Executor, run: Pick<RunRow, 'id' | 'automation_id'>, status: 'completed' | 'failed' | 'canceled'): Promise<boolean> {
  const now = nowIso();
  const ended = await closeRun(tx, { id: run.id, status, now });
  if (ended.length === 0) return false;
  if (Number(ended[0].counted) === 1) {
    await tx
      .updateTable('automations')
      .set((eb) => ({ running_runs: eb('running_runs', '-', 1) }))
      .where('id', '=', run.automation_id)
      .where('running_runs', '>', 0)
      .execute();
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Step visits

interface Finish {
  status: 'completed' | 'failed';
  outcome: string | null;
  data: Record<string, unknown>;
  /** Branches whose connections are followed; null: the default edges. */
  branches?: string[];
  emailId?: string | null;
}

// The statements of every visit's end, compiled once.
const endVisit = preparedQuery((db, p: { id: string; status: string; outcome: string | null; data: string; emailId: string | null; now: string }) =>
  db
    .updateTable('automation_run_steps')
    .set({ status: p.status, outcome: p.outcome, data: p.data, email_id: p.emailId, completed_at: p.now, updated_at: p.now })
    .where('id', '=', p.id)
    .where('status', 'in', ['running', 'waiting'])
    .returning('id'),
);
const countPending = preparedQuery((db, p: { id: string; queued: number; now: string }) =>
  db
    .updateTable('automation_runs')
    .set((eb) => ({ pending_steps: eb(eb('pending_steps', '-', 1), '+', p.queued), updated_at: p.now }))
    .where('id', '=', p.id)
    .returning('pending_steps'),
);

/**
 * Records a visit's end and starts its successors, in the caller's transaction. Throws
 * StaleVisit (rolling the transaction back) when the visit was already ended.
 */
async function finishVisit(tx: Executor, visit: RunStepRow, automation: AutomationRow, finish: Finish): Promise<void> {
  const now = nowIso();
  const done = await endVisit(tx, { id: visit.id, status: finish.status, outcome: finish.outcome, data: JSON.stringify(finish.data), emailId: finish.emailId ?? null, now });
  if (done.length === 0) throw new StaleVisit();
  const [run] = await runById(tx, { id: visit.run_id });
  if (!run) throw new Error(`run ${visit.run_id} not found`);
  if (run.status !== 'running') return;
  const { settings } = parsedOf(automation);
  const stopRun = finish.status === 'failed' && settings.on_step_failure === 'stop';
  const next = stopRun ? [] : successorsOf(automation, visit.step_key, finish.branches ?? ['default']);
  const queued = await advance(tx, run, automation, visit.id, next, lazyScope(tx, run));
  const [left] = await countPending(tx, { id: run.id, queued, now });
  if (stopRun) await endRun(tx, run, 'failed');
  else if (Number(left.pending_steps) <= 0) await endRun(tx, run, 'completed');
}

/** Runs `finish` for a visit in its own transaction; a repeated visit is silently done. */
async function finishAlone(ctx: AppContext, visit: RunStepRow, automation: AutomationRow, work: (tx: Executor) => Promise<Finish>): Promise<void> {
  try {
    await groupCommit(ctx.db, async (tx) => finishVisit(tx, visit, automation, await work(tx)));
  } catch (error) {
    if (error instanceof StaleVisit) return;
    throw error;
  }
}

export interface Scope {
  contact: Record<string, unknown> | null;
  email: Record<string, unknown> | null;
  payload: Record<string, any>;
  meta: Record<string, unknown>;
  run: { id: string; automation_id: string };
}

async function scopeOf(db: Executor, run: RunRow): Promise<{ scope: Scope; contact: ContactRow | null }> {
  const contact = run.contact_id ? ((await findContact(db, run.workspace_id, run.contact_id)) ?? null) : null;
  const email = run.email_id
    ? await db.selectFrom('emails').selectAll().where('workspace_id', '=', run.workspace_id).where('id', '=', run.email_id).executeTakeFirst()
    : undefined;
  return {
    contact,
    scope: {
      contact: contact
        ? { id: contact.id, email: contact.email, first_name: contact.first_name, last_name: contact.last_name, unsubscribed: contact.unsubscribed === 1, custom_fields: customFieldsOf(contact), ...customFieldsOf(contact) }
        : null,
      email: email
        ? { id: email.id, from: email.from, mail_from: email.from_address, to: email.to, subject: email.subject, status: email.status, message_id: email.message_id, created_at: email.created_at }
        : null,
      payload: JSON.parse(run.payload),
      meta: JSON.parse(run.meta),
      run: { id: run.id, automation_id: run.automation_id },
    },
  };
}

const ROOTS = ['contact', 'email', 'payload', 'meta', 'run'] as const;

function valueAt(root: unknown, path: string[]): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** `{{contact.email}}`, `{{payload.object.subject}}`, … replaced in every string of `value`;
 *  other `{{…}}` (Temple variables of a template) are left for the template. */
export function withPlaceholders(value: unknown, scope: Scope): any {
  if (typeof value === 'string') {
    return value.replace(/\{\{\s*((?:contact|email|payload|meta|run)(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g, (_m, path: string) => {
      const [root, ...rest] = path.split('.');
      const found = valueAt((scope as any)[root], rest);
      if (found === undefined || found === null) return '';
      return typeof found === 'object' ? JSON.stringify(found) : String(found);
    });
  }
  if (Array.isArray(value)) return value.map((v) => withPlaceholders(v, scope));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPlaceholders(v, scope)]));
  return value;
}

/** A condition's filter: bare fields against the contact (contact context) or the email, else the payload's object. */
function conditionMatches(filter: WebhookFilter, scope: Scope, context: string): boolean {
  // In the event context bare fields name the payload's object (or the payload itself: `object.x`).
  const fallback = context === 'contact' ? scope.contact : context === 'email' ? scope.email : { ...scope.payload, ...(scope.payload?.object ?? {}) };
  const test = (rule: WebhookFilter['rules'][number]) => {
    const [head, ...rest] = rule.field.split('.');
    if ((ROOTS as readonly string[]).includes(head) && rest.length > 0) return automationRuleMatches({ ...rule, field: rest.join('.') }, (scope as any)[head]);
    return automationRuleMatches(rule, fallback);
  };
  if (filter.rules.length === 0) return true;
  return filter.match === 'any' ? filter.rules.some(test) : filter.rules.every(test);
}

function pickVariant(variants: Array<{ key: string; weight: number }>): string {
  const total = variants.reduce((sum, v) => sum + Math.max(0, v.weight), 0);
  if (total <= 0) return variants[Math.floor(Math.random() * variants.length)].key;
  let r = Math.random() * total;
  for (const v of variants) {
    r -= Math.max(0, v.weight);
    if (r < 0) return v.key;
  }
  return variants[variants.length - 1].key;
}

const automationPrincipal = (workspaceId: string): Principal => ({ keyId: '', keyHash: '', workspaceId, scope: 'full', sendingDomainId: null });

/** A step failure the run records (the job is done); anything else is retried by the job. */
class StepFailure extends Error {}

function failureOf(error: unknown): string | null {
  if (error instanceof StepFailure) return error.message;
  if (error instanceof ApiError) {
    const body = error.body as Record<string, any>;
    const detail = Array.isArray(body.validation_errors) ? `: ${body.validation_errors.join(' ')}` : body.message && body.error ? `: ${body.message}` : '';
    return `${String(body.error ?? body.message ?? `HTTP ${error.status}`)}${detail}`;
  }
  return null;
}

// Every step job reads its visit, run and automation: compiled once.
const visitById = preparedQuery((db, p: { id: string }) => db.selectFrom('automation_run_steps').selectAll().where('id', '=', p.id));
const runById = preparedQuery((db, p: { id: string }) => db.selectFrom('automation_runs').selectAll().where('id', '=', p.id));

export async function runStepJob(ctx: AppContext, job: Job<{ run_step_id: string }>): Promise<void> {
  const [visit] = await visitById(ctx.db, { id: job.payload.run_step_id });
  if (!visit || (visit.status !== 'running' && visit.status !== 'waiting')) return;
  const [run] = await runById(ctx.db, { id: visit.run_id });
  if (!run || run.status !== 'running') return;
  const [automation] = await automationById(ctx.db, { id: run.automation_id });
  if (!automation) return;
  if (automation.status === 'paused') throw new RetryJobAt(nowMs() + 2000, 'the automation is paused');
  if (automation.status !== 'running') return;
  const step = parsedOf(automation).steps.find((s) => s.key === visit.step_key);
  const fail = (message: string) => finishAlone(ctx, visit, automation, async () => ({ status: 'failed', outcome: 'error', data: { error: message } }));
  if (!step || step.type !== 'action') return fail('The step no longer exists in the automation.');
  try {
    await runAction(ctx, job, automation, run, visit, step);
  } catch (error) {
    if (error instanceof StaleVisit) return;
    if (error instanceof ApiError && error.status === 429) {
      const retryAfter = Number((error.body as Record<string, unknown>).retry_after ?? 1);
      throw new RetryJobAt(nowMs() + Math.max(1, retryAfter) * 1000, 'sending limit reached');
    }
    const failure = failureOf(error);
    if (failure !== null) return fail(failure);
    if (job.attempts >= job.maxAttempts) return fail(`The step failed: ${(error as Error).message}`);
    throw error;
  }
}

async function runAction(ctx: AppContext, job: Job, automation: AutomationRow, run: RunRow, visit: RunStepRow, step: Step): Promise<void> {
  const workspaceId = run.workspace_id;
  const { scope, contact } = await scopeOf(ctx.db, run);
  const config = withPlaceholders(step.config ?? {}, scope) as Record<string, any>;
  const finish = (result: Finish | ((tx: Executor) => Promise<Finish>)) =>
    finishAlone(ctx, visit, automation, typeof result === 'function' ? result : async () => result);

  switch (step.action) {
    case 'end':
      return finish({ status: 'completed', outcome: 'completed', data: { result: 'ended' }, branches: [] });

    case 'wait': {
      const seconds = Number(step.config.seconds ?? 0);
      const delayMs = seconds * 1000;
      if (visit.status === 'waiting') {
        const data = JSON.parse(visit.data) as { resume_at_ms?: number };
        // A repeated first job (killed before it was deleted) finds the wait not yet due.
        if (data.resume_at_ms && nowMs() < data.resume_at_ms - 5) return;
        return finish({ status: 'completed', outcome: 'completed', data: { status: 'completed', delayMs, seconds } });
      }
      if (delayMs <= 0) return finish({ status: 'completed', outcome: 'completed', data: { status: 'completed', delayMs: 0, seconds: 0 } });
      const resumeAt = Math.floor(nowMs() + delayMs);
      await ctx.db.transaction().execute(async (tx) => {
        const now = nowIso();
        const waiting = await tx
          .updateTable('automation_run_steps')
          .set({ status: 'waiting', data: JSON.stringify({ status: 'waiting', delayMs, seconds, resume_at_ms: resumeAt }), updated_at: now })
          .where('id', '=', visit.id)
          .where('status', '=', 'running')
          .returning('id')
          .execute();
        if (waiting.length === 0) return;
        await enqueueJob(tx, STEP_JOB, { run_step_id: visit.id }, { runAt: resumeAt, maxAttempts: 10 });
      });
      return;
    }

    case 'condition': {
      const filter = normalizeFilter(step.config.filter);
      const matched = conditionMatches({ ...filter, rules: filter.rules.map((r) => ({ ...r, value: withPlaceholders(r.value, scope) })) }, scope, automation.context);
      return finish({ status: 'completed', outcome: matched ? 'matched' : 'not_matched', data: { result: matched ? 'yes' : 'no' }, branches: [matched ? 'yes' : 'no'] });
    }

    case 'experiment': {
      const variant = pickVariant(step.config.variants);
      return finish({ status: 'completed', outcome: variant, data: { variant }, branches: [variant, 'default'] });
    }

    case 'send_email': {
      const to = automation.context === 'contact' ? contact?.email : config.to;
      if (!to) throw new StepFailure(automation.context === 'contact' ? 'The run\'s contact no longer exists.' : 'The send_email step has no recipient (to).');
      const variables: Record<string, unknown> = {
        ...(scope.contact ?? {}),
        cf: scope.contact?.custom_fields ?? {},
        contact: scope.contact ?? {},
        payload: scope.payload,
        meta: scope.meta,
        ...(automation.context === 'contact' ? {} : { email: scope.email ?? {} }),
      };
      const request = await buildSendRequest(ctx, workspaceId, {
        template: config.template_id,
        from: config.from || undefined,
        subject: config.subject || undefined,
        reply_to: config.reply_to || undefined,
        to,
        variables,
      });
      Object.assign(request.message.headers, bulkMailHeaders(ctx, automation.id, workspaceId, request.message.from.address, automation.context === 'contact' ? contact : null));
      await acceptMessage(ctx, automationPrincipal(workspaceId), {
        ...request,
        inTransaction: async (tx, rows) => {
          const email = rows[0];
          const suppressed = email.status === 'suppressed';
          await finishVisit(tx, visit, automation, {
            status: 'completed',
            outcome: suppressed ? 'failed' : 'accepted',
            data: { result: suppressed ? 'suppressed' : 'sent', outcome: suppressed ? 'suppressed' : 'accepted', email_oid: email.id, to: email.to },
            emailId: email.id,
          });
        },
      });
      return;
    }

    case 'forward_email': {
      const emailId = config.email_id || run.email_id;
      if (!emailId) throw new StepFailure('There is no email to forward (email_id).');
      // The visit's id as the Idempotency-Key: a repeated job replays, it does not send again.
      const outcome = await forwardEmail(ctx, automationPrincipal(workspaceId), emailId, `automation-${visit.id}`, {
        to: config.to,
        include_headers: true,
        ...(config.from ? { from: config.from } : {}),
        ...(config.subject ? { subject: config.subject } : {}),
      });
      const body = outcome.body as { id?: string; ids?: Record<string, string>; data?: Array<{ id: string }> };
      const sentId = body.id ?? body.data?.[0]?.id ?? null;
      return finish({ status: 'completed', outcome: 'accepted', data: { result: 'sent', outcome: 'accepted', email_oid: sentId, to: config.to }, emailId: sentId });
    }

    case 'call_webhook': {
      const method = String(config.method ?? 'POST').toUpperCase();
      const headers: Record<string, string> = { 'user-agent': 'Postlane-Automations/1', ...(config.headers ?? {}) };
      let body: string | undefined;
      if (config.body !== undefined && config.body !== null && method !== 'GET') {
        body = typeof config.body === 'string' ? config.body : JSON.stringify(config.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = typeof config.body === 'string' ? 'text/plain' : 'application/json';
      }
      let outcome: string;
      let status: number | null = null;
      let detail: string | null = null;
      try {
        const url = parseHttpUrl(String(config.url));
        const address = await resolvePublicAddress(resolverFor(ctx), url.hostname, ctx.config.allowPrivateUrls);
        const response = await fetchPinned(url, address, { method, headers, body, timeoutMs: 10_000, maxBytes: 4096, truncate: true });
        status = response.status;
        outcome = `${Math.floor(response.status / 100)}xx`;
      } catch (error) {
        if (error instanceof UrlRefusedError) throw new StepFailure(`The webhook URL was refused: ${error.message}`);
        outcome = error instanceof FetchError && error.kind === 'timeout' ? 'timeout' : 'network_error';
        detail = (error as Error).message;
      }
      return finish({ status: 'completed', outcome, data: { result: outcome, status, ...(detail ? { error: detail } : {}) } });
    }

    case 'run_automation': {
      const target = await ctx.db.selectFrom('automations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', String(config.automation_id)).executeTakeFirst();
      if (!target) throw new StepFailure('The automation to run does not exist.');
      if (target.status !== 'running') throw new StepFailure(`The automation to run is ${target.status}, not running.`);
      const trigger = stepsOf(target).find((s) => s.type === 'trigger' && s.trigger === 'system.manual') ?? stepsOf(target).find((s) => s.type === 'trigger');
      let started: string | null = null;
      try {
        // The visit's id as the event: a repeated job cannot start a second run.
        const child = await startRun(ctx, target, {
          triggerKey: trigger!.key,
          event: 'system.manual',
          eventId: visit.id,
          payload: JSON.parse(run.payload),
          meta: { ...JSON.parse(run.meta), parent_run_id: run.id },
          contactId: target.context === 'contact' ? run.contact_id : null,
          emailId: target.context === 'email' ? run.email_id : null,
        });
        started = child.id;
      } catch (error) {
        if (!(error instanceof RunSkipped)) throw error;
        const existing = await ctx.db.selectFrom('automation_runs').select('id').where('automation_id', '=', target.id).where('event_id', '=', visit.id).executeTakeFirst();
        started = existing?.id ?? null;
        if (!started) return finish({ status: 'completed', outcome: 'skipped', data: { result: 'skipped', reason: error.message } });
      }
      return finish({ status: 'completed', outcome: 'started', data: { result: 'started', run_id: started } });
    }

    case 'add_to_audience':
    case 'remove_from_audience': {
      if (!contact) throw new StepFailure('The run\'s contact no longer exists.');
      const audience = await findAudience(ctx.db, workspaceId, String(config.audience_id));
      if (!audience) throw new StepFailure('The audience does not exist.');
      return finish(async (tx) => {
        if (step.action === 'add_to_audience') {
          const { outcome } = await subscribeContact(tx, workspaceId, audience, contact);
          return { status: 'completed', outcome, data: { result: outcome, audience_id: audience.id } };
        }
        const removed = await removeContactFromAudience(tx, workspaceId, audience, contact);
        return { status: 'completed', outcome: removed ? 'removed' : 'not_member', data: { result: removed ? 'removed' : 'not_member', audience_id: audience.id } };
      });
    }

    case 'edit_contact': {
      if (!contact) throw new StepFailure('The run\'s contact no longer exists.');
      const input: Record<string, any> = {};
      const custom: Record<string, unknown> = {};
      for (const field of config.fields as Array<{ key: string; value: unknown }>) {
        if (field.key === 'unsubscribed') input.unsubscribed = field.value === true || field.value === 'true';
        else if (['email', 'first_name', 'last_name'].includes(field.key)) input[field.key] = field.value === null ? null : String(field.value);
        else custom[field.key] = field.value;
      }
      if (Object.keys(custom).length > 0) input.merge_custom_fields = custom;
      return finish(async (tx) => {
        const fresh = (await findContact(tx, workspaceId, contact.id)) ?? contact;
        await updateContact(tx, workspaceId, fresh, input);
        return { status: 'completed', outcome: 'updated', data: { result: 'updated', fields: config.fields.map((f: { key: string }) => f.key) } };
      });
    }

    case 'add_to_suppressions': {
      const address = config.email || scope.email?.to || contact?.email;
      if (!address) throw new StepFailure('There is no address to suppress (email).');
      try {
        await createSuppression(ctx.db, workspaceId, { email: String(address), type: config.type ?? 'recipient', reason: config.reason ?? 'automation' });
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 409)) throw error;
      }
      return finish({ status: 'completed', outcome: 'suppressed', data: { result: 'suppressed', email: String(address).toLowerCase() } });
    }

    case 'remove_from_suppressions': {
      const address = config.email || scope.email?.to || contact?.email;
      if (!address) throw new StepFailure('There is no address to remove (email).');
      let removed = true;
      try {
        await deleteSuppression(ctx.db, workspaceId, String(address));
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) throw error;
        removed = false;
      }
      return finish({ status: 'completed', outcome: removed ? 'removed' : 'not_suppressed', data: { result: removed ? 'removed' : 'not_suppressed', email: String(address).toLowerCase() } });
    }

    case 'create_contact': {
      const address = config.email || (automation.context === 'email' ? scope.email?.to : undefined);
      if (!address) throw new StepFailure('There is no address for the contact (email).');
      const audience = config.audience_id ? await findAudience(ctx.db, workspaceId, String(config.audience_id)) : undefined;
      return finish(async (tx) => {
        const { contact: made, created } = await findOrCreateContact(tx, workspaceId, { email: String(address), ...(config.first_name ? { first_name: String(config.first_name) } : {}) });
        if (audience) await subscribeContact(tx, workspaceId, audience, made);
        return { status: 'completed', outcome: created ? 'created' : 'found', data: { result: created ? 'created' : 'found', contact_id: made.id } };
      });
    }
  }
  throw new StepFailure(`Unknown action ${step.action}.`);
}
