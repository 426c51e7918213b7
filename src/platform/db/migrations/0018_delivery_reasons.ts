import type { Kysely } from 'kysely';

// Delivery that reads the receivers (docs/delivery.md): the documented bounce reason and its type
// (hard | soft) on the email, the reason and the TLS outcome of each delivery attempt, and
// holds an operator put on queued deliveries (by destination, recipient domain or workspace).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('emails').addColumn('bounce_reason', 'text').execute();
  await db.schema.alterTable('emails').addColumn('bounce_type', 'text').execute();
  await db.schema.alterTable('email_attempts').addColumn('reason', 'text').execute();
  await db.schema.alterTable('email_attempts').addColumn('tls', 'text').execute();
  await db.schema.createIndex('emails_workspace_bounce_reason').on('emails').columns(['workspace_id', 'bounce_reason']).execute();

  // A hold matches a queued delivery when every field it sets matches (null: any).
  await db.schema
    .createTable('delivery_holds')
    .addColumn('id', 'text', (c) => c.primaryKey()) // hold_…
    .addColumn('workspace_id', 'text') // null: every workspace (operator CLI only)
    .addColumn('destination', 'text') // provider (gmail, microsoft…) or MX host
    .addColumn('domain', 'text') // recipient domain
    .addColumn('reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('delivery_holds_workspace').on('delivery_holds').column('workspace_id').execute();

  // The traffic shaper's state per destination, written by the delivery workers every few
  // seconds, read by the API and the CLI (which may run in other processes).
  await db.schema
    .createTable('delivery_destinations')
    .addColumn('destination', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull()) // JSON (DestinationState)
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('delivery_destinations').execute();
  await db.schema.dropTable('delivery_holds').execute();
  await db.schema.dropIndex('emails_workspace_bounce_reason').execute();
  await db.schema.alterTable('email_attempts').dropColumn('tls').execute();
  await db.schema.alterTable('email_attempts').dropColumn('reason').execute();
  await db.schema.alterTable('emails').dropColumn('bounce_type').execute();
  await db.schema.alterTable('emails').dropColumn('bounce_reason').execute();
}
