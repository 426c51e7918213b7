import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = dialectOf(db) === 'postgres';
  await db.schema
    .createTable('email_contents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('raw', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('purged_at', 'text')
    .execute();
  await db.schema
    .createIndex('email_contents_created')
    .on('email_contents')
    .column('created_at')
    .where(sql.ref('purged_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('emails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('content_id', 'text', (c) => c.notNull().references('email_contents.id'))
    .addColumn('from', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('to', 'text', (c) => c.notNull())
    .addColumn('recipient_kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'text')
    .addColumn('api_key_id', 'text')
    .addColumn('sending_domain_id', 'text')
    .addColumn('tag', 'text')
    .addColumn('spam_score', postgres ? 'double precision' : 'real')
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('meta', 'text')
    .addColumn('track_loads', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('track_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('original_id', 'text')
    .addColumn('status_detail', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('emails_workspace_created').on('emails').columns(['workspace_id', 'created_at']).execute();
  await db.schema.createIndex('emails_token').on('emails').column('token').unique().execute();
  await db.schema.createIndex('emails_content').on('emails').column('content_id').execute();

  await db.schema
    .createTable('email_attempts')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('mx_host', 'text')
    .addColumn('smtp_code', 'integer')
    .addColumn('enhanced_code', 'text')
    .addColumn('response', 'text')
    .execute();
  await db.schema.createIndex('email_attempts_email').on('email_attempts').column('email_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['email_attempts', 'emails', 'email_contents']) await db.schema.dropTable(table).execute();
}
