import type { Kysely } from 'kysely';

// Tracking of delivered mail: one row per tracked link (and per open pixel) of an email, and
// one row per open or click received (duplicates too, flagged as not emitted).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tracking_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull()) // open | click
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tracking_links_email').on('tracking_links').column('email_id').execute();

  await db.schema
    .createTable('tracking_hits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('link_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull()) // load | click
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('emitted', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tracking_hits_email').on('tracking_hits').columns(['email_id', 'kind', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['tracking_hits', 'tracking_links']) await db.schema.dropTable(table).execute();
}
