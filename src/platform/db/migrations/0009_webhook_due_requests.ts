import { sql, type Kysely } from 'kysely';

// A webhook's due requests, found without walking its whole request history (the dispatcher
// looks for them before every batch).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_requests_webhook_due')
    .on('webhook_requests')
    .columns(['webhook_id', 'next_attempt_at'])
    .where(sql.ref('next_attempt_at'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_requests_webhook_due').execute();
}
