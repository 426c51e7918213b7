// Automations (https://emailit.com/docs/automations.md): the
// automation with its graph (steps and connections as JSON), the triggers of running
// automations by source event type (what the event hook looks up), runs, run steps (one row
// per step visit, unique per run, step and visit) and the per-subject cooldown stamps.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('automations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('connections', 'text', (c) => c.notNull())
    .addColumn('running_runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'text')
    .addColumn('last_triggered_at', 'text')
    .addColumn('published_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automations_workspace_created').on('automations').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('automation_triggers')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('step_key', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automation_triggers_lookup').on('automation_triggers').columns(['workspace_id', 'event_type']).execute();
  await db.schema.createIndex('automation_triggers_automation').on('automation_triggers').column('automation_id').execute();

  await db.schema
    .createTable('automation_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('trigger_key', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text')
    .addColumn('email_id', 'text')
    .addColumn('event_id', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // The run's contact or email while it runs, when re-entry is not allowed (unique: one at a time).
    .addColumn('active_subject', 'text')
    .addColumn('pending_steps', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('counted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('automation_runs_event')
    .on('automation_runs')
    .columns(['automation_id', 'event_id', 'trigger_key'])
    .unique()
    .execute();
  await db.schema
    .createIndex('automation_runs_active')
    .on('automation_runs')
    .columns(['automation_id', 'active_subject'])
    .unique()
    .execute();
  await db.schema
    .createIndex('automation_runs_automation_created')
    .on('automation_runs')
    .columns(['automation_id', 'created_at'])
    .execute();
  await db.schema.createIndex('automation_runs_contact').on('automation_runs').columns(['automation_id', 'contact_id']).execute();
  await db.schema.createIndex('automation_runs_status').on('automation_runs').columns(['automation_id', 'status']).execute();

  await db.schema
    .createTable('automation_run_steps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('automation_runs.id').onDelete('cascade'))
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('step_key', 'text', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    // Which visit of the step in this run: the run step that led here ('root' for the first).
    .addColumn('visit', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text')
    .addColumn('email_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('automation_run_steps_visit')
    .on('automation_run_steps')
    .columns(['run_id', 'step_key', 'visit'])
    .unique()
    .execute();
  await db.schema.createIndex('automation_run_steps_stats').on('automation_run_steps').columns(['automation_id', 'step_key']).execute();
  await db.schema.createIndex('automation_run_steps_email').on('automation_run_steps').column('email_id').execute();

  await db.schema
    .createTable('automation_cooldowns')
    .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('last_started_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('automation_cooldowns_pk', ['automation_id', 'subject'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['automation_cooldowns', 'automation_run_steps', 'automation_runs', 'automation_triggers', 'automations'])
    await db.schema.dropTable(table).execute();
}
