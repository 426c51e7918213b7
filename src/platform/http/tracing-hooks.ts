// A server span for every HTTP request while tracing is on (nothing is registered while off):
// started when the request arrives (a `traceparent` header makes it a child of the caller's
// span), entered again before the handler (the body is read in the socket's own async
// context, which the span does not reach), ended with the response.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { endSpan, SpanKind, startSpan, tracingOn, withContext, type Span } from '../tracing.ts';

export function registerTracing(app: FastifyInstance): void {
  if (!tracingOn) return;
  const spans = new WeakMap<FastifyRequest, { span: Span; context: ReturnType<typeof startSpan>['context'] }>();
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const started = startSpan(
      `${request.method} ${route}`,
      SpanKind.SERVER,
      { 'http.request.method': request.method, 'http.route': route },
      request.headers,
    );
    spans.set(request, started);
    withContext(started.context, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const started = spans.get(request);
    if (started) withContext(started.context, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const started = spans.get(request);
    if (started) endSpan(started.span, reply.statusCode >= 500, { 'http.response.status_code': reply.statusCode });
    done();
  });
}
