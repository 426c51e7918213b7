// OpenTelemetry traces, off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). While off, no SDK is loaded (tracing-sdk.ts is
// imported on the first start only) and every helper here returns after one check of
// `tracingOn`: the hot paths create no span, no context and no carrier.
//
// A send is one trace across ticks and processes: the W3C traceparent of its acceptance is
// stored with the email row and its deliver job's payload, and the job, build, SMTP and webhook
// spans are started from it (see docs/operations.md, "Traces").
import type { TracingSettings } from './tracing-settings.ts';
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';

export { SpanKind };

export type { Span, TracingSettings };

/** The attribute every span of a send carries: the email id (an array for a multi-recipient request). */
export const EMAIL_ID = 'postlane.email_id';

/** True while this process exports spans. Checked before any span is made. */
export let tracingOn = false;

let users = 0;
let stopSdk: (() => Promise<void>) | null = null;
let flushSdk: (() => Promise<void>) | null = null;

/** Turns tracing on for this process when `settings` name an endpoint (shared by every server
 *  of the process, counted); the returned function flushes and, for the last user, stops it. */
export async function startTracing(
  settings: TracingSettings,
  log: { info(obj: unknown, msg?: string): void },
): Promise<(() => Promise<void>) | null> {
  if (!settings.tracesUrl) return null;
  if (users++ === 0) {
    const { startSdk } = await import('./tracing-sdk.ts');
    const sdk = startSdk(settings);
    stopSdk = sdk.shutdown;
    flushSdk = sdk.forceFlush;
    tracingOn = true;
    log.info({ url: settings.tracesUrl, protocol: settings.protocol, service: settings.serviceName }, 'exporting traces (OTLP)');
  }
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    await flushSdk?.();
    if (--users > 0) return;
    tracingOn = false;
    const stop = stopSdk;
    stopSdk = flushSdk = null;
    await stop?.();
  };
}

/** Sends the spans ended so far (tests, shutdown). */
export async function flushTracing(): Promise<void> {
  await flushSdk?.();
}

const tracer = () => trace.getTracer('postlane');

/** The context a W3C traceparent names (the active context when there is none). */
function contextFrom(traceparent: string | null | undefined): Context {
  if (!traceparent) return context.active();
  return propagation.extract(context.active(), { traceparent });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent from a stored traceparent (a job run later); default: the active span. */
  parent?: string | null;
  /** Other traces this span belongs to as well (a webhook batch of many sends). */
  links?: string[];
}

/** Runs `work` inside a new span (ended when it settles; a throw marks it failed). While
 *  tracing is off, runs `work` alone with no span. */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!tracingOn) return work(undefined);
  const parent = contextFrom(options.parent);
  const links: Link[] = (options.links ?? [])
    .map((link) => ({ context: trace.getSpanContext(contextFrom(link))! }))
    .filter((link) => link.context);
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span of work done elsewhere (a build thread), from its measured times (epoch ms). */
export function recordSpan(name: string, parent: string | null | undefined, startMs: number, endMs: number, attributes: Attributes): void {
  if (!tracingOn) return;
  tracer().startSpan(name, { startTime: startMs, attributes }, contextFrom(parent)).end(endMs);
}

/** A span started and ended by different callbacks (an HTTP request's hooks). */
export function startSpan(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  incoming?: Record<string, string | string[] | undefined>,
): { span: Span; context: Context } {
  const parent = incoming ? propagation.extract(context.active(), incoming) : context.active();
  const span = tracer().startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Marks a span failed without an exception (an answer that says no). */
export function markFailed(span: Span | undefined, message: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message });
}

export function endSpan(span: Span, failed: boolean, attributes?: Attributes): void {
  if (attributes) span.setAttributes(attributes);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs `fn` with `ctx` as the active context (an HTTP request's span, entered by a hook). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** The active span's W3C traceparent, to store with work done later; undefined while off. */
export function currentTraceparent(): string | undefined {
  if (!tracingOn) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Sets attributes on the active span (and nothing while off). */
export function setSpanAttributes(attributes: Attributes): void {
  if (!tracingOn) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span, for a caller that annotates it after starting a child. */
export function activeSpan(): Span | undefined {
  return tracingOn ? trace.getActiveSpan() : undefined;
}

/** `postlane.email_id` for one email or several. */
export function emailIdAttribute(ids: string[]): Attributes {
  return { [EMAIL_ID]: ids.length === 1 ? ids[0] : ids };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The `traceparent` (and `tracestate`) headers of the active span for an outgoing request. */
export function traceHeaders(): Readonly<Record<string, string>> {
  if (!tracingOn) return NO_HEADERS;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}
