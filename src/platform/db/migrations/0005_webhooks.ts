// Webhooks (https://emailit.com/docs/api-reference/webhooks.md): endpoints, the outbox of events
// waiting to be sent to each, the requests (batches) sent, and every attempt of each request.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const serial = dialectOf(db) === 'postgres' ? 'bigserial' : 'integer';
  const serialPk = (c: any) => (serial === 'integer' ? c.primaryKey().autoIncrement() : c.primaryKey());

  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('all_events', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('events', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('filter', 'text')
    .addColumn('secret', 'text', (c) => c.notNull()) // sealed
    .addColumn('last_used_at', 'text')
    // Delivery health: failing since (epoch ms) the first failure after the last success.
    .addColumn('failing_since', 'bigint')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('backoff_until', 'bigint')
    .addColumn('disabled_reason', 'text')
    // One request in flight per webhook: a lease held by the worker sending to it.
    .addColumn('lock_until', 'bigint')
    .addColumn('lock_owner', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_workspace_name').on('webhooks').columns(['workspace_id', 'name']).unique().execute();

  await db.schema
    .createTable('webhook_outbox')
    .addColumn('id', serial, serialPk)
    // No foreign key: emitters write here on their hot path from cached subscriptions; rows of
    // a webhook deleted meanwhile are never picked up and are pruned by the dispatcher.
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_outbox_webhook').on('webhook_outbox').columns(['webhook_id', 'id']).execute();

  await db.schema
    .createTable('webhook_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('manual', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('event_ids', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('error', 'text')
    .addColumn('next_attempt_at', 'bigint') // null once delivered or failed
    .addColumn('last_attempt_at', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_requests_webhook').on('webhook_requests').columns(['webhook_id', 'created_at']).execute();
  await db.schema
    .createIndex('webhook_requests_due')
    .on('webhook_requests')
    .columns(['next_attempt_at', 'webhook_id'])
    .where(sql.ref('next_attempt_at'), 'is not', null)
    .execute();
  await db.schema.createIndex('webhook_requests_created').on('webhook_requests').column('created_at').execute();

  await db.schema
    .createTable('webhook_request_attempts')
    .addColumn('id', serial, serialPk)
    .addColumn('request_id', 'text', (c) => c.notNull().references('webhook_requests.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('manual', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_request_attempts_request').on('webhook_request_attempts').columns(['request_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['webhook_request_attempts', 'webhook_requests', 'webhook_outbox', 'webhooks'])
    await db.schema.dropTable(table).execute();
}
