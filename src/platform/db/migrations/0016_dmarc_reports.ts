// DMARC reports (https://emailit.com/docs/api-reference/dmarc.md): the reports received for a
// domain, aggregate and forensic, and the rows (records) of each aggregate report, which the
// breakdowns add up.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

export async function up(db: Kysely<any>): Promise<void> {
  // Mail to a report address finds its domain by the address.
  await db.schema.createIndex('domains_dmarc_address').on('domains').column('dmarc_address').execute();

  await db.schema
    .createTable('dmarc_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('domain_id', 'text', (c) => c.notNull().references('domains.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('org_name', 'text')
    .addColumn('reporter_email', 'text')
    .addColumn('extra_contact_info', 'text')
    .addColumn('external_id', 'text')
    .addColumn('period_start', 'text')
    .addColumn('period_end', 'text')
    .addColumn('policy', 'text')
    .addColumn('detail', 'text')
    .addColumn('record_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('message_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pass_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('filename', 'text')
    .addColumn('payload', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('duplicate_of', 'text')
    .addColumn('processed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dmarc_reports_domain_created').on('dmarc_reports').columns(['domain_id', 'created_at']).execute();
  // One processed report per reporter, report id and domain: a second copy becomes `duplicate`,
  // even when two copies are processed at the same moment.
  await db.schema
    .createIndex('dmarc_reports_processed_once')
    .on('dmarc_reports')
    .columns(['domain_id', 'type', 'org_name', 'external_id'])
    .unique()
    .where(sql<boolean>`status = 'processed'`)
    .execute();

  const serial = dialectOf(db) === 'postgres' ? 'bigserial' : 'integer';
  await db.schema
    .createTable('dmarc_records')
    .addColumn('id', serial, (c) => (serial === 'integer' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('report_id', 'text', (c) => c.notNull().references('dmarc_reports.id').onDelete('cascade'))
    // Copied from the report so the breakdowns read one table.
    .addColumn('domain_id', 'text', (c) => c.notNull())
    .addColumn('org_name', 'text', (c) => c.notNull())
    .addColumn('period_start', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('source_ip', 'text', (c) => c.notNull())
    .addColumn('message_count', 'bigint', (c) => c.notNull())
    .addColumn('disposition', 'text', (c) => c.notNull())
    .addColumn('dkim', 'text', (c) => c.notNull())
    .addColumn('spf', 'text', (c) => c.notNull())
    .addColumn('dmarc', 'text', (c) => c.notNull())
    .addColumn('header_from', 'text', (c) => c.notNull())
    .addColumn('envelope_from', 'text')
    .addColumn('envelope_to', 'text')
    .addColumn('reasons', 'text', (c) => c.notNull())
    .addColumn('dkim_results', 'text', (c) => c.notNull())
    .addColumn('spf_results', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dmarc_records_report').on('dmarc_records').columns(['report_id', 'position']).execute();
  await db.schema.createIndex('dmarc_records_domain_period').on('dmarc_records').columns(['domain_id', 'period_start']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dmarc_records').execute();
  await db.schema.dropTable('dmarc_reports').execute();
  await db.schema.dropIndex('domains_dmarc_address').execute();
}
