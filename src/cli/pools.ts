// `postlane pools …` (docs/delivery.md, "IP pools"): the source address pools of
// DELIVERY_IP_POOLS and which one each workspace's mail leaves from. Without --workspace,
// `assign` sets the assignment of every workspace that has none of its own.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { ApiError } from '../platform/http/errors.ts';
import { getWorkspace } from '../resources/workspaces/service.ts';
import { assignPools, poolsView, workspaceAssignments, type PoolAssignment } from '../resources/delivery-queue/pools.ts';
import { UsageError } from './usage-error.ts';
import { withDatabase } from './workspace.ts';

const out = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

const describe = (assignment: PoolAssignment) =>
  (['all', 'transactional', 'bulk'] as const).map((kind) => `${kind} ${assignment[kind] ?? '-'}`).join(', ');

export async function poolsCommand(args: string[]): Promise<number> {
  // `postlane pools --json` lists, as `postlane pools list --json` does.
  const [action, ...rest] = args[0] === undefined || args[0].startsWith('--') ? ['list', ...args] : args;
  const { values } = parseArgs({
    args: rest,
    options: {
      workspace: { type: 'string' },
      all: { type: 'string' },
      transactional: { type: 'string' },
      bulk: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const pools = loadConfig().ipPools;
  try {
    switch (action) {
      case 'list': {
        const view = await withDatabase(async (db) => ({
          ...(await poolsView(db, pools, values.workspace ?? null)),
          workspaces: await workspaceAssignments(db),
        }));
        if (values.json) return (out(view), 0);
        if (view.data.length === 0)
          process.stdout.write('No IP pools are configured (DELIVERY_IP_POOLS): the OS chooses the source address.\n');
        for (const pool of view.data) {
          process.stdout.write(
            `${pool.name}${pool.default ? ' (default)' : ''}: ${pool.addresses.map((a) => `${a.address} as ${a.helo}`).join(', ')}\n`,
          );
        }
        process.stdout.write(`every workspace: ${describe(view.every_workspace)}\n`);
        for (const w of view.workspaces) process.stdout.write(`${w.workspace_id}: ${describe(w)}\n`);
        return 0;
      }
      case 'assign': {
        const input: Partial<PoolAssignment> = {};
        for (const kind of ['all', 'transactional', 'bulk'] as const) {
          const value = values[kind];
          if (value !== undefined) input[kind] = value === 'none' ? null : value;
        }
        if (Object.keys(input).length === 0)
          throw new UsageError('pools assign needs --all, --transactional or --bulk POOL (none removes one)');
        const assignment = await withDatabase(async (db) => {
          if (values.workspace && !(await getWorkspace(db, values.workspace))) throw new UsageError(`no workspace ${values.workspace}`);
          return assignPools(db, pools, values.workspace ?? null, input);
        });
        if (values.json) return (out({ workspace_id: values.workspace ?? null, ...assignment }), 0);
        process.stdout.write(`${values.workspace ?? 'every workspace'}: ${describe(assignment)}\n`);
        return 0;
      }
      default:
        throw new UsageError('pools takes list or assign');
    }
  } catch (error) {
    if (error instanceof ApiError) {
      const errors = (error.body as { errors?: Record<string, string[]> }).errors;
      throw new UsageError(errors ? Object.values(errors).flat().join('; ') : error.message);
    }
    throw error;
  }
}
