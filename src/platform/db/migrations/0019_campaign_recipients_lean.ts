// The recipient snapshot (campaigns/snapshot.ts) writes one campaign_recipients row per
// recipient: 1,000,000 rows for a big audience, in one INSERT … SELECT. Fewer b-trees to write
// per row (docs/performance.md; measured on SQLite, 1,000,000 contacts: 4.9 s before, 3.3 s after):
// - on SQLite the table is WITHOUT ROWID, keyed by (campaign_id, contact_id): its rows live in
//   the primary key's b-tree, instead of a rowid table beside a separate primary key index;
// - the claim index holds pending rows only (a batch claims the lowest pending contact ids;
//   cancel drops the rest), and shrinks as the campaign sends;
// - the email index holds rows that have an email only (a snapshot's rows have none yet).
//   `email_id = ?` implies `email_id IS NOT NULL`, so both engines still use it for lookups.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

async function createIndexes(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('campaign_recipients_pending')
    .on('campaign_recipients')
    .columns(['campaign_id', 'contact_id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('campaign_recipients_email')
    .on('campaign_recipients')
    .column('email_id')
    .where(sql.ref('email_id'), 'is not', null)
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') {
    await db.schema.dropIndex('campaign_recipients_pending').execute();
    await db.schema.dropIndex('campaign_recipients_email').execute();
    return createIndexes(db);
  }
  // Kysely runs SQLite migrations outside a transaction; this rebuild is one, so a crash never
  // leaves the table half copied or missing.
  await db.transaction().execute(async (tx) => {
    await tx.schema
      .createTable('campaign_recipients_lean')
      .addColumn('campaign_id', 'text', (c) => c.notNull())
      .addColumn('contact_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull()) // pending | queued | skipped | canceled
      .addColumn('email_id', 'text')
      .addColumn('unsubscribed_at', 'text')
      .addPrimaryKeyConstraint('campaign_recipients_pk', ['campaign_id', 'contact_id'])
      .modifyEnd(sql`without rowid`)
      .execute();
    await sql`insert into campaign_recipients_lean (campaign_id, contact_id, status, email_id, unsubscribed_at)
      select campaign_id, contact_id, status, email_id, unsubscribed_at from campaign_recipients`.execute(tx);
    await tx.schema.dropTable('campaign_recipients').execute(); // and its indexes
    await tx.schema.alterTable('campaign_recipients_lean').renameTo('campaign_recipients').execute();
    await createIndexes(tx);
  });
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('campaign_recipients_pending').execute();
  await db.schema.dropIndex('campaign_recipients_email').execute();
  await db.schema
    .createIndex('campaign_recipients_pending')
    .on('campaign_recipients')
    .columns(['campaign_id', 'status', 'contact_id'])
    .execute();
  await db.schema.createIndex('campaign_recipients_email').on('campaign_recipients').column('email_id').execute();
}
