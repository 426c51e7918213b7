// Product events (https://emailit.com/docs/events/send-events/): the workspace's own event
// definitions, the contact each product event is tied to, and the public tracking keys of
// the tracking script. The events themselves live in the event log (`events`), their scope
// read from their type's prefix (`w:` workspace, `c:` custom, else system).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('event_definitions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('event_definitions_workspace_name')
    .on('event_definitions')
    .columns(['workspace_id', 'name'])
    .unique()
    .execute();

  // A contact's activity: one row per product event tied to a contact. No foreign keys: the
  // event log is append-only and a contact deleted later keeps no activity to show.
  await db.schema
    .createTable('contact_events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contact_events_contact').on('contact_events').columns(['contact_id', 'created_at']).execute();

  // The custom (`c:`) types a workspace has used: with its definitions, what its plan's count
  // of event types bounds.
  await db.schema
    .createTable('custom_event_types')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('custom_event_types_pk', ['workspace_id', 'name'])
    .execute();

  await db.schema
    .createTable('tracking_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tracking_keys_workspace').on('tracking_keys').column('workspace_id').execute();
}
