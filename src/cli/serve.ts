import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { startPostlane, ALL_ROLES } from '../server.ts';
import type { Role } from '../resources/index.ts';
import { UsageError } from './usage-error.ts';
import type { AppContext } from '../platform/context.ts';
import { drain } from '../platform/drain.ts';

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } });
  const role = values.role!;
  if (role !== 'all' && !(ALL_ROLES as string[]).includes(role)) throw new UsageError('--role must be api, worker, smtp or all');
  const config = loadConfig();
  const running = await startPostlane(config, {
    roles: role === 'all' ? ALL_ROLES : [role as Role],
    announceDefaultKey: (key) => {
      process.stdout.write(
        `\nCreated the "default" workspace. Its API key (shown once, keep it safe):\n\n  ${key}\n\n` +
          `Try: curl -H "Authorization: Bearer ${key}" http://localhost:${config.httpPort}/v2/api-keys\n\n`,
      );
    },
    announceSetupLink: (url) => {
      process.stdout.write(
        `The dashboard is at ${config.publicUrl}/dashboard/. Set the first admin's password here (the link works once):\n\n  ${url}\n\n`,
      );
    },
  });
  if (running.url) running.ctx.log.info(`Postlane API listening on ${running.url} (v2 at /v2)`);
  // The doctor runs in the background (its probes take seconds); one line per blocker.
  if (config.doctorAtStart) void printBlockersAtStart(running.ctx);
  await new Promise<void>((resolve) => {
    const shutdown = () => resolve();
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  });
  running.ctx.log.info('shutting down');
  const code = (await drain(running, config.shutdownTimeoutMs, running.ctx.log)) ? 0 : 1;
  // Work handed back may still hold sockets (an SMTP reply that never comes); they must not
  // keep the process past its bound. Everything it owes is closed or back in the queue.
  setTimeout(() => process.exit(code), 200).unref();
  return code;
}

async function printBlockersAtStart(ctx: AppContext): Promise<void> {
  try {
    const { runDoctor, blockerLines } = await import('../resources/system/doctor/index.ts');
    const lines = blockerLines(await runDoctor(ctx));
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n(run \`postlane doctor\` for the whole report)\n`);
  } catch (error) {
    ctx.log.warn({ err: error }, 'the doctor could not run at start');
  }
}

export async function migrateCommand(args: string[]): Promise<number> {
  parseArgs({ args, options: {} });
  const database = openDatabase(loadConfig().databaseUrl);
  try {
    const applied = await migrateToLatest(database.db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await database.close();
  }
}
