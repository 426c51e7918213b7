// Automations: https://emailit.com/docs/automations.md. Create (structure checked), list, retrieve,
// update (full configs checked), delete, start (full configs checked; from then on matching events
// start runs), pause (triggers ignored, runs hold at their next step), stop (running runs end
// `canceled`). While an automation runs, its triggers are rows of automation_triggers keyed by the
// event type that fires them, written in the same transaction as the status.
import type { AppContext } from '../../platform/context.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { looksLikeId, newId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { ApiError, fieldValidationError } from '../../platform/http/errors.ts';
import { perPageList, type Query } from '../../platform/http/lists.ts';
import { findSendingDomain } from '../domains/service.ts';
import { resolveTemplateForSend } from '../templates/service.ts';
import { findAudience } from '../audiences/service.ts';
import { parseAddressField, domainOf } from '../emails/service.ts';
import { resolverFor } from '../webhooks/service.ts';
import { parseHttpUrl, resolvePublicAddress, UrlRefusedError } from '../../platform/net.ts';
import {
  CONTEXTS,
  DEFAULT_SETTINGS,
  checkGraph,
  checkSettings,
  type AutomationContext,
  type Connection,
  type ConfigLookups,
  type Problems,
  type Settings,
  type Step,
} from './graph.ts';
import { sourcesOfTrigger } from './event-triggers.ts';
import { checkConfigs } from './checks.ts';
import { connectionsOf, settingsOf, stepsOf, type AutomationRow } from './rows.ts';

export { stepsOf, connectionsOf, settingsOf, type AutomationRow };

export const AUTOMATION_NOT_FOUND = 'Automation not found.';
export const STEP_NOT_FOUND = 'Step not found.';
export const RUN_NOT_FOUND = 'Run not found.';
export const notFound = (message: string) => new ApiError(404, { message });

export function automationObject(row: AutomationRow) {
  return {
    id: row.id,
    context: row.context,
    name: row.name,
    description: row.description,
    status: row.status,
    settings: JSON.parse(row.settings) as Settings,
    last_triggered_at: row.last_triggered_at,
    published_at: row.published_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    steps: JSON.parse(row.steps) as Step[],
    connections: JSON.parse(row.connections) as Connection[],
  };
}

export async function findAutomation(db: Executor, workspaceId: string, id: string): Promise<AutomationRow> {
  const row = looksLikeId(id, 'aut')
    ? await db.selectFrom('automations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
    : undefined;
  if (!row) throw notFound(AUTOMATION_NOT_FOUND);
  return row;
}

function lookups(ctx: AppContext, workspaceId: string): ConfigLookups {
  return {
    async templateFrom(idOrAlias) {
      const template = await resolveTemplateForSend(ctx.db, workspaceId, idOrAlias);
      return template ? (template.from ?? null) : undefined;
    },
    async audienceExists(id) {
      return looksLikeId(id, 'aud') && (await findAudience(ctx.db, workspaceId, id)) !== undefined;
    },
    async automationExists(id) {
      if (!looksLikeId(id, 'aut')) return false;
      return (
        (await ctx.db
          .selectFrom('automations')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', id)
          .executeTakeFirst()) !== undefined
      );
    },
    async fromProblem(from) {
      const { addresses, invalid } = parseAddressField(from);
      if (invalid.length > 0 || addresses.length !== 1) return 'The from must be one email address.';
      const domain = await findSendingDomain(ctx.db, ctx.secrets, workspaceId, domainOf(addresses[0].address));
      return domain?.verified ? null : `The domain ${domainOf(addresses[0].address)} is not a verified sending domain of the workspace.`;
    },
    async urlProblem(url) {
      // The webhooks' guard: http(s) only, and every address the host resolves to is public
      // (unless ALLOW_PRIVATE_URLS). The step checks again when it runs: DNS can change.
      try {
        await resolvePublicAddress(resolverFor(ctx), parseHttpUrl(url).hostname, ctx.config.allowPrivateUrls);
        return null;
      } catch (error) {
        if (error instanceof UrlRefusedError) return error.message;
        throw error;
      }
    },
  };
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface AutomationInput {
  context?: unknown;
  name?: unknown;
  description?: unknown;
  settings?: unknown;
  steps?: unknown;
  connections?: unknown;
}

function throwIf(problems: Problems): void {
  if (Object.keys(problems).length > 0) throw fieldValidationError(problems);
}

function checkName(value: unknown, problems: Problems, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '') (problems.name ??= []).push('The name field is required.');
  else if (value.length > 191) (problems.name ??= []).push('The name may not be greater than 191 characters.');
  else return value.trim();
  return undefined;
}

function checkDescription(value: unknown, problems: Problems): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'string') return value;
  (problems.description ??= []).push('The description must be a string or null.');
  return undefined;
}

