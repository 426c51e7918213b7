// The trigger table: each trigger with the contexts it is valid in, what fires it, and its
// config's schema (for the dashboard builder, served by GET /v2/automations/catalog), plus the
// checks of a trigger's config. Which events fire which trigger is event-triggers.ts's; the
// runtime checks of an event against a trigger are the engine's (engine.ts, triggeredRun).
import { Type, type TObject } from '@sinclair/typebox';
import { CONTACT_TRIGGERS, DATE_TRIGGERS, EMAIL_TRIGGERS, SYSTEM_TRIGGERS, checkFilter, type AutomationContext } from './graph.ts';
import { nonEmpty, type ConfigCheck } from './actions/action.ts';
import { audienceId, FilterSchema } from './actions/fields.ts';

type TriggerName = (typeof CONTACT_TRIGGERS)[number] | (typeof EMAIL_TRIGGERS)[number] | (typeof SYSTEM_TRIGGERS)[number] | 'event.*';

export interface TriggerDefinition {
  title: string;
  description: string;
  contexts: readonly AutomationContext[];
  /** false: accepted in a graph, never fired (Postlane has no source for it). */
  fires: boolean;
  config: TObject;
}

const filter = Type.Optional(FilterSchema);
const filterOnly = Type.Object({ filter }, { description: "filter: rules over the event's object" });
const withAudience = Type.Object({ audience_id: Type.Optional(audienceId('only this audience (any when absent)')), filter });
const withDate = Type.Object({
  date_field: Type.String({ minLength: 1, description: 'The custom field key holding the date (YYYY-MM-DD)' }),
  filter: Type.Optional(FilterSchema),
});

const contact = (title: string, description: string, config: TObject = filterOnly, fires = true): TriggerDefinition => ({
  title,
  description,
  contexts: ['contact'],
  fires,
  config,
});
const email = (title: string, description: string): TriggerDefinition => ({
  title,
  description,
  contexts: ['email'],
  fires: true,
  config: filterOnly,
});

export const TRIGGER_TABLE: { readonly [K in TriggerName]: TriggerDefinition } = {
  'contact.added_to_audience': contact('Added to audience', 'A contact subscribes to an audience (a resubscribe too).', withAudience),
  'contact.removed_from_audience': contact('Removed from audience', 'A subscriber is deleted from an audience.', withAudience),
  'contact.updated': contact('Contact updated', 'A contact is updated.'),
  'contact.loaded_email': contact('Opened an email', "A contact's email is opened."),
  'contact.clicked_in_email': contact('Clicked in an email', 'A contact clicks a tracked link.'),
  'contact.date_anniversary': contact(
    'Date anniversary',
    "Daily at 00:00 UTC, for contacts whose date field has today's month and day.",
    withDate,
  ),
  'contact.on_date': contact('On a date', 'Daily at 00:00 UTC, for contacts whose date field is today.', withDate),
  'contact.visits_url': contact('Visits a URL', 'Accepted, never fired.', filterOnly, false),
  'contact.on_purchase': contact('On purchase', 'Accepted, never fired.', filterOnly, false),
  'contact.on_event': contact('On event', 'Accepted, never fired.', filterOnly, false),
  'email.received': email('Email received', 'An inbound email arrives.'),
  'email.delivered': email('Email delivered', 'An email is delivered.'),
  'email.bounced': email('Email bounced', 'An email bounces.'),
  'email.complained': email('Complaint', 'A recipient marks an email as spam.'),
  'email.loaded': email('Email opened', 'An email is opened.'),
  'email.clicked': email('Link clicked', 'A tracked link in an email is clicked.'),
  'email.failed': email('Email failed', 'An email fails for good.'),
  'email.suppressed': email('Email suppressed', 'An email is not sent: its recipient is suppressed.'),
  'email.canceled': email('Email canceled', 'A scheduled email is canceled.'),
  'system.manual': {
    title: 'Manual',
    description: 'POST /v2/automations/{id}/trigger with a payload.',
    contexts: ['contact', 'email', 'event'],
    fires: true,
    config: Type.Object({}),
  },
  'system.schedule': {
    title: 'Schedule',
    description: 'Accepted, never fired.',
    contexts: ['contact', 'email', 'event'],
    fires: false,
    config: Type.Object({}),
  },
  'event.*': {
    title: 'Event',
    description:
      'Any name starting event.; event.w:<name> and event.c:<name> are fired by the workspace or custom event of that type, others never.',
    contexts: ['event'],
    fires: true,
    config: filterOnly,
  },
};

/** A trigger step's config: `audience_id` and `date_field` when given (and `date_field` for the
 *  date triggers when `full`), `filter` always. */
export async function checkTriggerConfig(
  trigger: string | null,
  c: Record<string, any>,
  { path, problems, lookups, add }: ConfigCheck,
  full: boolean,
): Promise<void> {
  if (c.audience_id !== undefined && (!nonEmpty(c.audience_id) || (full && !(await lookups.audienceExists(c.audience_id)))))
    add('audience_id', 'The audience_id must be an audience of the workspace.');
  if (c.date_field !== undefined && !nonEmpty(c.date_field)) add('date_field', 'The date_field must be a custom field key.');
  if (full && trigger && DATE_TRIGGERS.includes(trigger) && !nonEmpty(c.date_field))
    add('date_field', 'The date_field is required for date triggers.');
  checkFilter(c.filter, `${path}.filter`, problems, false);
}
