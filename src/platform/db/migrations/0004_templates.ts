import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('alias', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text')
    .addColumn('subject', 'text')
    .addColumn('reply_to', 'text') // JSON array or null
    .addColumn('html', 'text')
    .addColumn('text_body', 'text')
    .addColumn('source', 'text')
    .addColumn('source_is_json', 'integer', (c) => c.notNull().defaultTo(0)) // source sent as a JSON object
    .addColumn('editor', 'text', (c) => c.notNull())
    .addColumn('mjml', 'text') // JSON: the MJML document description, MJML templates only
    .addColumn('published_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('templates_workspace_alias').on('templates').columns(['workspace_id', 'alias', 'created_at']).execute();
  // One published version per alias, enforced by the database (concurrent publishes and creates).
  await db.schema
    .createIndex('templates_published_alias')
    .on('templates')
    .columns(['workspace_id', 'alias'])
    .unique()
    .where(sql.ref('published_at'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('templates').execute();
}
