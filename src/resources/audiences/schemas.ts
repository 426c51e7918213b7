// Request and response bodies of the audiences and subscribers API
// (https://emailit.com/docs/audiences.md) and of the legacy v1 audiences (docs/api.md).
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf, perPageListOf } from '../../platform/http/responses.ts';
import { pageLimitQuery } from '../../platform/http/lists.ts';
import { SettingsInput, SettingsOutput } from './settings.ts';

const text = (description: string) => Type.String({ description });
const Name = Type.String({ minLength: 1, maxLength: 191 });
const PersonName = Type.Union([Type.String({ maxLength: 255 }), Type.Null()]);
const CustomFieldsInput = Type.Object({}, { additionalProperties: true, description: "replaces the contact's custom fields" });

export const CreateAudienceBody = Type.Object({ name: Name, ...SettingsInput });
export const UpdateAudienceBody = Type.Object({ name: Type.Optional(Name), ...SettingsInput });
export const AudienceIdParams = Type.Object({ id: Type.String({ description: 'aud_ id or URL-encoded name' }) });
export const SubscriberParams = Type.Object({
  id: Type.String({ description: 'aud_ id or URL-encoded name' }),
  subscriber: Type.String({ description: "sub_ id or the contact's URL-encoded email address" }),
});

export const AudienceListQuery = pageLimitQuery(10, {
  order: Type.Optional(Type.String({ description: 'sort key: name, subscribers_count, created_at, updated_at' })),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

export const SubscriberListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'page size (default 25); per_page is an alias' })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'alias of limit' })),
  search: Type.Optional(Type.String({ description: 'part of the address, first or last name' })),
  subscribed: Type.Optional(
    Type.Union(
      ['true', 'false', '1', '0'].map((v) => Type.Literal(v)),
      { description: 'only (un)subscribed members' },
    ),
  ),
  match: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('or')])),
  order: Type.Optional(Type.String({ description: 'sort key: email, subscribed, subscribed_at, unsubscribed_at, created_at, updated_at' })),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

const SubscriberFields = {
  email: Type.String({ maxLength: 320, description: 'stored in lowercase' }),
  first_name: Type.Optional(PersonName),
  last_name: Type.Optional(PersonName),
  custom_fields: Type.Optional(CustomFieldsInput),
};

export const AddSubscriberBody = Type.Object({
  ...SubscriberFields,
  double_opt_in: Type.Optional(
    Type.Boolean({ default: false, description: 'send a confirmation email; the subscriber is created when its link is followed' }),
  ),
});

export const UpdateSubscriberBody = Type.Object({
  subscribed: Type.Optional(Type.Boolean({ description: 'false unsubscribes (kept with its history), true resubscribes' })),
  first_name: Type.Optional(PersonName),
  last_name: Type.Optional(PersonName),
  custom_fields: Type.Optional(CustomFieldsInput),
});

export const BulkAddBody = Type.Object({
  subscribers: Type.Array(Type.Object(SubscriberFields), { minItems: 1, maxItems: 1000, description: 'up to 1,000 addresses' }),
});
export const BulkRemoveBody = Type.Object({
  subscribers: Type.Array(Type.String({ maxLength: 320 }), {
    minItems: 1,
    maxItems: 1000,
    description: 'sub_ ids or addresses, up to 1,000',
  }),
});

export const Audience = Type.Object(
  {
    object: Type.Literal('audience', { description: 'Always audience' }),
    id: text('aud_ id'),
    name: text('Name, unique in the workspace'),
    token: text('Public token of the hosted subscribe page and link'),
    subscribers_count: Type.Integer({ description: 'Subscribers (memberships, subscribed or not)' }),
    ...SettingsOutput,
    created_at: text('When created'),
    updated_at: text('When last changed'),
  },
  { title: 'Audience' },
);

export const AudienceList = pageLimitListOf(Audience, 'AudienceList', {
  total_records: Type.Integer({ description: 'Audiences matching, on every page' }),
});

