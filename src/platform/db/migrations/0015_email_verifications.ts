// Email verification (https://emailit.com/docs/api-reference/email-verifications.md): single
// verifications and verification lists, whose addresses are verification rows of their own
// (list_id, position).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('email_verification_lists')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('stats', 'text', (c) => c.notNull())
    .addColumn('valid_emails_count', 'integer', (c) => c.notNull())
    .addColumn('unique_emails_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema
    .createIndex('email_verification_lists_workspace_created')
    .on('email_verification_lists')
    .columns(['workspace_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('email_verifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('list_id', 'text', (c) => c.references('email_verification_lists.id'))
    .addColumn('position', 'integer')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('score', 'integer')
    .addColumn('risk', 'text')
    .addColumn('result', 'text')
    .addColumn('catch_all', 'integer')
    .addColumn('details', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // A list's results in the order given; each address once per list.
  await db.schema
    .createIndex('email_verifications_list_position')
    .on('email_verifications')
    .columns(['list_id', 'position'])
    .unique()
    .execute();
  // The worker's "what is left" and the completion count.
  await db.schema
    .createIndex('email_verifications_list_status')
    .on('email_verifications')
    .columns(['list_id', 'status', 'position'])
    .execute();
  await db.schema
    .createIndex('email_verifications_workspace_created')
    .on('email_verifications')
    .columns(['workspace_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_verifications').execute();
  await db.schema.dropTable('email_verification_lists').execute();
}
