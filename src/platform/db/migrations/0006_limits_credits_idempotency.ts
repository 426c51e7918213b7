// Sending counters (per-second window, UTC day, hourly forwards) and idempotency keys.
// Credits live on `workspaces.credits` (0001) and need no table of their own.
import { sql, type Kysely, type CreateTableBuilder } from 'kysely';
import { dialectOf } from '../database.ts';

export async function up(db: Kysely<any>): Promise<void> {
  // On SQLite, tables keyed by a composite primary key are stored in that key's order.
  const clustered = <T extends string>(table: CreateTableBuilder<T, any>) =>
    dialectOf(db) === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table;

  for (const [name, column, type] of [
    ['send_window_counts', 'bucket', 'bigint'],
    ['send_daily_counts', 'day', 'text'],
    ['forward_counts', 'bucket', 'bigint'],
  ] as const) {
    await clustered(
      db.schema
        .createTable(name)
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn(column, type, (c) => c.notNull())
        .addColumn('units', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${name}_pkey`, ['workspace_id', column]),
    ).execute();
  }

  await clustered(
    db.schema
      .createTable('idempotency_keys')
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('response_body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      // The unique key every racing request inserts against: exactly one insert wins.
      .addPrimaryKeyConstraint('idempotency_keys_pkey', ['workspace_id', 'key']),
  ).execute();
  await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['idempotency_keys', 'forward_counts', 'send_daily_counts', 'send_window_counts']) {
    await db.schema.dropTable(table).execute();
  }
}
