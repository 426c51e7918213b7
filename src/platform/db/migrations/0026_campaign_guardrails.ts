// Deliverability guardrails (docs/deliverability.md): a campaign paused automatically says why
// in a sentence (`paused_reason`), and one resumed by a person after such a pause is not paused
// again by the guardrails (`guardrails_overridden`, 1 once resumed). The rates themselves are
// counted from the emails and the recipient snapshot, through indexes that exist already.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('campaigns').addColumn('paused_reason', 'text').execute();
  await db.schema
    .alterTable('campaigns')
    .addColumn('guardrails_overridden', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('campaigns').dropColumn('guardrails_overridden').execute();
  await db.schema.alterTable('campaigns').dropColumn('paused_reason').execute();
}
