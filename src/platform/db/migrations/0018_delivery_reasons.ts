import type { Kysely } from 'kysely';

// Delivery that reads the receivers (issue 19): the documented bounce reason and its type
// (hard | soft) on the email, the reason and the TLS outcome of each delivery attempt, and
// holds an operator put on queued deliveries (by destination, recipient domain or workspace).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('emails').addColumn('bounce_reason', 'text').execute();
  await db.schema.alterTable('emails').addColumn('bounce_type', 'text').execute();
  await db.schema.alterTable('email_attempts').addColumn('reason', 'text').execute();
  await db.schema.alterTable('email_attempts').addColumn('tls', 'text').execute();
  await db.schema.createIndex('emails_workspace_bounce_reason').on('emails').columns(['workspace_id', 'bounce_reason']).execute();

  await db.schema
    .createTable('delivery_holds')
    .addColumn('id', 'text', (c) => c.primaryKey()) // hold_…
    .addColumn('scope', 'text', (c) => c.notNull()) // destination | domain | workspace
    .addColumn('value', 'text', (c) => c.notNull()) // provider/MX name, recipient domain, or workspace id
    .addColumn('reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('delivery_holds_scope_value').on('delivery_holds').columns(['scope', 'value']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('delivery_holds').execute();
  await db.schema.dropIndex('emails_workspace_bounce_reason').execute();
  await db.schema.alterTable('email_attempts').dropColumn('tls').execute();
  await db.schema.alterTable('email_attempts').dropColumn('reason').execute();
  await db.schema.alterTable('emails').dropColumn('bounce_type').execute();
  await db.schema.alterTable('emails').dropColumn('bounce_reason').execute();
}
