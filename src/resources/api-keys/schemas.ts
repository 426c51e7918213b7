// Response bodies of the API keys API (https://emailit.com/docs/developers/api-keys.md).
import { Type } from '@sinclair/typebox';
import { nullable, pageLimitListOf } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });

const fields = {
  object: Type.Literal('api_key', { description: 'Always api_key' }),
  id: text('key_ id'),
  name: text('Name, unique in the workspace'),
  scope: Type.Union([Type.Literal('full'), Type.Literal('sending'), Type.Literal('events')], {
    description: 'full: every endpoint; sending: send and forward only; events: send workspace and custom events only',
  }),
  sending_domain_id: nullable(text('For a sending key: the only domain it may send from; null for any')),
  last_used_at: nullable(text('When it last authenticated a request')),
  created_at: text('When it was created'),
  updated_at: text('When it last changed'),
};

export const ApiKey = Type.Object(fields, { title: 'ApiKey' });

/** Create and regenerate: the key with its secret, shown this once. */
export const ApiKeyWithSecret = Type.Object(
  { ...fields, key: text('The secret (secret_…), shown only in this response') },
  { title: 'ApiKeyWithSecret' },
);

export const ApiKeyList = pageLimitListOf(ApiKey, 'ApiKeyList');

export const DeletedApiKey = Type.Object(
  { object: fields.object, id: fields.id, name: fields.name, deleted: Type.Literal(true, { description: 'Always true' }) },
  { title: 'DeletedApiKey' },
);