export const DeletedAudience = Type.Object(
  {
    object: Type.Literal('audience', { description: 'Always audience' }),
    id: text('aud_ id'),
    name: text('Name'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedAudience' },
);

export const Subscriber = Type.Object(
  {
    id: text('sub_ id'),
    object: Type.Literal('subscriber', { description: 'Always subscriber' }),
    subscribed: Type.Boolean({ description: 'Subscribed or unsubscribed' }),
    subscribed_at: nullable(text('When last subscribed')),
    unsubscribed_at: nullable(text('When unsubscribed')),
    audience: Type.Object({ id: text('aud_ id'), name: text('Audience name') }, { description: 'The audience' }),
    contact: Type.Object(
      {
        id: text('con_ id'),
        email: text('Address'),
        first_name: nullable(text('First name')),
        last_name: nullable(text('Last name')),
        custom_fields: Type.Object({}, { additionalProperties: true, description: 'Values by key' }),
      },
      { description: 'The contact' },
    ),
    created_at: text('When the membership was created'),
    updated_at: text('When it last changed'),
  },
  { title: 'Subscriber' },
);

export const UsageSchema = Type.Object(
  {
    used: Type.Integer({ description: 'Subscribers in the audience' }),
    limit: nullable(Type.Integer({ description: 'Subscribers the plan allows per audience; null: unlimited' })),
    plan: text("The workspace's plan"),
  },
  { description: 'The audience against its plan limit' },
);

export const SubscriberList = pageLimitListOf(Subscriber, 'SubscriberList', {
  total_records: Type.Integer({ description: 'Subscribers matching, on every page' }),
  usage: UsageSchema,
});

export const SubscriberConflict = Type.Object({ error: text('Already subscribed'), existing: Subscriber }, { title: 'SubscriberConflict' });

export const UsageError = Type.Object({ error: text('Which limit, for a person'), usage: UsageSchema }, { title: 'SubscriberLimitError' });
/** 422: the plan's subscriber limit (with `usage`) or another refusal (`{error}`). */
export const UsageOrError = Type.Union([UsageError, Type.Ref('Error')]);

export const PendingConfirmation = Type.Object(
  {
    object: Type.Literal('subscriber_confirmation', { description: 'Always subscriber_confirmation' }),
    email: text('The address the confirmation email went to'),
    audience: Type.Object({ id: text('aud_ id'), name: text('Audience name') }, { description: 'The audience' }),
    email_id: text('em_ id of the confirmation email'),
    message: text('What happens next'),
  },
  { title: 'PendingConfirmation' },
);

export const DeletedSubscriber = Type.Object(
  {
    object: Type.Literal('subscriber', { description: 'Always subscriber' }),
    id: text('sub_ id'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedSubscriber' },
);

const BulkProblem = Type.Object({
  index: Type.Integer({ description: 'Position in the request, from 0' }),
  email: text('The entry'),
  error: text('Why'),
});

export const BulkAddResult = Type.Object(
  {
    object: Type.Literal('bulk_result', { description: 'Always bulk_result' }),
    created: Type.Integer({ description: 'New subscribers' }),
    resubscribed: Type.Integer({ description: 'Unsubscribed members subscribed again' }),
    already_subscribed: Type.Integer({ description: 'Members left as they were' }),
    contacts_created: Type.Integer({ description: 'Contacts that did not exist before' }),
    usage: UsageSchema,
  },
  { title: 'BulkAddResult' },
);
export const BulkRemoveResult = Type.Object(
  {
    object: Type.Literal('bulk_result', { description: 'Always bulk_result' }),
    removed: Type.Integer({ description: 'Subscribers deleted' }),
    not_found: Type.Array(Type.String(), { description: 'Entries that named no subscriber of the audience' }),
    usage: UsageSchema,
  },
  { title: 'BulkRemoveResult' },
);
export const BulkInvalid = Type.Object(
  { error: text('What was wrong'), errors: Type.Array(BulkProblem, { description: 'Each bad entry' }) },
  { title: 'BulkInvalid' },
);

// The legacy v1 API.
export const LegacyAudience = Type.Object(
  {
    id: text('16-character id (no aud_ prefix)'),
    name: text('Name'),
    subscribers_count: Type.Integer({ description: 'Subscribers' }),
    created_at: text('When created'),
    updated_at: text('When last changed'),
  },
  { title: 'LegacyAudience' },
);
export const LegacyAudienceList = perPageListOf(LegacyAudience, 'LegacyAudienceList');
export const LegacyListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
  'filter[name]': Type.Optional(Type.String({ description: 'part of the name, case-insensitive' })),
});
export const LegacyIdParams = Type.Object({ id: Type.String({ description: '16-character audience id or URL-encoded name' }) });
export const LegacyNameBody = Type.Object({ name: Name });
export const LegacyDeleted = Type.Object(
  { id: text('16-character id'), name: text('Name'), deleted: Type.Literal(true, { description: 'Always true' }) },
  { title: 'LegacyDeletedAudience' },
);
export const TokenParams = Type.Object({ token: Type.String({ maxLength: 64, description: "the audience's public token" }) });
export const LegacySubscribeBody = Type.Object({
  email: Type.String({ maxLength: 320 }),
  first_name: Type.Optional(PersonName),
  last_name: Type.Optional(PersonName),
  custom_fields: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'key-value pairs' })),
});
export const LegacySubscribed = Type.Object(
  {
    status: Type.Union([Type.Literal('subscribed'), Type.Literal('already_subscribed'), Type.Literal('pending_confirmation')], {
      description: 'subscribed now, already a member, or a confirmation email was sent (double opt-in)',
    }),
    email: text('The address'),
    audience_id: text('16-character audience id'),
    message: text('For a person'),
  },
  { title: 'LegacySubscribeResult' },
);
