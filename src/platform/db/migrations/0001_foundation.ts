import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const serial = dialectOf(db) === 'postgres' ? 'bigserial' : 'integer';

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('members', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('features', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('send_rate', 'integer', (c) => c.notNull().defaultTo(2))
    .addColumn('daily_limit', 'integer', (c) => c.notNull().defaultTo(5000))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('sending_domain_id', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_hash').on('api_keys').column('key_hash').unique().execute();
  // A name is unique among the workspace's live keys; a deleted key frees its name.
  await db.schema
    .createIndex('api_keys_live_name')
    .on('api_keys')
    .columns(['workspace_id', 'name'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('seq', serial, (c) => (serial === 'integer' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_workspace_created').on('events').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', serial, (c) => (serial === 'integer' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(10))
    .addColumn('locked_until', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('dead_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_due').on('jobs').columns(['type', 'run_at']).where(sql.ref('dead_at'), 'is', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['jobs', 'events', 'api_keys', 'workspaces']) await db.schema.dropTable(table).execute();
}
