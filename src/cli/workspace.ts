import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openDatabase, type Db } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { createWorkspace, listWorkspaces, updateWorkspace, type Workspace } from '../resources/workspaces/service.ts';
import { UsageError } from './usage-error.ts';

/** Opens the configured database (migrated) for one administrative command. */
export async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const database = openDatabase(loadConfig().databaseUrl, { poolSize: 2 });
  try {
    await migrateToLatest(database.db);
    return await work(database.db);
  } finally {
    await database.close();
  }
}

function whole(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be a whole number`);
  return n;
}

function describe(w: Workspace): string {
  return (
    `${w.id}  ${w.name}  plan=${w.plan}  credits=${w.credits}  verified=${w.verified}  ` +
    `send-rate=${w.sendRate}/s  daily-limit=${w.dailyLimit}  members=${w.members.join(',') || '-'}  features=${w.features.join(',') || '-'}`
  );
}

function publicWorkspace(w: Workspace) {
  return {
    id: w.id,
    name: w.name,
    plan: w.plan,
    credits: w.credits,
    verified: w.verified,
    members: w.members,
    features: w.features,
    send_rate: w.sendRate,
    daily_limit: w.dailyLimit,
    first_credit_purchase_at: w.firstCreditPurchaseAt,
    created_at: w.createdAt,
  };
}

export async function workspaceCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        credits: { type: 'string' },
        verified: { type: 'boolean' },
        member: { type: 'string', multiple: true },
        feature: { type: 'string', multiple: true },
        json: { type: 'boolean' },
      },
    });
    if (!values.name) throw new UsageError('--name is required');
    const { workspace, apiKey } = await withDatabase((db) =>
      createWorkspace(db, {
        name: values.name!,
        plan: values.plan,
        credits: whole('credits', values.credits),
        verified: values.verified ?? false,
        members: values.member,
        features: values.feature,
      }),
    );
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ workspace: { id: workspace.id, name: workspace.name, plan: workspace.plan }, api_key: apiKey })}\n`,
      );
    } else {
      process.stdout.write(`Created workspace ${describe(workspace)}\nAPI key (shown once): ${apiKey}\n`);
    }
    return 0;
  }
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean' } } });
    const workspaces = await withDatabase((db) => listWorkspaces(db));
    process.stdout.write(values.json ? `${JSON.stringify(workspaces.map(publicWorkspace))}\n` : workspaces.map(describe).join('\n') + '\n');
    return 0;
  }
  if (action === 'update') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        plan: { type: 'string' },
        credits: { type: 'string' },
        'add-credits': { type: 'string' },
        verified: { type: 'string' },
        member: { type: 'string', multiple: true },
        'send-rate': { type: 'string' },
        'daily-limit': { type: 'string' },
        feature: { type: 'string', multiple: true },
        json: { type: 'boolean' },
      },
    });
    const id = positionals[0];
    if (!id || positionals.length > 1) throw new UsageError('workspace update takes one workspace id');
    if (values.verified !== undefined && !['true', 'false'].includes(values.verified))
      throw new UsageError('--verified must be true or false');
    const workspace = await withDatabase((db) =>
      updateWorkspace(db, id, {
        plan: values.plan,
        credits: whole('credits', values.credits),
        addCredits: whole('add-credits', values['add-credits']),
        verified: values.verified === undefined ? undefined : values.verified === 'true',
        members: values.member,
        sendRate: whole('send-rate', values['send-rate']),
        dailyLimit: whole('daily-limit', values['daily-limit']),
        features: values.feature,
      }),
    );
    process.stdout.write(values.json ? `${JSON.stringify(publicWorkspace(workspace))}\n` : `Updated ${describe(workspace)}\n`);
    return 0;
  }
  throw new UsageError('workspace takes create, list or update');
}
