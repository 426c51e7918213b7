// Request and response bodies of the automations API (https://emailit.com/docs/automations.md).
// Request bodies are checked by the service, so every problem comes back in one 400 `errors` object
// keyed by field path; the schemas here document them.
import { Type } from '@sinclair/typebox';
import { nullable, perPageListOf } from '../../platform/http/responses.ts';
import { perPageQuery } from '../../platform/http/lists.ts';

const text = (description: string) => Type.String({ description });
const anyObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
const loose = (description: string) => Type.Unknown({ description });

// Requests ---------------------------------------------------------------------------------

export const IdParams = Type.Object({ id: text('aut_ id') });
export const RunParams = Type.Object({ id: text('aut_ id'), run_id: text('aur_ id') });
export const StepParams = Type.Object({ id: text('aut_ id'), step_key: text("The step's key") });
export const ContactParams = Type.Object({ id: text('aut_ id'), contact_id: text('con_ id or email address') });

const graphFields = {
  description: Type.Optional(loose('string or null')),
  settings: Type.Optional(
    loose(
      'on_step_failure (stop | skip, default stop), allow_reentry (boolean, default true), max_concurrent_runs (integer, 0 = unlimited), cooldown_seconds (integer)',
    ),
  ),
  steps: Type.Optional(
    loose('Steps: key (unique), type (trigger | action), trigger (for triggers), action (for actions), config (object)'),
  ),
  connections: Type.Optional(
    loose('Connections: from (key), to (key), branch (yes/no after a condition, a variant key after an experiment, otherwise default)'),
  ),
};

export const CreateBody = Type.Object(
  {
    context: Type.Optional(loose('contact, email or event (required, immutable)')),
    name: Type.Optional(loose('Required, up to 191 characters')),
    ...graphFields,
  },
  { description: 'Checked by the service: every problem is returned in `errors` keyed by field path.' },
);

export const UpdateBody = Type.Object(
  { context: Type.Optional(loose('Immutable: must match if given')), name: Type.Optional(loose('Up to 191 characters')), ...graphFields },
  { description: "Fields given replace the stored ones; the whole graph and every action's config are checked." },
);

export const ValidateBody = Type.Object(
  {
    context: Type.Optional(loose('contact, email or event (required)')),
    name: Type.Optional(loose('Required, up to 191 characters')),
    ...graphFields,
  },
  { description: 'An automation as POST /automations takes it; nothing is saved.' },
);

export const TriggerBody = Type.Object({
  payload: Type.Optional(
    anyObject(
      "The trigger data; in contact automations `contact_id` (con_ id or email) names the run's contact; in email automations `email_id`",
    ),
  ),
});

export const ListQuery = perPageQuery({ status: Type.Optional(Type.String({ description: 'draft, running, paused or stopped' })) });
export const RunsQuery = perPageQuery({
  status: Type.Optional(Type.String({ description: 'running, completed, failed or canceled' })),
  contact_id: Type.Optional(Type.String({ description: 'con_ id' })),
});
export const StatsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339: runs created at or after' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339: runs created before' })),
  'run_ids[]': Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'Only these aur_ ids (repeatable)' })),
  run_ids: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'Alias of run_ids[]' })),
});
export const StepStatsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339: runs created at or after' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339: runs created before' })),
});

// Responses --------------------------------------------------------------------------------

const Settings = Type.Object(
  {
    on_step_failure: Type.String({ description: 'stop or skip' }),
    allow_reentry: Type.Boolean({ description: 'false: a trigger is skipped while the same contact or email has a running run' }),
    max_concurrent_runs: Type.Integer({ description: 'Runs in running status at once; 0 unlimited' }),
    cooldown_seconds: Type.Integer({ description: 'Skip a trigger if the same contact or email started a run this recently' }),
  },
  { additionalProperties: true, description: 'How runs behave' },
);

const StepObject = Type.Object(
  {
    id: text('aus_ id'),
    key: text('Unique key within the automation'),
    type: text('trigger or action'),
    trigger: nullable(text('The trigger name (trigger steps)')),
    action: nullable(text('The action name (action steps)')),
    config: anyObject("The step's config"),
  },
  { title: 'AutomationStep' },
);
const ConnectionObject = Type.Object(
  { from: text('Step key'), to: text('Step key'), branch: text('yes, no, a variant key, or default') },
  { title: 'AutomationConnection' },
);

export const Automation = Type.Object(
  {
    id: text('aut_ id'),
    context: text('contact, email or event'),
    name: text('Name'),
    description: nullable(text('Description')),
    status: text('draft, running, paused or stopped'),
    settings: Settings,
    last_triggered_at: nullable(text('When a run last started')),
    published_at: nullable(text('The last start')),
    created_at: text('When it was created'),
    updated_at: text('When it last changed'),
    steps: Type.Array(StepObject, { description: 'Trigger and action steps' }),
    connections: Type.Array(ConnectionObject, { description: 'Edges between steps' }),
  },
  { title: 'Automation' },
);
export const AutomationData = Type.Object({ data: Automation }, { title: 'AutomationResponse' });
export const AutomationList = perPageListOf(Automation, 'AutomationList');
export const DeletedAutomation = Type.Object(
  {
    data: Type.Object(
      { id: text('aut_ id'), deleted: Type.Literal(true, { description: 'Always true' }) },
      { description: 'What was deleted' },
    ),
  },
  { title: 'DeletedAutomation' },
);

