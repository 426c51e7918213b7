// Sign-up forms (https://emailit.com/docs/forms.md): forms with their public token, the
// submissions stored with them, and each workspace's public key for the embed script.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('forms')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text')
    .execute();
  await db.schema.createIndex('forms_token').on('forms').column('token').unique().execute();
  await db.schema.createIndex('forms_workspace_created').on('forms').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('form_submissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('page_url', 'text')
    .addColumn('experiment_id', 'text')
    .addColumn('variant_id', 'text')
    // The solved proof-of-work challenge (a digest of its signature): one submission per challenge.
    .addColumn('challenge', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('form_submissions_form_created').on('form_submissions').columns(['form_id', 'created_at']).execute();
  await db.schema.createIndex('form_submissions_challenge').on('form_submissions').column('challenge').unique().execute();

  await db.schema
    .createTable('form_embed_keys')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('form_embed_keys_public_key').on('form_embed_keys').column('public_key').unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['form_embed_keys', 'form_submissions', 'forms']) await db.schema.dropTable(table).execute();
}
