// Campaigns (https://emailit.com/docs/api-reference/campaigns.md) and their recipient snapshots:
// one thin row per recipient taken when sending starts (campaign, contact, status, email), which
// the fan-out turns into emails a batch at a time, each batch in one transaction (engine.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // Why a campaign stopped or waits: insufficient_credits, paused (by request), null otherwise.
    .addColumn('status_reason', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('from_email', 'text', (c) => c.notNull())
    .addColumn('from_name', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('preview_text', 'text')
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('content', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('recipients', 'text', (c) => c.notNull()) // JSON [{audience_id, exclude}]
    .addColumn('scheduled_at', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('canceled_at', 'text')
    // Set when sending starts: the shared content of the campaign's emails and their domain.
    .addColumn('content_id', 'text')
    .addColumn('sending_domain_id', 'text')
    .addColumn('recipient_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('campaigns_workspace_created').on('campaigns').columns(['workspace_id', 'created_at']).execute();
  await db.schema.createIndex('campaigns_workspace_name').on('campaigns').columns(['workspace_id', 'name']).execute();

  await db.schema
    .createTable('campaign_recipients')
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull()) // pending | queued | skipped | canceled
    .addColumn('email_id', 'text')
    .addColumn('unsubscribed_at', 'text')
    .addPrimaryKeyConstraint('campaign_recipients_pk', ['campaign_id', 'contact_id'])
    .execute();
  // A batch claims the lowest pending contact ids; the delivery looks a recipient up by email.
  await db.schema
    .createIndex('campaign_recipients_pending')
    .on('campaign_recipients')
    .columns(['campaign_id', 'status', 'contact_id'])
    .execute();
  await db.schema.createIndex('campaign_recipients_email').on('campaign_recipients').column('email_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['campaign_recipients', 'campaigns']) await db.schema.dropTable(table).execute();
}