const RunStep = Type.Object(
  {
    step_id: text('aus_ id'),
    step_key: text("The step's key"),
    status: text('running, waiting, completed or failed'),
    data: anyObject('What the step did: email steps result, outcome, email_oid, to; wait steps status, delayMs, seconds; failures error'),
    started_at: nullable(text('When it started')),
    completed_at: nullable(text('When it ended')),
    created_at: text('When it was reached'),
  },
  { title: 'AutomationRunStep' },
);

export const Run = Type.Object(
  {
    id: text('aur_ id'),
    automation_id: text('aut_ id'),
    contact_id: nullable(text('con_ id (contact context)')),
    email_id: nullable(text('em_ id (email context)')),
    event_id: nullable(text('evt_ id of the event that started it')),
    event: text('Trigger name'),
    payload: anyObject('Trigger payload, with an object'),
    meta: anyObject('e.g. source_event_id'),
    status: text('running, completed, failed or canceled'),
    started_at: nullable(text('When it started')),
    completed_at: nullable(text('When it ended')),
    created_at: text('When it was created'),
    updated_at: text('When it last changed'),
    run_steps: Type.Array(RunStep, { description: 'Each step visit, oldest first' }),
  },
  { title: 'AutomationRun' },
);
export const RunData = Type.Object({ data: Run }, { title: 'AutomationRunResponse' });
export const RunList = perPageListOf(Run, 'AutomationRunList');
export const RemovedContact = Type.Object(
  {
    data: Type.Object(
      {
        automation_id: text('aut_ id'),
        contact_id: text('con_ id'),
        canceled_runs: Type.Integer({ description: 'Runs of the contact that were canceled' }),
      },
      { description: 'The contact removed' },
    ),
  },
  { title: 'AutomationContactRemoved' },
);

export const Validation = Type.Object(
  {
    data: Type.Object(
      {
        valid: Type.Boolean({ description: 'true when errors is empty: the automation could be saved and started as it is' }),
        errors: Type.Record(Type.String(), Type.Array(Type.String()), {
          description: 'Problems keyed by field path (steps.2.config.seconds), as a 400 from create, update or start gives them',
        }),
      },
      { description: 'The result of the checks' },
    ),
  },
  { title: 'AutomationValidation' },
);

const configSchema = anyObject('The config object as JSON Schema: its fields, types, which are required, defaults and descriptions');
const contexts = Type.Array(Type.String(), { description: 'The contexts it is valid in: contact, email, event' });
const CatalogTrigger = Type.Object(
  {
    name: text('The trigger name (event.* stands for every name starting event.)'),
    title: text('A short title'),
    description: text('When it fires'),
    contexts,
    fires: Type.Boolean({ description: 'false: accepted in a graph but never fired' }),
    config: configSchema,
  },
  { title: 'AutomationCatalogTrigger' },
);
const CatalogAction = Type.Object(
  {
    name: text('The action name'),
    title: text('A short title'),
    description: text('What a step of it does'),
    contexts,
    branching: text(
      'The branches of its outgoing connections: default; yes_no (yes and no); variants (each variant key, and default); none (no outgoing connections)',
    ),
    config: configSchema,
  },
  { title: 'AutomationCatalogAction' },
);
export const Catalog = Type.Object(
  {
    data: Type.Object(
      {
        contexts: Type.Array(Type.String(), { description: 'contact, email, event' }),
        triggers: Type.Array(CatalogTrigger, { description: 'Every trigger' }),
        actions: Type.Array(CatalogAction, { description: 'Every action' }),
      },
      { description: 'The catalogue' },
    ),
  },
  { title: 'AutomationCatalog' },
);

const counts = (description: string) => Type.Record(Type.String(), Type.Integer(), { description });
export const StepStats = Type.Object(
  {
    total: Type.Integer({ description: 'Step visits' }),
    by_status: counts('running, waiting, completed, failed'),
    by_outcome: counts(
      'Outcomes (send/forward: email statuses; condition: matched/not_matched; experiment: variant; call_webhook: 2xx…; failures: error)',
    ),
    funnel: Type.Optional(
      counts('send_email only; cumulative accepted ⊇ delivered ⊇ loaded ⊇ clicked; bounced, failed, complained, unsubscribed plain'),
    ),
  },
  { title: 'StepStatistics' },
);
export const StatsData = Type.Object(
  { data: Type.Record(Type.String(), StepStats, { description: 'By step key' }) },
  { title: 'AutomationStats' },
);
export const StepStatsData = Type.Object({ data: StepStats }, { title: 'AutomationStepStats' });
