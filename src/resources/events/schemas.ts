// Response bodies of the events API (https://emailit.com/docs/api-reference/events/), v2 and the
// legacy v1.
import { Type } from '@sinclair/typebox';
import { pageLimitListOf, perPageListOf } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });
const AnyObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

const fields = {
  object: Type.Literal('event', { description: 'Always event' }),
  id: text('evt_ id'),
  type: text('Event type, e.g. email.delivered'),
};

export const Event = Type.Object(
  {
    ...fields,
    data: Type.Object({ object: AnyObject('The object the event is about') }, { title: 'EventData', description: "The event's data" }),
    created_at: text('When it happened'),
  },
  { title: 'Event' },
);

/** List items carry `data` only with include_data=true. */
export const EventList = pageLimitListOf(
  Type.Object({ ...fields, data: Type.Optional(Event.properties.data), created_at: text('When it happened') }, { title: 'EventListItem' }),
  'EventList',
);

export const LegacyEvent = Type.Object(
  {
    id: text('evt_ id'),
    uuid: text('A stable UUID of the event'),
    type: text('Event type'),
    data: AnyObject('The object the event is about'),
    created_at: text('When it happened'),
    updated_at: text('Same as created_at'),
  },
  { title: 'LegacyEvent' },
);

export const LegacyEventList = perPageListOf(LegacyEvent, 'LegacyEventList');
