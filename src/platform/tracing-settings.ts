// Where and how spans are exported: config.ts reads them from the OTEL_* variables, tracing.ts
// and tracing-sdk.ts use them.
export interface TracingSettings {
  /** The OTLP/HTTP traces URL; null: tracing off. */
  tracesUrl: string | null;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
}
