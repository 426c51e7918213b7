// An OpenTelemetry collector on loopback for tests: accepts OTLP/HTTP JSON on POST /v1/traces
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps every span, flattened, with its service.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  service: string | undefined;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  startNs: bigint;
  endNs: bigint;
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): traces go to `${url}/v1/traces`. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests that were not OTLP JSON on /v1/traces (each answered 400 or 404). */
  refused: string[];
  close(): Promise<void>;
}

/** An OTLP AnyValue as a plain value (arrays of strings stay arrays). */
function valueOf(any: Record<string, any> | undefined): unknown {
  if (!any) return undefined;
  if ('stringValue' in any) return any.stringValue;
  if ('intValue' in any) return Number(any.intValue);
  if ('doubleValue' in any) return any.doubleValue;
  if ('boolValue' in any) return any.boolValue;
  if ('arrayValue' in any) return (any.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: Array<{ key: string; value: Record<string, any> }> = []) =>
  Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        refused.push(`${request.method} ${request.url}`);
        return response.writeHead(404).end();
      }
      if (!String(request.headers['content-type']).startsWith('application/json')) {
        refused.push(`content-type ${request.headers['content-type']}`);
        return response.writeHead(400).end();
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = attributesOf(resourceSpans.resource?.attributes)['service.name'] as string | undefined;
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              service,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((link: { traceId: string; spanId: string }) => ({
                traceId: link.traceId,
                spanId: link.spanId,
              })),
              startNs: BigInt(span.startTimeUnixNano),
              endNs: BigInt(span.endTimeUnixNano),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
