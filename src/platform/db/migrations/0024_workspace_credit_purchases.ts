import type { Kysely } from 'kysely';

// When the workspace first bought credits (the operator's `workspace update --add-credits`):
// Pay as you go allows 25 sending domains from then on instead of 3. Null: never.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('first_credit_purchase_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('first_credit_purchase_at').execute();
}
