// Webhooks: https://emailit.com/docs/api-reference/webhooks.md. The secret is sealed at rest and
// returned only by create, retrieve and reset-secret; the URL's hostname is resolved on save and
// must reach a public address (unless ALLOW_PRIVATE_URLS).
import type { Resolver } from 'node:dns/promises';
import type { AppContext } from '../../platform/context.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { createResolver } from '../../platform/dns.ts';
import { newId, looksLikeId } from '../../platform/ids.ts';
import { nowIso } from '../../platform/clock.ts';
import { ApiError, conflictError, plainError, planRequiredError } from '../../platform/http/errors.ts';
import { applyListQuery, pageLimitList, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { parseHttpUrl, resolvePublicAddress, UrlRefusedError } from '../../platform/net.ts';
import { getWorkspace, type Plan, type Workspace } from '../workspaces/service.ts';
import { FilterError, normalizeFilter, type WebhookFilter } from '../../platform/event-filter.ts';
import { newWebhookSecret } from './policy.ts';
import { forgetSubscriptions, stopDeliveries } from './queue.ts';
import type { WebhookRow } from './tables.ts';
import { transact } from '../../platform/db/transact.ts';

// The filter language, offered to the features that filter events too (automations).
export {
  FILTER_OPERATORS,
  MAX_FILTER_RULES,
  normalizeFilter,
  valuesAt,
  type FilterRule,
  type WebhookFilter,
} from '../../platform/event-filter.ts';

/** Webhook endpoints per plan (https://emailit.com/docs/limits.md). */
export const WEBHOOK_LIMITS: Record<Plan, number> = { payg: 3, pro: 10, business: 100, custom: 100 };

export function filtersAllowed(plan: Plan): boolean {
  return plan !== 'payg';
}

export function webhookObject(row: WebhookRow, plan: Plan, secret?: string) {
  return {
    object: 'webhook' as const,
    id: row.id,
    name: row.name,
    url: row.url,
    all_events: row.all_events === 1,
    enabled: row.enabled === 1,
    events: JSON.parse(row.events) as string[],
    filter: row.filter === null ? null : (JSON.parse(row.filter) as WebhookFilter),
    filters_allowed: filtersAllowed(plan),
    last_used_at: row.last_used_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(secret !== undefined ? { secret } : {}),
  };
}

const resolvers = new WeakMap<AppContext, Resolver>();
export function resolverFor(ctx: AppContext): Resolver {
  let resolver = resolvers.get(ctx);
  if (!resolver) resolvers.set(ctx, (resolver = createResolver(ctx.config.dnsServers)));
  return resolver;
}

/** The URL as given, once its hostname resolves to addresses we may post to. */
async function checkUrl(ctx: AppContext, value: string): Promise<string> {
  const url = value.trim();
  try {
    const parsed = parseHttpUrl(url);
    await resolvePublicAddress(resolverFor(ctx), parsed.hostname, ctx.config.allowPrivateUrls);
  } catch (error) {
    if (error instanceof UrlRefusedError) throw plainError(400, `Invalid url: ${error.message}`);
    throw error;
  }
  return url;
}

export interface FilterInput {
  match?: string;
  rules: Array<{ field: string; operator: string; value?: unknown }>;
}

function checkFilter(input: FilterInput | null | undefined, workspace: Workspace): WebhookFilter | null | undefined {
  if (input === undefined || input === null) return input;
  let filter: WebhookFilter;
  try {
    filter = normalizeFilter(input);
  } catch (error) {
    if (error instanceof FilterError) throw plainError(400, `Invalid filter: ${error.message}`);
    throw error;
  }
  if (filter.rules.length > 0 && !filtersAllowed(workspace.plan)) {
    throw planRequiredError('pro', 'Webhook payload filters are available on the Pro, Business and Custom plans');
  }
  return filter;
}

function checkName(value: string): string {
  const name = value.trim();
  if (name === '') throw plainError(400, 'name must not be empty');
  return name;
}

function checkEvents(events: string[]): string[] {
  return [...new Set(events.map((e) => e.trim()).filter(Boolean))];
}

async function requireWorkspace(db: Executor, workspaceId: string): Promise<Workspace> {
  const workspace = await getWorkspace(db, workspaceId);
  if (!workspace) throw plainError(404, 'Workspace not found');
  return workspace;
}

async function findByName(db: Executor, workspaceId: string, name: string) {
  return db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst();
}

const nameConflict = (row: { id: string; name: string }) =>
  conflictError('A webhook with this name already exists', { object: 'webhook', id: row.id, name: row.name });

/** The webhook a path identifier names: its `wh_` id, else its name. */
export async function resolveWebhook(db: Executor, workspaceId: string, idOrName: string): Promise<WebhookRow> {
  const row =
    (looksLikeId(idOrName, 'wh')
      ? await db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', idOrName).executeTakeFirst()
      : undefined) ?? (await findByName(db, workspaceId, idOrName));
  if (!row) throw plainError(404, 'Webhook not found');
  return row;
}

async function countWebhooks(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export interface CreateWebhookInput {
  name: string;
  url: string;
  all_events?: boolean;
  enabled?: boolean;
  events?: string[];
  filter?: FilterInput | null;
}

export async function createWebhook(ctx: AppContext, workspaceId: string, input: CreateWebhookInput) {
  const name = checkName(input.name);
  const workspace = await requireWorkspace(ctx.db, workspaceId);
  const filter = checkFilter(input.filter, workspace) ?? null;
  const url = await checkUrl(ctx, input.url);
  const allEvents = input.all_events ?? false;
  const secret = newWebhookSecret();
  const now = nowIso();
  const row: WebhookRow = {
    id: newId('wh'),
    workspace_id: workspaceId,
    name,
    url,
    all_events: allEvents ? 1 : 0,
    enabled: input.enabled === false ? 0 : 1,
    events: JSON.stringify(allEvents ? [] : checkEvents(input.events ?? [])),
    filter: filter ? JSON.stringify(filter) : null,
    secret: ctx.secrets.seal(secret),
    last_used_at: null,
    failing_since: null,
    failure_notified_at: null,
    consecutive_failures: 0,
    backoff_until: null,
    disabled_reason: null,
    lock_until: null,
    lock_owner: null,
    created_at: now,
    updated_at: now,
  };
  await transact(ctx.db, async (tx) => {
    // Serialise creations per workspace so that the plan limit holds under concurrency.
    if (ctx.dialect === 'postgres') await tx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().execute();
    const existing = await findByName(tx, workspaceId, name);
    if (existing) throw nameConflict(existing);
    const used = await countWebhooks(tx, workspaceId);
    const limit = WEBHOOK_LIMITS[workspace.plan];
    if (used >= limit) {
      throw new ApiError(422, {
        error: `Webhook limit reached: the ${planLabel(workspace.plan)} plan allows ${limit} webhooks`,
        usage: { used, limit },
      });
    }
    try {
      await tx.insertInto('webhooks').values(row).execute();
    } catch (error) {
      // On PostgreSQL the transaction is aborted: transact runs it again and the check above finds the clash.
      if (isUniqueViolation(error) && ctx.dialect !== 'postgres') {
        const clash = await findByName(tx, workspaceId, name);
        throw nameConflict(clash ?? { id: row.id, name });
      }
      throw error;
    }
  });
  forgetSubscriptions(workspaceId);
  return webhookObject(row, workspace.plan, secret);
}

function planLabel(plan: Plan): string {
  return { payg: 'Pay as you go', pro: 'Pro', business: 'Business', custom: 'Custom' }[plan];
}

export async function getWebhook(ctx: AppContext, workspaceId: string, idOrName: string) {
  const row = await resolveWebhook(ctx.db, workspaceId, idOrName);
  const workspace = await requireWorkspace(ctx.db, workspaceId);
  return webhookObject(row, workspace.plan, ctx.secrets.open(row.secret));
}

export interface UpdateWebhookInput {
  name?: string;
  url?: string;
  all_events?: boolean;
  enabled?: boolean;
  events?: string[];
  filter?: FilterInput | null;
}

export async function updateWebhook(ctx: AppContext, workspaceId: string, idOrName: string, input: UpdateWebhookInput) {
  const given = (['name', 'url', 'all_events', 'enabled', 'events', 'filter'] as const).filter((key) => input[key] !== undefined);
  if (given.length === 0) throw plainError(400, 'At least one of name, url, all_events, enabled, events or filter is required');
  const current = await resolveWebhook(ctx.db, workspaceId, idOrName);
  const workspace = await requireWorkspace(ctx.db, workspaceId);
  const name = input.name !== undefined ? checkName(input.name) : undefined;
  const filter = checkFilter(input.filter, workspace);
  const url = input.url !== undefined && input.url.trim() !== current.url ? await checkUrl(ctx, input.url) : undefined;

  const updated = await transact(ctx.db, async (tx) => {
    const row = await resolveWebhook(tx, workspaceId, current.id);
    if (name !== undefined && name !== row.name) {
      const clash = await findByName(tx, workspaceId, name);
      if (clash) throw nameConflict(clash);
    }
    const changes: Partial<WebhookRow> = { updated_at: nowIso() };
    if (name !== undefined) changes.name = name;
    if (url !== undefined) changes.url = url;
    const allEvents = input.all_events ?? row.all_events === 1;
    changes.all_events = allEvents ? 1 : 0;
    // all_events true clears events; events given while all_events stays true are ignored.
    if (allEvents) changes.events = '[]';
    else if (input.events !== undefined) changes.events = JSON.stringify(checkEvents(input.events));
    if (filter !== undefined) changes.filter = filter === null ? null : JSON.stringify(filter);
    if (input.enabled !== undefined && (input.enabled ? 1 : 0) !== row.enabled) {
      changes.enabled = input.enabled ? 1 : 0;
      if (input.enabled)
        Object.assign(changes, {
          failing_since: null,
          failure_notified_at: null,
          consecutive_failures: 0,
          backoff_until: null,
          disabled_reason: null,
        });
      // Disabled: what was waiting is dropped; enabled again: nothing from before is sent.
      await stopDeliveries(tx, row.id, input.enabled ? null : 'Webhook was disabled');
      if (!input.enabled) changes.disabled_reason = 'disabled';
    }
    try {
      await tx.updateTable('webhooks').set(changes).where('id', '=', row.id).execute();
    } catch (error) {
      if (isUniqueViolation(error) && ctx.dialect !== 'postgres') {
        const clash = await findByName(tx, workspaceId, name ?? row.name);
        throw nameConflict(clash ?? { id: row.id, name: name ?? row.name });
      }
      throw error;
    }
    return webhookObject({ ...row, ...changes } as WebhookRow, workspace.plan);
  });
  // After the commit, so that no emitter reloads the old subscriptions in between.
  forgetSubscriptions(workspaceId);
  return updated;
}

const listSpec: ListSpec = {
  fields: {
    name: { type: 'string' },
    url: { type: 'string' },
    enabled: { type: 'boolean' },
    all_events: { type: 'boolean' },
    created_at: { type: 'date' },
    updated_at: { type: 'date' },
    last_used_at: { type: 'date' },
  },
  searchColumns: ['name', 'url'],
  sortConvention: 'order-direction',
};

export async function listWebhooks(db: Db, workspaceId: string, query: Query, requestUrl: string) {
  const workspace = await requireWorkspace(db, workspaceId);
  const base = db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId);
  const [page, used] = await Promise.all([
    pageLimitList(applyListQuery(base, query, listSpec), query, requestUrl, 10, (row) => webhookObject(row, workspace.plan)),
    countWebhooks(db, workspaceId),
  ]);
  return { ...page, usage: { used, limit: WEBHOOK_LIMITS[workspace.plan], filters_allowed: filtersAllowed(workspace.plan) } };
}

export async function deleteWebhook(db: Db, workspaceId: string, idOrName: string) {
  const deleted = await transact(db, async (tx) => {
    const row = await resolveWebhook(tx, workspaceId, idOrName);
    // Its outbox, requests and attempts go with it (ON DELETE CASCADE): pending deliveries are dropped.
    await tx.deleteFrom('webhook_outbox').where('webhook_id', '=', row.id).execute();
    await tx.deleteFrom('webhooks').where('id', '=', row.id).execute();
    return { object: 'webhook' as const, id: row.id, name: row.name, deleted: true };
  });
  forgetSubscriptions(workspaceId);
  return deleted;
}

/** New secret at once: the old one signs nothing more, the new one is returned here. */
export async function resetWebhookSecret(ctx: AppContext, workspaceId: string, idOrName: string) {
  const row = await resolveWebhook(ctx.db, workspaceId, idOrName);
  const workspace = await requireWorkspace(ctx.db, workspaceId);
  const secret = newWebhookSecret();
  const updatedAt = nowIso();
  const sealed = ctx.secrets.seal(secret);
  await ctx.db.updateTable('webhooks').set({ secret: sealed, updated_at: updatedAt }).where('id', '=', row.id).execute();
  return webhookObject({ ...row, secret: sealed, updated_at: updatedAt }, workspace.plan, secret);
}
