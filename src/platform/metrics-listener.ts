// METRICS_PORT: /metrics on a port of its own (bind it to a private interface or firewall it).
import { createServer } from 'node:http';
import type { AppContext } from './context.ts';
import { enableMetrics, forgetMetricsDatabase } from './metrics.ts';

export async function startMetricsListener(ctx: AppContext): Promise<{ port: number; close(): Promise<void> } | null> {
  const { metricsPort, metricsToken, httpHost } = ctx.config;
  if (metricsPort === null && metricsToken === null) return null;
  const registry = enableMetrics(ctx.db);
  if (metricsPort === null) return { port: 0, close: async () => forgetMetricsDatabase(ctx.db) };
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: Error) => {
        ctx.log.error({ err: error }, 'collecting metrics failed');
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(metricsPort, httpHost, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : metricsPort,
    close: () =>
      new Promise<void>((resolve) => {
        forgetMetricsDatabase(ctx.db);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
