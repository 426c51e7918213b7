import type { Kysely } from 'kysely';

// When the owners were last told that a webhook is failing
// (https://emailit.com/docs/webhooks/retries-and-failures.md): once per run of failures, however
// many requests reach their 3rd attempt; cleared by the next success.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('failure_notified_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('failure_notified_at').execute();
}
