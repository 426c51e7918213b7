// Response bodies of the webhooks API (https://emailit.com/docs/api-reference/webhooks.md).
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { FILTER_OPERATORS } from '../../platform/event-filter.ts';

const text = (description: string) => Type.String({ description });
const int = (description: string) => Type.Integer({ description });

const Filter = nullable(
  Type.Object(
    {
      match: Type.Union([Type.Literal('all'), Type.Literal('any')], { description: 'all: every rule must match; any: one is enough' }),
      rules: Type.Array(
        Type.Object(
          {
            field: text('Dotted path into the event object'),
            operator: Type.Union(
              FILTER_OPERATORS.map((op) => Type.Literal(op)),
              { description: 'Comparison' },
            ),
            value: Type.Optional(Type.Unknown({ description: 'Compared value; an array for in and not_in' })),
          },
          { title: 'WebhookFilterRule' },
        ),
        { description: 'The rules' },
      ),
    },
    { title: 'WebhookFilter', description: 'Only events matching this filter are posted; null for every subscribed event' },
  ),
);

const fields = {
  object: Type.Literal('webhook', { description: 'Always webhook' }),
  id: text('wh_ id'),
  name: text('Name, unique in the workspace'),
  url: text('Endpoint the events are posted to'),
  all_events: Type.Boolean({ description: 'Subscribed to every event type' }),
  enabled: Type.Boolean({ description: 'Events are posted while true' }),
  events: Type.Array(Type.String(), { description: 'Subscribed event types (when all_events is false)' }),
  filter: Filter,
  filters_allowed: Type.Boolean({ description: "The workspace's plan allows payload filters" }),
  last_used_at: nullable(text('When a request was last posted')),
  created_at: text('When it was created'),
  updated_at: text('When it last changed'),
};

export const Webhook = Type.Object(fields, { title: 'Webhook' });

/** Create, retrieve and reset-secret: with the signing secret. */
export const WebhookWithSecret = Type.Object({ ...fields, secret: text('Signing secret of the requests') }, { title: 'WebhookWithSecret' });

export const WebhookList = pageLimitListOf(Webhook, 'WebhookList', {
  usage: Type.Object(
    {
      used: int('Webhooks in the workspace'),
      limit: int('Webhooks the plan allows'),
      filters_allowed: Type.Boolean({ description: 'The plan allows payload filters' }),
    },
    { title: 'WebhookUsage', description: "The plan's webhook allowance" },
  ),
});

export const DeletedWebhook = Type.Object(
  { object: fields.object, id: fields.id, name: fields.name, deleted: Type.Literal(true, { description: 'Always true' }) },
  { title: 'DeletedWebhook' },
);

const requestFields = {
  object: Type.Literal('webhook_request', { description: 'Always webhook_request' }),
  id: text('whr_ id'),
  webhook_id: text('The webhook'),
  status: Type.Union(
    ['pending', 'retrying', 'delivered', 'failed'].map((s) => Type.Literal(s)),
    { description: 'Delivery state' },
  ),
  attempts: int('Attempts made'),
  max_attempts: int('Attempts before it fails'),
  event_count: int('Events in the request'),
  event_ids: Type.Array(Type.String(), { description: 'evt_ ids of the events it carries' }),
  response_status: nullable(int('HTTP status of the last answer')),
  response_body: nullable(text("Start of the last answer's body")),
  duration_ms: nullable(Type.Number({ description: 'Duration of the last attempt in milliseconds' })),
  error: nullable(text('Why the last attempt failed, when it did')),
  next_attempt_at: nullable(text('When it is tried next')),
  last_attempt_at: nullable(text('When it was last tried')),
  delivered_at: nullable(text('When the endpoint accepted it')),
  created_at: text('When it was queued'),
  updated_at: text('When it last changed'),
};

export const WebhookRequest = Type.Object(requestFields, { title: 'WebhookRequest' });

export const WebhookRequestList = pageLimitListOf(WebhookRequest, 'WebhookRequestList');

export const WebhookRequestDetail = Type.Object(
  {
    ...requestFields,
    payload: Type.Unknown({ description: 'The JSON body posted; null once purged' }),
    attempt_history: Type.Array(
      Type.Object(
        {
          attempt: int('Attempt number'),
          manual: Type.Boolean({ description: 'A resend asked for through the API' }),
          response_status: nullable(int('HTTP status of the answer')),
          response_body: nullable(text("Start of the answer's body")),
          duration_ms: nullable(Type.Number({ description: 'Duration in milliseconds' })),
          error: nullable(text('Why it failed, when it did')),
          created_at: text('When it was made'),
        },
        { title: 'WebhookAttempt' },
      ),
      { description: 'Every attempt, oldest first' },
    ),
  },
  { title: 'WebhookRequestDetail' },
);

export const WebhookTest = Type.Object(
  {
    object: Type.Literal('webhook_test', { description: 'Always webhook_test' }),
    webhook_id: text('The webhook'),
    event_id: text('evt_ id of the sample event'),
    type: text('Event type of the sample'),
    success: Type.Boolean({ description: 'The endpoint answered 2xx' }),
    status_code: nullable(int('HTTP status of the answer')),
    response_body: nullable(text("Start of the answer's body")),
    duration_ms: nullable(Type.Number({ description: 'Duration in milliseconds' })),
    error: nullable(text('Why it failed, when it did')),
  },
  { title: 'WebhookTest' },
);
