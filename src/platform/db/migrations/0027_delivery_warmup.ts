import type { Kysely } from 'kysely';

// Warm-up of new sending domains and source addresses (docs/delivery.md "Warm-up"). One row per
// domain or address warming, and one per email the warm-up let through or deferred: a message
// is counted (reserved) before it is handed to the receiver, so today's counts survive a
// restart exactly and the cap is never passed; one that was not accepted gives its place back.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('delivery_warmups')
    .addColumn('id', 'text', (c) => c.primaryKey()) // wu_…
    .addColumn('kind', 'text', (c) => c.notNull()) // domain | address
    .addColumn('subject', 'text', (c) => c.notNull()) // the domain name or the IP address
    .addColumn('schedule', 'text', (c) => c.notNull()) // schedule name (DELIVERY_WARMUP, or default)
    .addColumn('started_on', 'text', (c) => c.notNull()) // UTC day (YYYY-MM-DD): day 1
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('delivery_warmups_subject').unique().on('delivery_warmups').columns(['kind', 'subject']).execute();

  await db.schema
    .createTable('delivery_warmup_sends')
    .addColumn('warmup_id', 'text', (c) => c.notNull())
    .addColumn('email_id', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull()) // provider or MX host (shaping.ts)
    .addColumn('day', 'text', (c) => c.notNull()) // UTC day it was counted in, or deferred on
    .addColumn('priority', 'text', (c) => c.notNull()) // transactional | bulk
    .addColumn('state', 'text', (c) => c.notNull()) // reserved | sent | deferred
    .addColumn('retry_at', 'bigint') // deferred: when it is tried again (epoch ms)
    .addPrimaryKeyConstraint('delivery_warmup_sends_pk', ['warmup_id', 'email_id'])
    .execute();
  await db.schema
    .createIndex('delivery_warmup_sends_day')
    .on('delivery_warmup_sends')
    .columns(['warmup_id', 'destination', 'day', 'state'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('delivery_warmup_sends').execute();
  await db.schema.dropTable('delivery_warmups').execute();
}
