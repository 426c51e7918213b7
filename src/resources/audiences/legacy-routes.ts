// The legacy v1 audiences (https://emailit.com/docs/audiences.md): the 16-character id without
// prefix, `subscribers_count`, `per_page` lists with `filter[name]`, rename by PUT, a delete
// that never leaves a workspace without an audience, and the public subscribe call.
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import type { Executor } from '../../platform/db/database.ts';
import type { Query } from '../../platform/http/lists.ts';
import { ApiError, plainError } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { findAudienceByToken, findLegacyAudience, legacyAudienceObject } from './records.ts';
import { createAudienceNow, deleteAudience, updateAudience } from './service.ts';
import { listLegacyAudiences } from './lists.ts';
import { publicSubscribe } from './subscriber-api.ts';
import { hitSubscribeLimit, subscribeLimitError } from './rate-limits.ts';
import { transact } from '../../platform/db/transact.ts';

const tags = ['Audiences (v1)'];
type Id = Static<typeof S.LegacyIdParams>;
const notFound = errorResponses({ 404: 'error' });

async function requireLegacy(db: Executor, workspaceId: string, id: string) {
  const row = await findLegacyAudience(db, workspaceId, id);
  if (!row) throw plainError(404, 'Audience not found');
  return row;
}

const MESSAGES = {
  subscribed: 'Subscribed',
  already_subscribed: 'Already subscribed',
  pending_confirmation: 'A confirmation email was sent; the subscription starts when its link is followed',
};

export function registerLegacyAudiences(app: FastifyInstance, ctx: AppContext) {
  app.get('/audiences', { schema: { tags, querystring: S.LegacyListQuery, response: { 200: S.LegacyAudienceList } } }, async (request) =>
    listLegacyAudiences(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
  );
  app.post(
    '/audiences',
    { schema: { tags, body: S.LegacyNameBody, response: { 201: S.LegacyAudience, ...errorResponses({ 400: 'error', 409: 'conflict' }) } } },
    async (request, reply) => {
      const audience = await createAudienceNow(ctx.db, request.principal.workspaceId, {
        name: (request.body as Static<typeof S.LegacyNameBody>).name,
      });
      return reply.code(201).send(legacyAudienceObject(audience));
    },
  );
  app.get(
    '/audiences/:id',
    { schema: { tags, params: S.LegacyIdParams, response: { 200: S.LegacyAudience, ...notFound } } },
    async (request) => legacyAudienceObject(await requireLegacy(ctx.db, request.principal.workspaceId, (request.params as Id).id)),
  );
  app.put(
    '/audiences/:id',
    {
      schema: {
        tags,
        params: S.LegacyIdParams,
        body: S.LegacyNameBody,
        response: { 200: S.LegacyAudience, ...errorResponses({ 400: 'error', 404: 'error', 409: 'error' }) },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      return transact(ctx.db, async (tx) => {
        const audience = await requireLegacy(tx, workspaceId, (request.params as Id).id);
        return legacyAudienceObject(
          await updateAudience(tx, workspaceId, audience, { name: (request.body as Static<typeof S.LegacyNameBody>).name }),
        );
      });
    },
  );
  app.delete(
    '/audiences/:id',
    { schema: { tags, params: S.LegacyIdParams, response: { 200: S.LegacyDeleted, ...errorResponses({ 404: 'error', 422: 'error' }) } } },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      return transact(ctx.db, async (tx) => {
        const audience = await requireLegacy(tx, workspaceId, (request.params as Id).id);
        const others = await tx
          .selectFrom('audiences')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .where('id', '<>', audience.id)
          .limit(1)
          .execute();
        if (others.length === 0)
          throw plainError(422, 'The account must always keep at least one audience: create another before deleting this one');
        await deleteAudience(tx, workspaceId, audience);
        return { id: audience.legacy_id, name: audience.name, deleted: true as const };
      });
    },
  );
  app.post(
    '/audiences/subscribe/:token',
    {
      config: { scope: 'public' },
      schema: {
        tags,
        security: [],
        params: S.TokenParams,
        body: S.LegacySubscribeBody,
        response: {
          200: S.LegacySubscribed,
          201: S.LegacySubscribed,
          202: S.LegacySubscribed,
          ...errorResponses({ 400: 'error', 402: 'errorMessage', 403: 'errorMessage', 404: 'error', 429: 'rateLimit' }),
          422: S.UsageOrError,
        },
      },
    },
    async (request, reply) => {
      const decision = hitSubscribeLimit(request);
      if (!decision.allowed) throw new ApiError(429, subscribeLimitError(decision).body, { 'retry-after': String(decision.retryAfter) });
      const audience = await findAudienceByToken(ctx.db, (request.params as Static<typeof S.TokenParams>).token);
      if (!audience) throw plainError(404, 'Audience not found');
      const body = request.body as Static<typeof S.LegacySubscribeBody>;
      const status = await publicSubscribe(ctx, audience, body);
      const code = status === 'subscribed' ? 201 : status === 'pending_confirmation' ? 202 : 200;
      return reply
        .code(code)
        .send({ status, email: body.email.trim().toLowerCase(), audience_id: audience.legacy_id, message: MESSAGES[status] });
    },
  );
}
