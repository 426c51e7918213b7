// The OpenTelemetry SDK, loaded by tracing.ts only when traces are exported: a tracer provider
// with a batching processor and the OTLP/HTTP exporter (JSON or protobuf), AsyncLocalStorage
// for the active span, and W3C Trace Context for traceparent headers and stored parents.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { TracingSettings } from './tracing-settings.ts';

export function startSdk(settings: TracingSettings): { shutdown(): Promise<void>; forceFlush(): Promise<void> } {
  // Headers (OTEL_EXPORTER_OTLP_HEADERS), timeout and compression are read by the exporter itself.
  const exporter =
    settings.protocol === 'http/json' ? new JsonExporter({ url: settings.tracesUrl! }) : new ProtobufExporter({ url: settings.tracesUrl! });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    // The sampler follows OTEL_TRACES_SAMPLER (default: parent-based, always on).
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
