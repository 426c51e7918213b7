import type { Kysely } from 'kysely';

// OpenTelemetry: the W3C traceparent of an email's acceptance (null while tracing is off), so
// the spans of what happens to it later (delivery, webhooks, possibly in another process)
// join the trace of the request that sent it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('emails').addColumn('traceparent', 'text').execute();
}
