import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { SUPPRESSION_TYPES } from './input.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { DeletedSuppression, Suppression, SuppressionList } from './schemas.ts';
import { createSuppression, deleteSuppression, getSuppression, listSuppressions, updateSuppression } from './service.ts';

const tags = ['Suppressions'];
const TypeField = Type.Union(SUPPRESSION_TYPES.map((t) => Type.Literal(t)));
const Reason = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]);
const KeepUntil = Type.Union(
  [
    Type.String({ description: 'ISO 8601, Unix seconds or English such as "in 30 days"' }),
    Type.Number({ description: 'Unix seconds' }),
    Type.Null(),
  ],
  {
    description: 'expiry; null or omitted means permanent',
  },
);
const IdParams = Type.Object({ id: Type.String({ description: 'sup_ id or URL-encoded email address' }) });
const CreateBody = Type.Object({
  email: Type.String(),
  type: Type.Optional(TypeField),
  reason: Type.Optional(Reason),
  keep_until: Type.Optional(KeepUntil),
});
const UpdateBody = Type.Object({
  email: Type.Optional(Type.String()),
  type: Type.Optional(TypeField),
  reason: Type.Optional(Reason),
  keep_until: Type.Optional(KeepUntil),
});
const ListQuery = pageLimitQuery(10, {
  q: Type.Optional(Type.String({ description: 'alias of search' })),
  sort: Type.Optional(Type.Union(['email', 'reason', 'type', 'created_at'].map((k) => Type.Literal(k)))),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});
type Id = Static<typeof IdParams>;

const byIdErrors = errorResponses({ 400: 'error', 404: 'error' });

export const resource: Resource = {
  name: 'suppressions',
  v2(app, ctx) {
    app.post(
      '/suppressions',
      { schema: { tags, body: CreateBody, response: { 201: Suppression, ...errorResponses({ 400: 'error', 409: 'conflict' }) } } },
      async (request, reply) => {
        const suppression = await createSuppression(ctx.db, request.principal.workspaceId, request.body as Static<typeof CreateBody>);
        return reply.code(201).send(suppression);
      },
    );
    app.get('/suppressions', { schema: { tags, querystring: ListQuery, response: { 200: SuppressionList } } }, async (request) =>
      listSuppressions(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/suppressions/:id', { schema: { tags, params: IdParams, response: { 200: Suppression, ...byIdErrors } } }, async (request) =>
      getSuppression(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/suppressions/:id',
      {
        schema: {
          tags,
          params: IdParams,
          body: UpdateBody,
          response: { 200: Suppression, ...byIdErrors, ...errorResponses({ 409: 'conflict' }) },
        },
        // No body at all is "no fields" (400 `{error}` from the service), not a schema error.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) =>
        updateSuppression(ctx.db, request.principal.workspaceId, (request.params as Id).id, request.body as Static<typeof UpdateBody>),
    );
    app.delete(
      '/suppressions/:id',
      { schema: { tags, params: IdParams, response: { 200: DeletedSuppression, ...byIdErrors } } },
      async (request) => deleteSuppression(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
  },
};
