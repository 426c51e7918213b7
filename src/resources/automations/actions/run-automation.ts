// run_automation: starts a run of another running automation with this run's payload (its
// system.manual trigger, else its first); this run goes on.
import { Type } from '@sinclair/typebox';
import { RunSkipped } from '../run-context.ts';
import { stepsOf } from '../rows.ts';
import { nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

export const runAutomation: ActionDefinition = {
  title: 'Run automation',
  description: "Starts a run of another running automation with this run's payload and contact or email; this run goes on.",
  config: Type.Object({
    automation_id: Type.String({ minLength: 1, description: 'aut_ id of an automation of the workspace' }),
  }),
  branching: 'default',

  async check(c, { lookups, add }) {
    if (!nonEmpty(c.automation_id) || !(await lookups.automationExists(c.automation_id)))
      add('automation_id', 'The automation_id must be an automation of the workspace.');
  },

  async run({ ctx, workspaceId, run, visit, config, finish, startRun }) {
    const target = await ctx.db
      .selectFrom('automations')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', String(config.automation_id))
      .executeTakeFirst();
    if (!target) throw new StepFailure('The automation to run does not exist.');
    if (target.status !== 'running') throw new StepFailure(`The automation to run is ${target.status}, not running.`);
    const trigger =
      stepsOf(target).find((s) => s.type === 'trigger' && s.trigger === 'system.manual') ??
      stepsOf(target).find((s) => s.type === 'trigger');
    let started: string | null = null;
    try {
      // The visit's id as the event: a repeated job cannot start a second run.
      const child = await startRun(target, {
        triggerKey: trigger!.key,
        event: 'system.manual',
        eventId: visit.id,
        payload: JSON.parse(run.payload),
        meta: { ...JSON.parse(run.meta), parent_run_id: run.id },
        contactId: target.context === 'contact' ? run.contact_id : null,
        emailId: target.context === 'email' ? run.email_id : null,
      });
      started = child.id;
    } catch (error) {
      if (!(error instanceof RunSkipped)) throw error;
      const existing = await ctx.db
        .selectFrom('automation_runs')
        .select('id')
        .where('automation_id', '=', target.id)
        .where('event_id', '=', visit.id)
        .executeTakeFirst();
      started = existing?.id ?? null;
      if (!started) return finish({ status: 'completed', outcome: 'skipped', data: { result: 'skipped', reason: error.message } });
    }
    return finish({ status: 'completed', outcome: 'started', data: { result: 'started', run_id: started } });
  },
};
