// The daily date triggers (https://emailit.com/docs/automations.md): at 00:00 UTC,
// `contact.on_date` fires for contacts whose date custom field (`date_field`) equals today,
// `contact.date_anniversary` for those whose field has today's month and day. A recurring
// `automation.dates` job runs daily at 00:00 UTC (src/platform/recurring-jobs.ts); a run per
// contact and day is unique (its event key names both), so a job run twice starts nothing twice.
import type { AppContext } from '../../platform/context.ts';
import { nowMs } from '../../platform/clock.ts';
import { recurringJob } from '../../platform/recurring-jobs.ts';
import { normalizeFilter } from '../webhooks/service.ts';
import { automationFilterMatches } from './filter.ts';
import { customFieldsOf } from '../contacts/service.ts';
import { DATE_TRIGGERS } from './graph.ts';
import { RunSkipped, startRun } from './engine.ts';
import { stepsOf } from './service.ts';

export const DATE_JOB = 'automation.dates';
export const dateJob = (ctx: AppContext) =>
  recurringJob({
    name: DATE_JOB,
    dailyAt: '00:00',
    async run() {
      await fireDateTriggers(ctx);
    },
  });

/** Fires the date triggers of every running automation for the UTC day of the clock. */
export async function fireDateTriggers(ctx: AppContext, day = new Date(nowMs()).toISOString().slice(0, 10)): Promise<number> {
  let started = 0;
  const automations = await ctx.db
    .selectFrom('automations')
    .selectAll()
    .where('status', '=', 'running')
    .where('context', '=', 'contact')
    .execute();
  for (const automation of automations) {
    for (const trigger of stepsOf(automation).filter((s) => s.type === 'trigger' && s.trigger && DATE_TRIGGERS.includes(s.trigger))) {
      const field = trigger.config?.date_field;
      if (typeof field !== 'string' || field === '') continue;
      const filter = trigger.config.filter ? normalizeFilter(trigger.config.filter) : null;
      let after = '';
      for (;;) {
        const contacts = await ctx.db
          .selectFrom('contacts')
          .selectAll()
          .where('workspace_id', '=', automation.workspace_id)
          .where('id', '>', after)
          .where('custom_fields', 'like', `%${field}%`)
          .orderBy('id')
          .limit(1000)
          .execute();
        if (contacts.length === 0) break;
        after = contacts[contacts.length - 1].id;
        for (const contact of contacts) {
          const value = customFieldsOf(contact)[field];
          if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) continue;
          const hit = trigger.trigger === 'contact.on_date' ? value === day : value.slice(5) === day.slice(5);
          if (!hit) continue;
          const object = {
            id: contact.id,
            object: 'contact',
            email: contact.email,
            first_name: contact.first_name,
            last_name: contact.last_name,
            custom_fields: customFieldsOf(contact),
          };
          if (filter && !automationFilterMatches(filter, object)) continue;
          try {
            await startRun(ctx, automation, {
              triggerKey: trigger.key,
              event: trigger.trigger!,
              eventId: `date_${day}_${contact.id}`,
              payload: { type: trigger.trigger, object },
              meta: { date: day, date_field: field },
              contactId: contact.id,
              emailId: null,
            });
            started++;
          } catch (error) {
            if (!(error instanceof RunSkipped)) throw error;
          }
        }
      }
    }
  }
  return started;
}
