import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { Query } from '../../platform/http/lists.ts';
import { pageLimitQuery } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { ApiKey, ApiKeyList, ApiKeyWithSecret, DeletedApiKey } from './schemas.ts';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys, regenerateApiKey, renameApiKey } from './service.ts';
import { transact } from '../../platform/db/transact.ts';

const tags = ['API keys'];
const IdParams = Type.Object({ id: Type.String({ description: 'key_ id or name' }) });
const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  scope: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('sending'), Type.Literal('events')])),
  sending_domain_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const RenameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) });
type Id = Static<typeof IdParams>;

const notFound = errorResponses({ 404: 'error' });
// Keys are credentials of the whole workspace: only its admins make, change or delete them
// (src/platform/http/roles.ts). Reading them is open to members: a secret is never shown again.
const admin = { role: 'admin' as const };

export const resource: Resource = {
  name: 'api-keys',
  v2(app, ctx) {
    app.post(
      '/api-keys',
      {
        config: admin,
        schema: { tags, body: CreateBody, response: { 201: ApiKeyWithSecret, ...errorResponses({ 400: 'error', 409: 'conflict' }) } },
      },
      async (request, reply) => {
        const body = request.body as Static<typeof CreateBody>;
        const key = await transact(ctx.db, (tx) => createApiKey(tx, request.principal.workspaceId, body));
        return reply.code(201).send(key);
      },
    );
    app.get('/api-keys', { schema: { tags, querystring: pageLimitQuery(10), response: { 200: ApiKeyList } } }, async (request) =>
      listApiKeys(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/api-keys/:id', { schema: { tags, params: IdParams, response: { 200: ApiKey, ...notFound } } }, async (request) =>
      getApiKey(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/api-keys/:id',
      {
        config: admin,
        schema: {
          tags,
          params: IdParams,
          body: RenameBody,
          response: { 200: ApiKey, ...errorResponses({ 400: 'error', 404: 'error', 409: 'error' }) },
        },
      },
      async (request) =>
        renameApiKey(ctx.db, request.principal.workspaceId, (request.params as Id).id, (request.body as Static<typeof RenameBody>).name),
    );
    app.post(
      '/api-keys/:id/regenerate',
      { config: admin, schema: { tags, params: IdParams, response: { 200: ApiKeyWithSecret, ...notFound } } },
      async (request) => regenerateApiKey(ctx.db, ctx.auth, request.principal.workspaceId, (request.params as Id).id),
    );
    app.delete(
      '/api-keys/:id',
      { config: admin, schema: { tags, params: IdParams, response: { 200: DeletedApiKey, ...notFound } } },
      async (request) => deleteApiKey(ctx.db, ctx.auth, request.principal.workspaceId, (request.params as Id).id),
    );
  },
};
