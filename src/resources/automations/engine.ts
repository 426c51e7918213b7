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
// - What a step does is its action's: one module per action type (actions/, the table in
//   actions/index.ts). A step job claims its visit, looks the action up, runs it with the visit's
//   scope and config, and records the end the action reports, which reaches the successors.
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { enqueueJob, RetryJobAt, type Job } from '../../platform/jobs.ts';
import { getCredits, spendCreditsAtCommit } from '../../platform/credits.ts';
import { ApiError } from '../../platform/http/errors.ts';
import type { EmittedEvent, EventSubscriber, PlannedReaction } from '../../platform/events.ts';
import { preparedQuery } from '../../platform/db/prepared.ts';
import { groupCommit } from '../../platform/db/group-commit.ts';
import { normalizeFilter } from '../webhooks/service.ts';
import { automationFilterMatches } from './filter.ts';
import { findContactByEmail } from '../contacts/service.ts';
import type { Connection, Settings, Step } from './graph.ts';
import { firesTriggers } from './event-triggers.ts';
import { connectionsOf, settingsOf, stepsOf, type AutomationRow } from './rows.ts';
import { RunSkipped, scopeOf, withPlaceholders, type RunInput, type RunRow, type RunStepRow, type Scope } from './run-context.ts';
import { actionOf, StepFailure, type Finish, type StepRun } from './actions/index.ts';

export { RunSkipped, withPlaceholders, type RunInput, type RunRow, type RunStepRow, type Scope };

export const TRIGGER_JOB = 'automation.trigger';
export const STEP_JOB = 'automation.step';

/** Thrown inside a step's transaction when its visit was already done (a repeated job). */
class StaleVisit extends Error {}

// ---------------------------------------------------------------------------------------
// Triggers

