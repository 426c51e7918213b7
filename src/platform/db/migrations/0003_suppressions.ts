// Suppressions (https://emailit.com/docs/suppressions.md): at most one per workspace, address and
// type.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('suppressions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('keep_until', 'text')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Also serves lookups by address (sends check every recipient against it).
  await db.schema
    .createIndex('suppressions_workspace_email_type')
    .on('suppressions')
    .columns(['workspace_id', 'email', 'type'])
    .unique()
    .execute();
  await db.schema.createIndex('suppressions_workspace_created').on('suppressions').columns(['workspace_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('suppressions').execute();
}
