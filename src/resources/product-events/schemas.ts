// Request and response bodies of product events: sending them
// (https://emailit.com/docs/api-reference/events/send/), the workspace's definitions
// (https://emailit.com/docs/api-reference/workspace-events/) and a contact's activity.
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { MAX_PROPERTIES, PROPERTY_TYPES } from './definitions.ts';

const text = (description: string) => Type.String({ description });
export const MAX_BATCH = 100;

const eventFields = {
  type: Type.String({ minLength: 3, maxLength: 102, description: 'w:<name> for a workspace event, c:<name> for a custom event' }),
  properties: Type.Optional(Type.Object({}, { additionalProperties: true, description: "The event's data; default {}" })),
  email: Type.Optional(Type.String({ maxLength: 320, description: 'The address of the person the event is about' })),
  contact_id: Type.Optional(
    Type.String({ maxLength: 64, description: 'The con_ id of the contact the event is about (instead of email)' }),
  ),
  occurred_at: Type.Optional(Type.String({ maxLength: 64, description: 'When it happened (ISO 8601); default now' })),
};

export const SendEventBody = Type.Object(eventFields, { additionalProperties: false, title: 'SendEventBody' });
export const SendEventsBatchBody = Type.Object(
  {
    events: Type.Array(Type.Object(eventFields, { additionalProperties: false }), {
      minItems: 1,
      maxItems: MAX_BATCH,
      description: `Up to ${MAX_BATCH} events`,
    }),
  },
  { additionalProperties: false, title: 'SendEventsBatchBody' },
);

export const ProductEventObject = Type.Object(
  {
    type: text('w:<name> or c:<name>'),
    scope: Type.Union([Type.Literal('workspace'), Type.Literal('custom')], { description: 'workspace (w:) or custom (c:)' }),
    properties: Type.Object({}, { additionalProperties: true, description: "The event's data as stored" }),
    email: nullable(text('The address the event is about')),
    contact_id: nullable(text('The con_ id of the contact it is tied to')),
    occurred_at: text('When it happened'),
    source: Type.Union([Type.Literal('api'), Type.Literal('tracking')], {
      description: 'api: sent from a server; tracking: the tracking script',
    }),
  },
  { title: 'ProductEventObject', additionalProperties: true },
);

export const RecordedEvent = Type.Object(
  {
    object: Type.Literal('event', { description: 'Always event' }),
    id: text('evt_ id'),
    type: text('w:<name> or c:<name>'),
    data: Type.Object({ object: ProductEventObject }, { title: 'ProductEventData', description: "The event's data" }),
    created_at: text('When it was recorded'),
  },
  { title: 'RecordedEvent' },
);

export const RecordedEvents = Type.Object(
  { data: Type.Array(RecordedEvent, { description: 'The events, in the order sent' }) },
  { title: 'RecordedEvents' },
);

/** A contact's activity: its product events and the tracking script's identifications. */
export const ContactActivity = pageLimitListOf(
  Type.Object(
    {
      object: Type.Literal('event', { description: 'Always event' }),
      id: text('evt_ id'),
      type: text('w:<name>, c:<name>, or contact.identified'),
      data: Type.Object(
        {
          object: Type.Object(
            {
              scope: Type.Union([Type.Literal('system'), Type.Literal('workspace'), Type.Literal('custom')], {
                description: 'system, workspace (w:) or custom (c:)',
              }),
            },
            { additionalProperties: true, description: 'What the event is about, with its scope' },
          ),
        },
        { description: "The event's data" },
      ),
      created_at: text('When it was recorded'),
    },
    { title: 'ContactActivityItem' },
  ),
  'ContactActivity',
);

const PropertyDefinitionInput = Type.Object(
  {
    name: Type.String({ description: '1 to 64 letters, digits, - or _' }),
    type: Type.String({ description: PROPERTY_TYPES.join(', ') }),
    required: Type.Optional(Type.Boolean({ description: 'Every event must carry it' })),
    title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);

export const CreateDefinitionBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 102, description: 'e.g. customer.type (w: prefix optional)' }),
    title: Type.Optional(Type.Union([Type.String({ maxLength: 120 }), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    properties: Type.Optional(Type.Array(PropertyDefinitionInput, { maxItems: MAX_PROPERTIES })),
  },
  { additionalProperties: false, title: 'CreateWorkspaceEventBody' },
);

export const UpdateDefinitionBody = Type.Object(
  {
    title: Type.Optional(Type.Union([Type.String({ maxLength: 120 }), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    properties: Type.Optional(Type.Array(PropertyDefinitionInput, { maxItems: MAX_PROPERTIES })),
  },
  { additionalProperties: false, title: 'UpdateWorkspaceEventBody' },
);

const PropertyDefinition = Type.Object(
  {
    name: text('Property name'),
    type: Type.Union(
      PROPERTY_TYPES.map((t) => Type.Literal(t)),
      { description: 'Its type' },
    ),
    required: Type.Boolean({ description: 'Every event must carry it' }),
    title: nullable(text('Readable name')),
    description: nullable(text('Note for the team')),
  },
  { title: 'EventPropertyDefinition' },
);

export const WorkspaceEvent = Type.Object(
  {
    object: Type.Literal('workspace_event', { description: 'Always workspace_event' }),
    id: text('wev_ id'),
    name: text('The event name, without prefix'),
    type: text('The type events of it are sent as (w:<name>)'),
    title: nullable(text('Readable name')),
    description: nullable(text('Note for the team')),
    properties: Type.Array(PropertyDefinition, { description: 'Its typed properties' }),
    created_at: text('When it was defined'),
    updated_at: text('When it last changed'),
  },
  { title: 'WorkspaceEvent' },
);

export const WorkspaceEventList = pageLimitListOf(WorkspaceEvent, 'WorkspaceEventList');

export const DeletedWorkspaceEvent = Type.Object(
  {
    object: Type.Literal('workspace_event', { description: 'Always workspace_event' }),
    id: text('wev_ id'),
    name: text('The event name'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedWorkspaceEvent' },
);
