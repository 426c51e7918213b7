// Probes for load balancers and orchestrators: /healthz (the process is alive and its
// database answers) and /readyz (send traffic here: database reachable, migrations applied,
// this role's workers running, not shutting down).
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { lifecycleOf } from '../lifecycle.ts';

const tags = ['System'];
const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')], {
      description: '`ok`: the process is alive and its database answers',
    }),
  },
  { title: 'Health' },
);
const ReadinessCheck = Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('not_in_role')]);
const Readiness = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready'), Type.Literal('draining')], {
      description: '`draining`: shutting down, in-flight work is finishing',
    }),
    checks: Type.Object(
      {
        database: Type.Union(ReadinessCheck.anyOf, { description: 'The database answers a query' }),
        migrations: Type.Union(ReadinessCheck.anyOf, { description: 'Every migration of this version is applied' }),
        workers: Type.Union(ReadinessCheck.anyOf, {
          description: "This process's background workers are running (`not_in_role` for --role api or smtp)",
        }),
      },
      { description: 'Each part: `ok`, `failing`, or `not_in_role` (workers of a process started with --role api or smtp)' },
    ),
  },
  { title: 'Readiness' },
);

export function registerProbes(app: FastifyInstance, ctx: AppContext): void {
  // While draining, every response closes its connection: a keep-alive connection busy when
  // the close began would otherwise hold the server open until its idle timeout (72 s).
  const state = lifecycleOf(ctx);
  app.addHook('onSend', (_request, reply, _payload, done) => {
    if (state.draining) reply.header('connection', 'close');
    done();
  });
  // Migrations are read once they were all found applied: they only change at start.
  let migrationsCurrent = false;
  app.get(
    '/healthz',
    { schema: { tags, summary: 'Liveness', response: { 200: Health, 503: Health } }, config: { scope: 'public' } },
    async (_request, reply) => {
      try {
        await sql`select 1`.execute(ctx.db);
        return { status: 'ok' };
      } catch {
        return reply.code(503).send({ status: 'unavailable' });
      }
    },
  );
  app.get(
    '/readyz',
    { schema: { tags, summary: 'Readiness', response: { 200: Readiness, 503: Readiness } }, config: { scope: 'public' } },
    async (_request, reply) => {
      const state = lifecycleOf(ctx);
      let database: 'ok' | 'failing' = 'ok';
      let migrations: 'ok' | 'failing' = migrationsCurrent ? 'ok' : 'failing';
      try {
        await sql`select 1`.execute(ctx.db);
        if (!migrationsCurrent) {
          migrationsCurrent = (await pendingMigrations(ctx.db)).length === 0;
          migrations = migrationsCurrent ? 'ok' : 'failing';
        }
      } catch {
        database = 'failing';
      }
      const workers = state.workers === null ? 'not_in_role' : state.workers === 'running' ? 'ok' : 'failing';
      const checks = { database, migrations, workers } as const;
      const ready = database === 'ok' && migrations === 'ok' && workers !== 'failing';
      const status = state.draining ? 'draining' : ready ? 'ready' : 'not_ready';
      return reply.code(status === 'ready' ? 200 : 503).send({ status, checks });
    },
  );
}
