// Bodies of the tracking keys API (https://emailit.com/docs/api-reference/tracking-keys/) and
// of the tracking script's requests.
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';
import { MAX_ALLOWED_ORIGINS } from './origins.ts';

const text = (description: string) => Type.String({ description });

export const CreateTrackingKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Where the key is used; default Website' })),
    allowed_origins: Type.Optional(
      Type.Array(Type.String({ maxLength: 300 }), {
        maxItems: MAX_ALLOWED_ORIGINS,
        description: 'Sites allowed to send events; empty: any',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateTrackingKeyBody' },
);
export const UpdateTrackingKeyBody = CreateTrackingKeyBody;

export const TrackingKey = Type.Object(
  {
    object: Type.Literal('tracking_key', { description: 'Always tracking_key' }),
    id: text('tkey_ id'),
    name: text('Where the key is used'),
    key: text("The public key, part of the script's URL"),
    allowed_origins: Type.Array(Type.String(), { description: 'Sites allowed to send events; empty: any' }),
    script_url: text('The script to put on the site'),
    last_used_at: nullable(text('When the script last sent an event with it')),
    created_at: text('When it was created'),
    updated_at: text('When it last changed'),
  },
  { title: 'TrackingKey' },
);
export const TrackingKeyList = pageLimitListOf(TrackingKey, 'TrackingKeyList');
export const DeletedTrackingKey = Type.Object(
  {
    object: Type.Literal('tracking_key', { description: 'Always tracking_key' }),
    id: text('tkey_ id'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedTrackingKey' },
);

export const CollectBody = Type.Object(
  {
    kind: Type.Union([Type.Literal('track'), Type.Literal('identify')], {
      description: 'track: an event; identify: tie the visitor to an address',
    }),
    type: Type.Optional(Type.String({ maxLength: 102, description: 'track: w:<name> or c:<name>' })),
    properties: Type.Optional(Type.Object({}, { additionalProperties: true })),
    email: Type.Optional(Type.String({ maxLength: 320, description: "identify: the visitor's address; track: the identified address" })),
    anonymous_id: Type.String({
      minLength: 8,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description: "The visitor's id on this site (first-party storage)",
    }),
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'The page' })),
  },
  { additionalProperties: false, title: 'TrackingScriptRequest' },
);

export const Collected = Type.Object(
  { object: Type.Literal('event', { description: 'Always event' }), id: text('evt_ id'), type: text('The event type recorded') },
  { title: 'TrackingScriptAccepted' },
);
