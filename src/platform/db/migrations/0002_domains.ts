// Sending domains (https://emailit.com/docs/domains.md) and the guard row of the daily re-check job
// chain.
import type { Kysely } from 'kysely';

const RECORDS = ['spf', 'dkim', 'return_path', 'dmarc', 'tracking', 'inbound'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .createTable('domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('verification_status', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'text')
    .addColumn('manual_review_required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('manually_verified_at', 'text')
    .addColumn('dns_checked_at', 'text')
    .addColumn('next_check_at', 'bigint', (c) => c.notNull())
    .addColumn('registered_at', 'text');
  for (const record of RECORDS) {
    table = table.addColumn(`${record}_status`, 'text', (c) => c.notNull().defaultTo('pending')).addColumn(`${record}_error`, 'text');
  }
  await table
    .addColumn('tracking_key', 'text')
    .addColumn('inbound_key', 'text')
    .addColumn('track_loads', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('track_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dmarc_reports', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dmarc_address', 'text', (c) => c.notNull())
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('dkim_selector', 'text', (c) => c.notNull())
    .addColumn('dkim_public_key', 'text', (c) => c.notNull())
    .addColumn('dkim_private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // A name is unique within a workspace (409 with `existing`); another workspace may add it.
  await db.schema.createIndex('domains_workspace_name').on('domains').columns(['workspace_id', 'name']).unique().execute();
  await db.schema.createIndex('domains_workspace_created').on('domains').columns(['workspace_id', 'created_at']).execute();
  await db.schema.createIndex('domains_name').on('domains').column('name').execute();
  await db.schema.createIndex('domains_next_check').on('domains').column('next_check_at').execute();

  // One row naming the job that carries the daily re-check chain: swapping it with a
  // compare-and-set keeps exactly one chain alive however many workers start.
  await db.schema
    .createTable('domain_recheck_chain')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('domain_recheck_chain').execute();
  await db.schema.dropTable('domains').execute();
}