const triggersFor = preparedQuery((db, p: { workspaceId: string; type: string }) =>
  db
    .selectFrom('automation_triggers')
    .select(['automation_id', 'step_key'])
    .where('workspace_id', '=', p.workspaceId)
    .where('event_type', '=', p.type),
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
      {
        automation_id: row.automation_id,
        step_key: row.step_key,
        event: { id: event.id, type: event.type, object: event.object, created_at: event.createdAt },
      },
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
          await enqueueTriggers(
            tx,
            event,
            triggers.filter((t) => t.workspace_id === event.workspaceId && t.event_type === event.type),
          );
        }
      },
    };
    if (first.emailIds.length > 0) reaction.writes = [{ sql: OUTCOME_UPDATES, values: [first.emailIds, first.outcomes, first.froms] }];
    if (sources.length > 0)
      reaction.read = { sql: TRIGGER_LOOKUP, values: [sources.map((e) => e.workspaceId), sources.map((e) => e.type)] };
    return reaction;
  },
};

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
async function triggeredRun(
  tx: Executor,
  { automation_id, step_key, event }: TriggerJob,
): Promise<{ automation: AutomationRow; input: RunInput } | null> {
  const [automation] = await automationById(tx, { id: automation_id });
  if (!automation || automation.status !== 'running' || !automation.started_at || event.created_at < automation.started_at) return null;
  const trigger = parsedOf(automation).steps.find((s) => s.key === step_key && s.type === 'trigger');
  if (!trigger?.trigger) return null;
  const object = event.object;
  const config = trigger.config ?? {};
  if (trigger.trigger === 'contact.added_to_audience' && event.type === 'subscriber.created' && object.subscribed !== true) return null;
  if (
    config.audience_id &&
    (trigger.trigger === 'contact.added_to_audience' || trigger.trigger === 'contact.removed_from_audience') &&
    object.audience?.id !== config.audience_id
  )
    return null;
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
async function startRunWith(
  ctx: AppContext,
  decide: (tx: Executor) => Promise<{ automation: AutomationRow; input: RunInput }>,
): Promise<RunRow> {
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
const RUN_COLUMNS = [
  'id',
  'workspace_id',
  'automation_id',
  'trigger_key',
  'contact_id',
  'email_id',
  'event_id',
  'event',
  'payload',
  'meta',
  'status',
  'active_subject',
  'pending_steps',
  'counted',
  'started_at',
  'completed_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof RunRow>;
const STEP_COLUMNS = [
  'id',
  'run_id',
  'automation_id',
  'step_key',
  'step_id',
  'visit',
  'status',
  'outcome',
  'email_id',
  'data',
  'started_at',
  'completed_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof RunStepRow>;
const pick = <T, K extends keyof T>(p: T, keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, p[k]])) as Pick<T, K>;
const insertRun = preparedQuery((db, p: RunRow) =>
  db
    .insertInto('automation_runs')
    .values(pick(p, RUN_COLUMNS))
    .onConflict((oc) => oc.doNothing())
    .returning('id'),
);
const setPendingSteps = preparedQuery((db, p: { id: string; pending: number }) =>
  db.updateTable('automation_runs').set({ pending_steps: p.pending }).where('id', '=', p.id),
);
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
  const inserted = await tx
    .insertInto('automation_runs')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .execute();
  if (inserted.length === 0)
    throw new RunSkipped(
      input.eventId
        ? 'This event already started a run, or the contact or email already has a running run.'
        : 'The contact or email already has a running run (re-entry is off).',
    );
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
    if (stamped.length === 0)
      throw new RunSkipped(`The contact or email started a run less than ${settings.cooldown_seconds} seconds ago.`);
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
  const firsts = connections
    .filter((c) => c.from === input.triggerKey)
    .map((c) => steps.find((s) => s.key === c.to)!)
    .filter(Boolean);
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
async function advance(
  tx: Executor,
  run: RunRow,
  automation: AutomationRow,
  from: string,
  steps: Step[],
  scope: ScopeLoader,
): Promise<number> {
  let queued = 0;
  for (const step of steps) {
    // Steps that only read and decide are done here, in the transaction that reaches them.
    const instant = actionOf(step.action)?.instant;
    if (instant?.applies(step.config ?? {})) {
      let result: Finish | null = null;
      try {
        result = instant.decide(step, instant.readsScope ? await scope() : EMPTY_SCOPE, automation.context);
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
  db
    .updateTable('automation_runs')
    .set({ status: p.status, active_subject: null, completed_at: p.now, updated_at: p.now })
    .where('id', '=', p.id)
    .where('status', '=', 'running')
    .returning('counted'),
);

/** Ends a running run (no-op otherwise), giving back its concurrency place. */
export async function endRun(
  tx: Executor,
  run: Pick<RunRow, 'id' | 'automation_id'>,
  status: 'completed' | 'failed' | 'canceled',
): Promise<boolean> {
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

// The statements of every visit's end, compiled once.
const endVisit = preparedQuery(
  (db, p: { id: string; status: string; outcome: string | null; data: string; emailId: string | null; now: string }) =>
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
  const done = await endVisit(tx, {
    id: visit.id,
    status: finish.status,
    outcome: finish.outcome,
    data: JSON.stringify(finish.data),
    emailId: finish.emailId ?? null,
    now,
  });
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
async function finishAlone(
  ctx: AppContext,
  visit: RunStepRow,
  automation: AutomationRow,
  work: (tx: Executor) => Promise<Finish>,
): Promise<void> {
  try {
    await groupCommit(ctx.db, async (tx) => finishVisit(tx, visit, automation, await work(tx)));
  } catch (error) {
    if (error instanceof StaleVisit) return;
    throw error;
  }
}

function failureOf(error: unknown): string | null {
  if (error instanceof StepFailure) return error.message;
  if (error instanceof ApiError) {
    const body = error.body as Record<string, any>;
    const detail = Array.isArray(body.validation_errors)
      ? `: ${body.validation_errors.join(' ')}`
      : body.message && body.error
        ? `: ${body.message}`
        : '';
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
  const fail = (message: string) =>
    finishAlone(ctx, visit, automation, async () => ({ status: 'failed', outcome: 'error', data: { error: message } }));
  if (!step || step.type !== 'action') return fail('The step no longer exists in the automation.');
  try {
    await runAction(ctx, automation, run, visit, step);
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

/** The visit's action, looked up in the action table (actions/index.ts) and run with what it needs. */
async function runAction(ctx: AppContext, automation: AutomationRow, run: RunRow, visit: RunStepRow, step: Step): Promise<void> {
  const { scope, contact } = await scopeOf(ctx.db, run);
  const config = withPlaceholders(step.config ?? {}, scope) as Record<string, any>;
  const action = actionOf(step.action);
  if (!action) throw new StepFailure(`Unknown action ${step.action}.`);
  const stepRun: StepRun = {
    ctx,
    workspaceId: run.workspace_id,
    automation,
    run,
    visit,
    step,
    config,
    scope,
    contact,
    finish: (result) => finishAlone(ctx, visit, automation, typeof result === 'function' ? result : async () => result),
    finishIn: (tx, result) => finishVisit(tx, visit, automation, result),
    holdUntil: (resumeAtMs, data) => holdVisit(ctx, visit, resumeAtMs, data),
    startRun: (target, input) => startRun(ctx, target, input),
  };
  await action.run(stepRun);
}

/** A wait: the visit waiting and its job due again at `resumeAtMs`, in one transaction that
 *  starts with the visit's conditional update (a visit already waiting or ended stays as it is). */
async function holdVisit(ctx: AppContext, visit: RunStepRow, resumeAtMs: number, data: Record<string, unknown>): Promise<void> {
  await ctx.db.transaction().execute(async (tx) => {
    const waiting = await tx
      .updateTable('automation_run_steps')
      .set({ status: 'waiting', data: JSON.stringify(data), updated_at: nowIso() })
      .where('id', '=', visit.id)
      .where('status', '=', 'running')
      .returning('id')
      .execute();
    if (waiting.length === 0) return;
    await enqueueJob(tx, STEP_JOB, { run_step_id: visit.id }, { runAt: resumeAtMs, maxAttempts: 10 });
  });
}
