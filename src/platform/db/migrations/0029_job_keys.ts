// Job keys (src/platform/jobs.ts): a job may carry a key, unique among the live (not dead) jobs
// of its type, so a feature finds, cancels and reschedules its job by key, a keyed enqueue is
// idempotent, and a recurring job keeps one instance. `rerun_at`: a keyed enqueue while the
// job was running asks for one more run after it.
//
// Existing rows get their keys: each email's deliver job (API or campaign) is keyed by the email's id, and the
// live job of each recurring chain (which used to enqueue its own successor) becomes that
// recurring job's one instance; the domain re-check's bookkeeping table is no longer needed.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

const RECURRING = ['emails.purge-content', 'automation.dates', 'domains.recheck'];

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = dialectOf(db) === 'postgres';
  await db.schema.alterTable('jobs').addColumn('key', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('rerun_at', 'bigint').execute();

  const emailId = postgres ? sql`cast(payload as json) ->> 'email_id'` : sql`json_extract(payload, '$.email_id')`;
  // The oldest live one per email, should there ever be two.
  for (const type of ['email.deliver', 'email.deliver.campaign']) {
    await sql`update jobs set key = ${emailId}
      where id in (select min(id) from jobs where type = ${type} and dead_at is null group by ${emailId})`.execute(db);
  }
  for (const type of RECURRING) {
    await sql`update jobs set key = type where id = (select min(id) from jobs where type = ${type} and dead_at is null)`.execute(db);
    await sql`delete from jobs where type = ${type} and dead_at is null and key is null`.execute(db);
  }
  await db.schema
    .createIndex('jobs_type_key')
    .on('jobs')
    .columns(['type', 'key'])
    .unique()
    .where(sql.ref('key'), 'is not', null)
    .where(sql.ref('dead_at'), 'is', null)
    .execute();
  await db.schema.dropTable('domain_recheck_chain').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('domain_recheck_chain')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.dropIndex('jobs_type_key').execute();
  await db.schema.alterTable('jobs').dropColumn('rerun_at').execute();
  await db.schema.alterTable('jobs').dropColumn('key').execute();
}