/** Step ids: kept for keys that stay, new for new keys. */
function withIds(steps: Omit<Step, 'id'>[], previous: Step[] = []): Step[] {
  const ids = new Map(previous.map((s) => [s.key, s.id]));
  return steps.map((s) => ({ id: ids.get(s.key) ?? newId('aus'), ...s }));
}

/** The checks of a new automation: every field, the structure, and the configs (`full`: every
 *  check of every action, as update and start run them; else a draft's). */
async function checkNew(ctx: AppContext, workspaceId: string, body: AutomationInput, full: boolean) {
  if (!isObject(body)) throw fieldValidationError({ body: ['The request body must be a JSON object.'] });
  const problems: Problems = {};
  const context = body.context as AutomationContext;
  if (!CONTEXTS.includes(context)) (problems.context ??= []).push('The context is required: contact, email or event.');
  const name = checkName(body.name, problems, true);
  const description = checkDescription(body.description, problems);
  const settings = checkSettings(body.settings, DEFAULT_SETTINGS, problems);
  if (!CONTEXTS.includes(context)) return { problems };
  const graph = checkGraph(context, { steps: body.steps, connections: body.connections }, problems);
  await checkConfigs(context, graph, lookups(ctx, workspaceId), full, problems);
  return { problems, checked: { context, name, description, settings, graph } };
}

export async function createAutomation(ctx: AppContext, workspaceId: string, body: AutomationInput) {
  const { problems, checked } = await checkNew(ctx, workspaceId, body, false);
  throwIf(problems);
  const { context, name, description, settings, graph } = checked!;
  const now = nowIso();
  const row: AutomationRow = {
    id: newId('aut'),
    workspace_id: workspaceId,
    context,
    name: name!,
    description: description ?? null,
    status: 'draft',
    settings: JSON.stringify(settings),
    steps: JSON.stringify(withIds(graph.steps)),
    connections: JSON.stringify(graph.connections),
    running_runs: 0,
    started_at: null,
    last_triggered_at: null,
    published_at: null,
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('automations').values(row).execute();
  return automationObject(row);
}

/** What starting this definition would refuse, without saving it: the same checks as create,
 *  with every action's config checked as update and start check it. */
export async function validateAutomation(ctx: AppContext, workspaceId: string, body: AutomationInput) {
  const { problems } = await checkNew(ctx, workspaceId, body, true);
  return { valid: Object.keys(problems).length === 0, errors: problems };
}

export async function getAutomation(db: Db, workspaceId: string, id: string) {
  return automationObject(await findAutomation(db, workspaceId, id));
}

export async function listAutomations(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const base = db.selectFrom('automations').where('workspace_id', '=', workspaceId);
  const status = typeof query.status === 'string' ? query.status : undefined;
  const filtered = status ? base.where('status', '=', status) : base;
  return perPageList(
    filtered.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    filtered,
    query,
    automationObject,
    requestUrl,
  );
}

/** Writes the trigger rows of a running automation (replacing any). */
async function writeTriggers(tx: Executor, row: AutomationRow): Promise<void> {
  await tx.deleteFrom('automation_triggers').where('automation_id', '=', row.id).execute();
  const rows = stepsOf(row)
    .filter((s) => s.type === 'trigger' && s.trigger)
    .flatMap((s) =>
      sourcesOfTrigger(s.trigger!).map((event_type) => ({
        workspace_id: row.workspace_id,
        event_type,
        automation_id: row.id,
        step_key: s.key,
      })),
    );
  if (rows.length > 0) await tx.insertInto('automation_triggers').values(rows).execute();
}

export async function updateAutomation(ctx: AppContext, workspaceId: string, id: string, body: AutomationInput) {
  if (!isObject(body)) throw fieldValidationError({ body: ['The request body must be a JSON object.'] });
  const current = await findAutomation(ctx.db, workspaceId, id);
  const problems: Problems = {};
  if (body.context !== undefined && body.context !== current.context) (problems.context ??= []).push('The context cannot be changed.');
  const name = checkName(body.name, problems, false);
  const description = checkDescription(body.description, problems);
  const settings = checkSettings(body.settings, settingsOf(current), problems);
  const context = current.context as AutomationContext;
  const steps = body.steps ?? stepsOf(current);
  const connections = body.connections ?? connectionsOf(current);
  const graph = checkGraph(context, { steps, connections }, problems);
  await checkConfigs(context, graph, lookups(ctx, workspaceId), true, problems);
  throwIf(problems);
  const next: AutomationRow = {
    ...current,
    name: name ?? current.name,
    description: description === undefined ? current.description : description,
    settings: JSON.stringify(settings),
    steps: JSON.stringify(withIds(graph.steps, stepsOf(current))),
    connections: JSON.stringify(graph.connections),
    updated_at: nowIso(),
  };
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('automations')
      .set({
        name: next.name,
        description: next.description,
        settings: next.settings,
        steps: next.steps,
        connections: next.connections,
        updated_at: next.updated_at,
      })
      .where('id', '=', current.id)
      .execute();
    const fresh = await tx.selectFrom('automations').selectAll().where('id', '=', current.id).executeTakeFirstOrThrow();
    if (fresh.status === 'running') await writeTriggers(tx, fresh);
  });
  return automationObject(next);
}

