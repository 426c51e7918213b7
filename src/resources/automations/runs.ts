// Runs over the API: the manual trigger (a running automation with a
// `system.manual` trigger; `payload.contact_id` in contact automations), runs list (page,
// per_page, status, contact_id), retrieve, cancel, removing a contact (its running runs end
// canceled), and the statistics of steps (https://emailit.com/docs/automations.md).
import { sql } from 'kysely';
import type { AppContext } from '../../platform/context.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { perPageList, type Query } from '../../platform/http/lists.ts';
import { findContact } from '../contacts/service.ts';
import { endRun, RunSkipped, startRun, type RunRow, type RunStepRow } from './engine.ts';
import { AUTOMATION_NOT_FOUND, RUN_NOT_FOUND, STEP_NOT_FOUND, cancelRuns, findAutomation, notFound, stepsOf } from './service.ts';

const unprocessable = (message: string) => new ApiError(422, { message });

function runObject(run: RunRow, steps: RunStepRow[]) {
  return {
    id: run.id,
    automation_id: run.automation_id,
    contact_id: run.contact_id,
    email_id: run.email_id,
    event_id: run.event_id?.startsWith('evt_') ? run.event_id : null,
    event: run.event,
    payload: JSON.parse(run.payload),
    meta: JSON.parse(run.meta),
    status: run.status,
    started_at: run.started_at,
    completed_at: run.completed_at,
    created_at: run.created_at,
    updated_at: run.updated_at,
    run_steps: steps.map((s) => {
      const { resume_at_ms: _internal, ...data } = JSON.parse(s.data) as Record<string, unknown>;
      return {
        step_id: s.step_id,
        step_key: s.step_key,
        status: s.status,
        data,
        started_at: s.started_at,
        completed_at: s.completed_at,
        created_at: s.created_at,
      };
    }),
  };
}

