// OAuth 2.1 apps: registered clients, the grants people give them (one per approval: a
// token family), single-use authorization codes and the tokens of each grant. Every code and
// token is stored as its SHA-256 only.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey()) // oac_… (registered) or the metadata document's https URL
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull()) // JSON array
    .addColumn('metadata', 'text', (c) => c.notNull()) // JSON: the registration as accepted
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'text', (c) => c.primaryKey()) // oag_…
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_name', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull()) // full | sending
    .addColumn('resource', 'text', (c) => c.notNull()) // the API or the MCP server's URL
    .addColumn('workspace_ids', 'text', (c) => c.notNull()) // JSON array, in the order chosen
    .addColumn('current_workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('oauth_grants_user').on('oauth_grants').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull()) // epoch ms
    .addColumn('used_at', 'text')
    .execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull()) // access | refresh
    .addColumn('expires_at', 'bigint', (c) => c.notNull()) // epoch ms
    .addColumn('used_at', 'text') // a refresh token once exchanged
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_tokens_grant').on('oauth_tokens').columns(['grant_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oauth_tokens').execute();
  await db.schema.dropTable('oauth_codes').execute();
  await db.schema.dropTable('oauth_grants').execute();
  await db.schema.dropTable('oauth_clients').execute();
}
