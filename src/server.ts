// A running Postlane: database, HTTP API, workers and listeners, by role.
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { dialectOf, openDatabase, type DatabaseHandle, type Db } from './platform/db/database.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import { Authenticator } from './platform/http/auth.ts';
import { buildApp } from './platform/http/app.ts';
import { JobRunner } from './platform/jobs.ts';
import { setWorkers, startDraining } from './platform/lifecycle.ts';
import { startMetricsListener } from './platform/metrics-listener.ts';
import { startTracing } from './platform/tracing.ts';
import { localNamesWarning } from './platform/local-names.ts';
import type { AppContext } from './platform/context.ts';
import { loadResources, type Role } from './resources/index.ts';
import { createSealer, loadEncryptionKey } from './platform/secrets.ts';
import { deriveVerpSecret } from './mail/verp.ts';
import { ensureDefaultWorkspace } from './resources/workspaces/service.ts';
import { createSetupLink } from './resources/users/service.ts';
import { applyOutcomeJournals } from './resources/emails/delivery/journal-replay.ts';

export const ALL_ROLES: Role[] = ['api', 'worker', 'smtp'];

export interface StartOptions {
  roles?: Role[];
  /** Print the first-start key of the `default` workspace (the CLI does; tests do not). */
  announceDefaultKey?: (key: string) => void;
  /** Print the first start's one-time link to set the first admin's password (the CLI does). */
  announceSetupLink?: (url: string) => void;
  logger?: Logger;
  /** PostgreSQL schema to use (tests). */
  schema?: string;
  jobPollMs?: number;
}

export interface RunningPostlane {
  ctx: AppContext;
  app: FastifyInstance | null;
  url: string | null;
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    // Secrets never reach the log: redact credentials wherever a request or object carries them.
    redact: ['req.headers.authorization', '*.key', '*.secret', '*.password', '*.private_key', '*.dkim_private_key'],
  });
}

/** What every resource is handed: built the same way by the server and the CLI. */
export function createContext(config: Config, db: Db, log: Logger): AppContext {
  const encryptionKey = loadEncryptionKey(config.dataDir, config.encryptionKey ?? undefined);
  return {
    config,
    db,
    dialect: dialectOf(db),
    log,
    auth: new Authenticator(db),
    secrets: createSealer(encryptionKey),
    verpSecret: deriveVerpSecret(encryptionKey),
  };
}

export async function startPostlane(config: Config, options: StartOptions = {}): Promise<RunningPostlane> {
  const roles = new Set<Role>(options.roles ?? ALL_ROLES);
  const log = options.logger ?? createLogger(config);
  const database: DatabaseHandle = openDatabase(config.databaseUrl, {
    schema: options.schema,
    backgroundCheckpoints: true,
    onCheckpointError: (message) => log.warn({ error: message }, 'background WAL checkpoint failed'),
    onPoolError: (message) => log.warn({ error: message }, 'a PostgreSQL connection was lost; reconnecting'),
  });
  const ctx = createContext(config, database.db, log);
  const stops: Array<() => Promise<void>> = [];
  // Before the HTTP app is built (its request spans) and any worker runs; stopped last, so
  // the spans of the shutdown are sent too.
  const stopTracing = await startTracing(config.tracing, log);
  try {
    const localNames = localNamesWarning(config);
    if (localNames) log.warn(localNames);
    await migrateToLatest(ctx.db);
    const created = await ensureDefaultWorkspace(ctx.db);
    if (created && options.announceDefaultKey) options.announceDefaultKey(created.apiKey);
    if (created && options.announceSetupLink)
      options.announceSetupLink(await createSetupLink(ctx.db, created.workspace.id, config.publicUrl));

    // Before any worker claims a delivery job: the answers a killed process had read but not
    // committed are recorded, so their jobs find them delivered (or bounced) and send nothing.
    const journals = await applyOutcomeJournals(ctx.db, config.dataDir);
    if (journals.files > 0) log.info(journals, 'applied the delivery outcome journals of stopped processes');

    const resources = await loadResources();
    for (const resource of resources) resource.registerJobs?.(ctx);
    for (const resource of resources) {
      const stop = await resource.start?.(ctx, roles);
      if (stop) stops.push(stop);
    }

    const metrics = await startMetricsListener(ctx);
    if (metrics) stops.push(() => metrics.close());
    let app: FastifyInstance | null = null;
    let url: string | null = null;
    if (roles.has('api')) {
      app = await buildApp(ctx, resources);
      await app.listen({ host: config.httpHost, port: config.httpPort });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : config.httpPort;
      url = `http://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${port}`;
    }
    let runner: JobRunner | null = null;
    if (roles.has('worker')) {
      const declared = resources.flatMap((resource) => resource.jobs?.(ctx) ?? []);
      // Closed first once the runner has stopped (stops run after it, in reverse).
      for (const jobs of declared) if (jobs.close) stops.push(() => jobs.close!());
      runner = new JobRunner(ctx.db, { log, pollMs: options.jobPollMs, handlers: declared.flatMap((jobs) => jobs.handlers) });
      await runner.start();
      setWorkers(ctx, 'running');
    }
    return {
      ctx,
      app,
      url,
      async close() {
        // Draining: /readyz answers 503 and SMTP refuses new sessions while requests finish.
        startDraining(ctx);
        await app?.close();
        const handedBack = await runner?.stop(config.shutdownTimeoutMs);
        if (handedBack) log.warn({ jobs: handedBack }, 'jobs still running at shutdown were handed back to the queue');
        if (runner) setWorkers(ctx, 'stopped');
        for (const stop of stops.reverse()) await stop();
        await ctx.auth.flush();
        await database.close();
        await stopTracing?.();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await database.close();
    await stopTracing?.().catch(() => {});
    throw error;
  }
}
