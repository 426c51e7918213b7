// IP pools (docs/delivery.md, "IP pools"): which pool of source addresses (DELIVERY_IP_POOLS)
// a workspace's mail leaves from, for all of it or per kind (transactional, bulk). A row
// without a workspace is the assignment of every workspace that has none of its own. Each
// delivery attempt keeps the source address it was made from.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('delivery_pool_assignments')
    .addColumn('id', 'text', (c) => c.primaryKey()) // `${workspace_id ?? '*'}|${kind}`
    .addColumn('workspace_id', 'text') // null: every workspace (operator CLI only)
    .addColumn('kind', 'text', (c) => c.notNull()) // all | transactional | bulk
    .addColumn('pool', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('email_attempts').addColumn('source_address', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_attempts').dropColumn('source_address').execute();
  await db.schema.dropTable('delivery_pool_assignments').execute();
}