async function stepsOfRuns(db: Executor, runIds: string[]): Promise<Map<string, RunStepRow[]>> {
  const out = new Map<string, RunStepRow[]>(runIds.map((id) => [id, []]));
  if (runIds.length === 0) return out;
  const rows = await db
    .selectFrom('automation_run_steps')
    .selectAll()
    .where('run_id', 'in', runIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  for (const row of rows) out.get(row.run_id)!.push(row);
  return out;
}

export async function triggerAutomation(ctx: AppContext, workspaceId: string, id: string, payload: Record<string, unknown> = {}) {
  const automation = await findAutomation(ctx.db, workspaceId, id);
  if (automation.status !== 'running')
    throw unprocessable(`The automation is ${automation.status}; only a running automation can be triggered.`);
  const trigger = stepsOf(automation).find((s) => s.type === 'trigger' && s.trigger === 'system.manual');
  if (!trigger) throw unprocessable('The automation has no system.manual trigger.');
  let contactId: string | null = null;
  let emailId: string | null = null;
  if (automation.context === 'contact') {
    if (typeof payload.contact_id !== 'string' || payload.contact_id === '')
      throw unprocessable('In a contact automation the payload needs contact_id.');
    const contact = await findContact(ctx.db, workspaceId, payload.contact_id);
    if (!contact) throw unprocessable('The payload.contact_id names no contact of the workspace.');
    contactId = contact.id;
  } else if (automation.context === 'email' && payload.email_id !== undefined) {
    const email =
      typeof payload.email_id === 'string'
        ? await ctx.db
            .selectFrom('emails')
            .select('id')
            .where('workspace_id', '=', workspaceId)
            .where('id', '=', payload.email_id)
            .executeTakeFirst()
        : undefined;
    if (!email) throw unprocessable('The payload.email_id names no email of the workspace.');
    emailId = email.id;
  }
  let run: RunRow;
  try {
    run = await startRun(ctx, automation, {
      triggerKey: trigger.key,
      event: 'system.manual',
      eventId: null,
      payload: { ...payload, object: (payload.object as Record<string, unknown> | undefined) ?? payload },
      meta: { source: 'manual' },
      contactId,
      emailId,
    });
  } catch (error) {
    if (error instanceof RunSkipped) throw new ApiError(409, { message: `No run was started: ${error.message}` });
    throw error;
  }
  return runObject(run, (await stepsOfRuns(ctx.db, [run.id])).get(run.id)!);
}

export async function listRuns(db: Db, workspaceId: string, id: string, query: Query, requestUrl: string) {
  const automation = await findAutomation(db, workspaceId, id);
  let base = db.selectFrom('automation_runs').where('automation_id', '=', automation.id);
  if (typeof query.status === 'string' && query.status) base = base.where('status', '=', query.status);
  if (typeof query.contact_id === 'string' && query.contact_id) base = base.where('contact_id', '=', query.contact_id);
  const page = await perPageList(
    base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    base,
    query,
    (row) => row,
    requestUrl,
  );
  const steps = await stepsOfRuns(
    db,
    page.data.map((r) => r.id),
  );
  return { ...page, data: page.data.map((r) => runObject(r, steps.get(r.id)!)) };
}

async function findRun(db: Executor, automationId: string, runId: string): Promise<RunRow> {
  const run = looksLikeId(runId, 'aur')
    ? await db
        .selectFrom('automation_runs')
        .selectAll()
        .where('automation_id', '=', automationId)
        .where('id', '=', runId)
        .executeTakeFirst()
    : undefined;
  if (!run) throw notFound(RUN_NOT_FOUND);
  return run;
}

export async function getRun(db: Db, workspaceId: string, id: string, runId: string) {
  const automation = await findAutomation(db, workspaceId, id);
  const run = await findRun(db, automation.id, runId);
  return runObject(run, (await stepsOfRuns(db, [run.id])).get(run.id)!);
}

export async function cancelRun(db: Db, workspaceId: string, id: string, runId: string) {
  const automation = await findAutomation(db, workspaceId, id);
  const run = await findRun(db, automation.id, runId);
  if (run.status !== 'running') throw unprocessable(`The run is ${run.status}; only a running run can be canceled.`);
  await db.transaction().execute(async (tx) => {
    if (await endRun(tx, run, 'canceled')) {
      const now = nowIso();
      await tx
        .updateTable('automation_run_steps')
        .set({
          status: 'failed',
          outcome: 'canceled',
          data: JSON.stringify({ error: 'The run was canceled.' }),
          completed_at: now,
          updated_at: now,
        })
        .where('run_id', '=', run.id)
        .where('status', 'in', ['running', 'waiting'])
        .execute();
    }
  });
  return getRun(db, workspaceId, id, runId);
}

export async function removeContact(db: Db, workspaceId: string, id: string, contactRef: string) {
  const automation = await findAutomation(db, workspaceId, id);
  const contact = await findContact(db, workspaceId, contactRef);
  if (!contact) throw new ApiError(404, { message: 'Contact not found.' });
  const canceled = await db.transaction().execute((tx) => cancelRuns(tx, automation.id, contact.id));
  return { automation_id: automation.id, contact_id: contact.id, canceled_runs: canceled };
}

// ---------------------------------------------------------------------------------------
// Statistics

const EMAIL_OUTCOMES = ['accepted', 'delivered', 'loaded', 'clicked', 'bounced', 'failed', 'complained', 'unsubscribed', 'canceled'];

interface StatsFilter {
  since?: string;
  until?: string;
  runIds?: string[];
}

function isoBound(value: string | undefined, name: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new ApiError(400, { message: 'Validation failed', errors: { [name]: [`The ${name} must be an RFC 3339 date-time.`] } });
  return new Date(ms).toISOString().replace('Z', '000Z');
}

export function statsFilterOf(query: Query): StatsFilter {
  const ids = [query['run_ids[]'], query.run_ids].flat().filter((v): v is string => typeof v === 'string' && v !== '');
  return {
    since: isoBound(query.since as string | undefined, 'since'),
    until: isoBound(query.until as string | undefined, 'until'),
    runIds: ids.length ? ids : undefined,
  };
}

function emptyStats(action: string | null) {
  const byOutcome: Record<string, number> = {};
  if (action === 'send_email' || action === 'forward_email') for (const o of EMAIL_OUTCOMES) byOutcome[o] = 0;
  if (action === 'condition') Object.assign(byOutcome, { matched: 0, not_matched: 0 });
  return {
    total: 0,
    by_status: { running: 0, waiting: 0, completed: 0, failed: 0 } as Record<string, number>,
    by_outcome: byOutcome,
    ...(action === 'send_email'
      ? {
          funnel: { accepted: 0, delivered: 0, loaded: 0, clicked: 0, bounced: 0, failed: 0, complained: 0, unsubscribed: 0 } as Record<
            string,
            number
          >,
        }
      : {}),
  };
}

type StepStats = ReturnType<typeof emptyStats>;

export async function automationStats(
  db: Db,
  workspaceId: string,
  id: string,
  filter: StatsFilter,
  onlyKey?: string,
): Promise<Record<string, StepStats>> {
  const automation = await findAutomation(db, workspaceId, id);
  const steps = stepsOf(automation);
  if (onlyKey !== undefined && !steps.some((s) => s.key === onlyKey)) throw notFound(STEP_NOT_FOUND);
  let query = db
    .selectFrom('automation_run_steps as s')
    .innerJoin('automation_runs as r', 'r.id', 's.run_id')
    .select(['s.step_key', 's.status', 's.outcome', sql<number>`count(*)`.as('n')])
    .where('s.automation_id', '=', automation.id)
    .groupBy(['s.step_key', 's.status', 's.outcome']);
  if (onlyKey !== undefined) query = query.where('s.step_key', '=', onlyKey);
  if (filter.since) query = query.where('r.created_at', '>=', filter.since);
  if (filter.until) query = query.where('r.created_at', '<', filter.until);
  if (filter.runIds) query = query.where('r.id', 'in', filter.runIds);
  const rows = await query.execute();
  const out: Record<string, StepStats> = {};
  for (const step of steps)
    if (onlyKey === undefined || step.key === onlyKey) out[step.key] = emptyStats(step.type === 'trigger' ? null : step.action);
  for (const row of rows) {
    const stats = out[row.step_key];
    if (!stats) continue;
    const n = Number(row.n);
    stats.total += n;
    stats.by_status[row.status] = (stats.by_status[row.status] ?? 0) + n;
    const outcome = row.status === 'failed' && row.outcome !== 'canceled' ? 'error' : row.outcome;
    if (outcome && (row.status === 'completed' || row.status === 'failed'))
      stats.by_outcome[outcome] = (stats.by_outcome[outcome] ?? 0) + n;
    if ('funnel' in stats && stats.funnel && row.status === 'completed' && outcome) {
      const f = stats.funnel;
      const reached = { accepted: 0, delivered: 1, loaded: 2, clicked: 3, complained: 1 }[outcome as 'accepted'];
      if (reached !== undefined) {
        f.accepted += n;
        if (reached >= 1) f.delivered += n;
        if (reached >= 2) f.loaded += n;
        if (reached >= 3) f.clicked += n;
      } else if (outcome === 'bounced' || outcome === 'failed' || outcome === 'canceled') {
        f.accepted += n;
      }
      if (outcome in f && !['accepted', 'delivered', 'loaded', 'clicked'].includes(outcome)) f[outcome] += n;
    }
  }
  return out;
}

export { AUTOMATION_NOT_FOUND };
