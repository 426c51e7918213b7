// /metrics for Prometheus: on its own port (METRICS_PORT, metrics-listener.ts) or on the API
// port behind a bearer token (METRICS_TOKEN); never open on the public port.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { enableMetrics, observeHttp } from '../metrics.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

export function registerMetrics(app: FastifyInstance, ctx: AppContext): void {
  const { metricsPort, metricsToken } = ctx.config;
  if (metricsPort === null && metricsToken === null) return;
  const registry = enableMetrics(ctx.db);
  app.addHook('onResponse', (request, reply, done) => {
    observeHttp(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  if (metricsToken === null) return;
  const wanted = digest(`Bearer ${metricsToken}`);
  app.get(
    '/metrics',
    {
      schema: {
        hide: true,
        response: { 200: Type.String(), 401: Type.Object({ statusCode: Type.Integer(), error: Type.String(), message: Type.String() }) },
      },
      config: { scope: 'public' },
    },
    async (request, reply) => {
      if (!timingSafeEqual(digest(request.headers.authorization ?? ''), wanted)) {
        return reply
          .code(401)
          .send({ statusCode: 401, error: 'Unauthorized', message: 'Send the metrics token (METRICS_TOKEN) as a bearer token' });
      }
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
}
