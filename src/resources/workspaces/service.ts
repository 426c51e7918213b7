// Workspaces are administered by the operator through the CLI (no HTTP API in the spec).
import type { Db, Executor } from '../../platform/db/database.ts';
import type { WorkspacesTable } from '../../platform/db/schema.ts';
import type { Selectable } from 'kysely';
import { newId } from '../../platform/ids.ts';
import { preparedQuery, type PrefetchRead } from '../../platform/db/prepared.ts';
import { nowIso } from '../../platform/clock.ts';
import { createApiKey } from '../api-keys/service.ts';

export const PLANS = ['payg', 'pro', 'business', 'custom'] as const;
export type Plan = (typeof PLANS)[number];
export const PLAN_NAMES: Record<Plan, string> = { payg: 'Pay as you go', pro: 'Pro', business: 'Business', custom: 'Custom' };

export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
  credits: number;
  verified: boolean;
  members: string[];
  features: string[];
  sendRate: number;
  dailyLimit: number;
  /** When the workspace first bought credits (null: never); Pay as you go's domain limit rises then. */
  firstCreditPurchaseAt: string | null;
  createdAt: string;
}

export class WorkspaceError extends Error {}

function fromRow(row: Selectable<WorkspacesTable>): Workspace {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan as Plan,
    credits: Number(row.credits),
    verified: row.verified === 1,
    members: JSON.parse(row.members),
    features: JSON.parse(row.features),
    sendRate: row.send_rate,
    dailyLimit: row.daily_limit,
    firstCreditPurchaseAt: row.first_credit_purchase_at ?? null,
    createdAt: row.created_at,
  };
}

function checkPlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw new WorkspaceError(`plan must be one of ${PLANS.join(', ')}`);
  return plan as Plan;
}

function checkMembers(members: string[]): string[] {
  for (const member of members) {
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(member)) throw new WorkspaceError(`"${member}" is not an email address`);
  }
  return [...new Set(members.map((m) => m.toLowerCase()))];
}

function checkCount(name: string, value: number, min = 0): number {
  if (!Number.isInteger(value) || value < min) throw new WorkspaceError(`${name} must be a whole number of at least ${min}`);
  return value;
}

export interface CreateWorkspaceInput {
  name: string;
  plan?: string;
  credits?: number;
  verified?: boolean;
  members?: string[];
  features?: string[];
}

/** Creates a workspace and its first full-scope API key; returns both (the secret once). */
export async function createWorkspace(db: Db, input: CreateWorkspaceInput): Promise<{ workspace: Workspace; apiKey: string }> {
  const name = input.name?.trim();
  if (!name) throw new WorkspaceError('name is required');
  const plan = checkPlan(input.plan ?? 'payg');
  const members = checkMembers(input.members ?? []);
  const credits = checkCount('credits', input.credits ?? 0);
  return db.transaction().execute(async (tx) => {
    const now = nowIso();
    const id = newId('wsp');
    await tx
      .insertInto('workspaces')
      .values({
        id,
        name,
        plan,
        credits,
        verified: input.verified ? 1 : 0,
        members: JSON.stringify(members),
        features: JSON.stringify(input.features ?? []),
        send_rate: 2,
        daily_limit: 5000,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const key = await createApiKey(tx, id, { name: 'Default key', scope: 'full' });
    return { workspace: (await getWorkspace(tx, id))!, apiKey: key.key };
  });
}

const workspaceById = preparedQuery((db, p: { id: string }) => db.selectFrom('workspaces').selectAll().where('id', '=', p.id));

/** getWorkspace's read, to fetch ahead with others (prepared.ts `prefetch`). */
export const workspaceRead = (id: string): PrefetchRead => ({ query: workspaceById, params: { id } });

export async function getWorkspace(db: Executor, id: string): Promise<Workspace | null> {
  const [row] = await workspaceById(db, { id });
  return row ? fromRow(row) : null;
}

export async function listWorkspaces(db: Executor): Promise<Workspace[]> {
  const rows = await db.selectFrom('workspaces').selectAll().orderBy('created_at').execute();
  return rows.map(fromRow);
}

export interface UpdateWorkspaceInput {
  plan?: string;
  credits?: number;
  addCredits?: number;
  verified?: boolean;
  members?: string[];
  sendRate?: number;
  dailyLimit?: number;
  features?: string[];
}

export async function updateWorkspace(db: Db, id: string, input: UpdateWorkspaceInput): Promise<Workspace> {
  return db.transaction().execute(async (tx) => {
    const current = await getWorkspace(tx, id);
    if (!current) throw new WorkspaceError(`no workspace with id ${id}`);
    const now = nowIso();
    const changes: Partial<WorkspacesTable> = { updated_at: now };
    if (input.plan !== undefined) changes.plan = checkPlan(input.plan);
    if (input.credits !== undefined) changes.credits = checkCount('credits', input.credits);
    if (input.addCredits !== undefined) {
      const base = changes.credits ?? current.credits;
      changes.credits = checkCount('credits', base + checkCount('add-credits', input.addCredits, 1));
      // Adding credits is a purchase; setting a balance (`credits`) is an adjustment.
      if (current.firstCreditPurchaseAt === null) changes.first_credit_purchase_at = now;
    }
    if (input.verified !== undefined) changes.verified = input.verified ? 1 : 0;
    if (input.members?.length) changes.members = JSON.stringify(checkMembers([...current.members, ...input.members]));
    if (input.sendRate !== undefined) changes.send_rate = checkCount('send-rate', input.sendRate, 1);
    if (input.dailyLimit !== undefined) changes.daily_limit = checkCount('daily-limit', input.dailyLimit, 1);
    if (input.features?.length) changes.features = JSON.stringify([...new Set([...current.features, ...input.features])]);
    await tx.updateTable('workspaces').set(changes).where('id', '=', id).execute();
    return (await getWorkspace(tx, id))!;
  });
}

/** First start on an empty database: the `default` workspace and one printed key. */
export async function ensureDefaultWorkspace(db: Db): Promise<{ workspace: Workspace; apiKey: string } | null> {
  const any = await db.selectFrom('workspaces').select('id').limit(1).executeTakeFirst();
  if (any) return null;
  // The operator's own workspace: verified, on the most generous plan, with credits to send.
  return createWorkspace(db, { name: 'default', plan: 'custom', credits: 1_000_000, verified: true });
}

export function hasFeature(workspace: Workspace, feature: string): boolean {
  return workspace.features.includes(feature);
}