/** Ends every running run of the automation (or of one contact) as canceled. */
export async function cancelRuns(tx: Executor, automationId: string, contactId?: string): Promise<number> {
  const now = nowIso();
  let query = tx
    .updateTable('automation_runs')
    .set({ status: 'canceled', active_subject: null, completed_at: now, updated_at: now })
    .where('automation_id', '=', automationId)
    .where('status', '=', 'running');
  if (contactId) query = query.where('contact_id', '=', contactId);
  const canceled = await query.returning(['id', 'counted']).execute();
  const places = canceled.filter((r) => Number(r.counted) === 1).length;
  if (canceled.length > 0) {
    if (places > 0) {
      await tx
        .updateTable('automations')
        .set((eb) => ({ running_runs: eb('running_runs', '-', places) }))
        .where('id', '=', automationId)
        .execute();
    }
    // Steps still waiting or running end with the run.
    const ids = canceled.map((r) => r.id);
    for (let i = 0; i < ids.length; i += 500) {
      await tx
        .updateTable('automation_run_steps')
        .set({
          status: 'failed',
          outcome: 'canceled',
          data: JSON.stringify({ error: 'The run was canceled.' }),
          completed_at: now,
          updated_at: now,
        })
        .where('run_id', 'in', ids.slice(i, i + 500))
        .where('status', 'in', ['running', 'waiting'])
        .execute();
    }
  }
  return canceled.length;
}

export async function deleteAutomation(db: Db, workspaceId: string, id: string) {
  const row = await findAutomation(db, workspaceId, id);
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('automation_triggers').where('automation_id', '=', row.id).execute();
    await tx.deleteFrom('automation_cooldowns').where('automation_id', '=', row.id).execute();
    const runs = tx.selectFrom('automation_runs').select('id').where('automation_id', '=', row.id);
    await tx.deleteFrom('automation_run_steps').where('run_id', 'in', runs).execute();
    await tx.deleteFrom('automation_runs').where('automation_id', '=', row.id).execute();
    await tx.deleteFrom('automations').where('id', '=', row.id).execute();
  });
  return { id: row.id, deleted: true as const };
}

async function setStatus(db: Db, row: AutomationRow, status: string, extra: Partial<AutomationRow> = {}): Promise<AutomationRow> {
  return db.transaction().execute(async (tx) => {
    const now = nowIso();
    const next = { ...row, ...extra, status, updated_at: now };
    await tx
      .updateTable('automations')
      .set({ status, updated_at: now, ...extra })
      .where('id', '=', row.id)
      .execute();
    if (status === 'running') await writeTriggers(tx, next);
    else await tx.deleteFrom('automation_triggers').where('automation_id', '=', row.id).execute();
    if (status === 'stopped') {
      await cancelRuns(tx, row.id);
      await tx.updateTable('automations').set({ running_runs: 0 }).where('id', '=', row.id).execute();
    }
    return tx.selectFrom('automations').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  });
}

/** draft, paused or stopped → running; every config checked first (400 with `errors`). */
export async function startAutomation(ctx: AppContext, workspaceId: string, id: string) {
  const row = await findAutomation(ctx.db, workspaceId, id);
  if (row.status === 'running') return automationObject(row);
  const problems: Problems = {};
  const context = row.context as AutomationContext;
  const graph = checkGraph(context, { steps: stepsOf(row), connections: connectionsOf(row) }, problems);
  await checkConfigs(context, graph, lookups(ctx, workspaceId), true, problems);
  throwIf(problems);
  const now = nowIso();
  // A resume keeps its start: events while paused are ignored by status, not by time.
  const startedAt = row.status === 'paused' && row.started_at ? row.started_at : now;
  return automationObject(await setStatus(ctx.db, row, 'running', { started_at: startedAt, published_at: now }));
}

export async function pauseAutomation(db: Db, workspaceId: string, id: string) {
  const row = await findAutomation(db, workspaceId, id);
  if (row.status !== 'running')
    throw fieldValidationError({ status: [`Only a running automation can be paused (this one is ${row.status}).`] }, 409);
  return automationObject(await setStatus(db, row, 'paused'));
}

export async function stopAutomation(db: Db, workspaceId: string, id: string) {
  const row = await findAutomation(db, workspaceId, id);
  if (row.status === 'draft') throw fieldValidationError({ status: ['A draft automation has not been started.'] }, 409);
  return automationObject(await setStatus(db, row, 'stopped'));
}
