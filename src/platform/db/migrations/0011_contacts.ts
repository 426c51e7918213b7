// Contacts, audiences, subscribers, custom field definitions and pending double opt-in
// confirmations (docs/api.md, "Contacts, audiences and subscribers";
// https://emailit.com/docs/audiences.md).
//
// Index choices, for 1M-row audiences:
// - contacts (workspace_id, email) unique: lookups by address, imports' upserts.
// - subscribers (contact_id, audience_id) unique: one membership per contact and audience, and
//   a contact's memberships (retrieve, delete) without another index.
// - subscribers (audience_id, subscribed, contact_id): a campaign's recipient snapshot ("every
//   subscribed contact of these audiences") reads only this index, already in contact order
//   per audience; it also serves audience subscriber lists and deleting an audience.
// - audiences.subscriber_count is kept in the transaction of every membership change, so the
//   plan cap is one conditional UPDATE (no count of a 250,000-row audience per add, and two
//   concurrent adds cannot both take the last place).
// On SQLite, contacts and subscribers are WITHOUT ROWID tables keyed by their time-ordered
// ids: one b-tree fewer to write per row than a rowid table with a text primary key.
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = dialectOf(db) === 'sqlite';
  const withoutRowid = <T extends { modifyEnd(node: any): T }>(builder: T): T => (sqlite ? builder.modifyEnd(sql`without rowid`) : builder);

  await withoutRowid(
    db.schema
      .createTable('contacts')
      .addColumn('id', 'text', (c) => c.primaryKey().notNull())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
      .addColumn('email', 'text', (c) => c.notNull()) // lowercase
      .addColumn('first_name', 'text')
      .addColumn('last_name', 'text')
      .addColumn('custom_fields', 'text', (c) => c.notNull().defaultTo('{}')) // JSON object
      .addColumn('unsubscribed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('contacts_workspace_email').on('contacts').columns(['workspace_id', 'email']).unique().execute();
  await db.schema.createIndex('contacts_workspace_created').on('contacts').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('audiences')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('legacy_id', 'text', (c) => c.notNull()) // the 16-character id of the v1 API
    .addColumn('token', 'text', (c) => c.notNull()) // public token of the hosted subscribe link
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .addColumn('public_name', 'text')
    .addColumn('public_description', 'text')
    .addColumn('double_opt_in', 'text') // JSON settings object, null when never set
    .addColumn('confirmation_email', 'text') // JSON settings object, null when never set
    .addColumn('unengaged', 'text') // JSON settings object, null when never set
    .addColumn('subscriber_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audiences_workspace_name').on('audiences').columns(['workspace_id', 'name']).unique().execute();
  await db.schema.createIndex('audiences_workspace_created').on('audiences').columns(['workspace_id', 'created_at']).execute();
  await db.schema.createIndex('audiences_legacy_id').on('audiences').column('legacy_id').unique().execute();
  await db.schema.createIndex('audiences_token').on('audiences').column('token').unique().execute();

  await withoutRowid(
    db.schema
      .createTable('subscribers')
      .addColumn('id', 'text', (c) => c.primaryKey().notNull())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('audience_id', 'text', (c) => c.notNull().references('audiences.id').onDelete('cascade'))
      .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
      .addColumn('subscribed', 'integer', (c) => c.notNull())
      .addColumn('subscribed_at', 'text')
      .addColumn('unsubscribed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('subscribers_contact_audience').on('subscribers').columns(['contact_id', 'audience_id']).unique().execute();
  await db.schema
    .createIndex('subscribers_audience_subscribed')
    .on('subscribers')
    .columns(['audience_id', 'subscribed', 'contact_id'])
    .execute();

  await db.schema
    .createTable('custom_fields')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull()) // text | number | date | boolean
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('custom_fields_workspace_key').on('custom_fields').columns(['workspace_id', 'key']).unique().execute();

  // A double opt-in request waiting for its link to be followed: no subscriber exists yet.
  await db.schema
    .createTable('subscription_confirmations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('audience_id', 'text', (c) => c.notNull().references('audiences.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('custom_fields', 'text') // JSON object; null when not given (the contact's stay)
    .addColumn('email_id', 'text') // the confirmation email sent
    .addColumn('confirmed_at', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('subscription_confirmations_audience')
    .on('subscription_confirmations')
    .columns(['audience_id', 'email'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['subscription_confirmations', 'custom_fields', 'subscribers', 'audiences', 'contacts'])
    await db.schema.dropTable(table).execute();
}
