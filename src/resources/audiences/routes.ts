// The audiences and subscribers API (https://emailit.com/docs/audiences.md) under /v2, the legacy
// audiences under /v1 (docs/api.md), and the hosted pages (hosted.ts): thin handlers over the
// services.
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Resource } from '../../platform/resource.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Query } from '../../platform/http/lists.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { audienceObject, subscriberObject } from './records.ts';
import { addSubscriber, createAudienceNow, deleteAudience, requireAudience, updateAudience } from './service.ts';
import { resolveSettings } from './settings.ts';
import { listAudiences, listSubscribers } from './lists.ts';
import { bulkAddSubscribers, bulkRemoveSubscribers, removeSubscriber, requireSubscriber, updateSubscriber } from './subscriber-api.ts';
import { requestConfirmation } from './confirmations.ts';
import { sendWelcome } from './welcome.ts';
import { findContactById } from '../contacts/service.ts';
import { registerLegacyAudiences } from './legacy-routes.ts';
import { registerHostedPages } from './hosted.ts';
import { transact } from '../../platform/db/transact.ts';

const tags = ['Audiences'];
const subscriberTags = ['Subscribers'];
type Id = Static<typeof S.AudienceIdParams>;
type SubscriberId = Static<typeof S.SubscriberParams>;
const notFound = errorResponses({ 404: 'error' });

function audienceRoutes(app: FastifyInstance, ctx: AppContext) {
  app.post(
    '/audiences',
    {
      schema: {
        tags,
        body: S.CreateAudienceBody,
        response: { 201: S.Audience, ...errorResponses({ 400: 'error', 409: 'conflict', 422: 'error' }) },
      },
    },
    async (request, reply) => {
      const workspaceId = request.principal.workspaceId;
      const { name, ...settings } = request.body as Static<typeof S.CreateAudienceBody>;
      const audience = await createAudienceNow(ctx.db, workspaceId, {
        name,
        ...(await resolveSettings(ctx, ctx.db, workspaceId, settings)),
      });
      return reply.code(201).send(audienceObject(audience));
    },
  );
  app.get('/audiences', { schema: { tags, querystring: S.AudienceListQuery, response: { 200: S.AudienceList } } }, async (request) =>
    listAudiences(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
  );
  app.get('/audiences/:id', { schema: { tags, params: S.AudienceIdParams, response: { 200: S.Audience, ...notFound } } }, async (request) =>
    audienceObject(await requireAudience(ctx.db, request.principal.workspaceId, (request.params as Id).id)),
  );
  app.post(
    '/audiences/:id',
    {
      schema: {
        tags,
        params: S.AudienceIdParams,
        body: S.UpdateAudienceBody,
        response: { 200: S.Audience, ...errorResponses({ 400: 'error', 404: 'error', 409: 'error', 422: 'error' }) },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const { name, ...settings } = request.body as Static<typeof S.UpdateAudienceBody>;
      return transact(ctx.db, async (tx) => {
        const audience = await requireAudience(tx, workspaceId, (request.params as Id).id);
        return audienceObject(
          await updateAudience(tx, workspaceId, audience, { name, ...(await resolveSettings(ctx, tx, workspaceId, settings, audience)) }),
        );
      });
    },
  );
  app.delete(
    '/audiences/:id',
    { schema: { tags, params: S.AudienceIdParams, response: { 200: S.DeletedAudience, ...notFound } } },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      return transact(ctx.db, async (tx) => {
        const audience = await requireAudience(tx, workspaceId, (request.params as Id).id);
        await deleteAudience(tx, workspaceId, audience);
        return { object: 'audience' as const, id: audience.id, name: audience.name, deleted: true as const };
      });
    },
  );
}

function subscriberRoutes(app: FastifyInstance, ctx: AppContext) {
  app.post(
    '/audiences/:id/subscribers',
    {
      schema: {
        tags: subscriberTags,
        params: S.AudienceIdParams,
        body: S.AddSubscriberBody,
        response: {
          200: S.Subscriber,
          201: S.Subscriber,
          202: S.PendingConfirmation,
          ...errorResponses({ 400: 'error', 402: 'errorMessage', 404: 'error', 429: 'rateLimit' }),
          409: S.SubscriberConflict,
          422: S.UsageOrError,
        },
      },
    },
    async (request, reply) => {
      const workspaceId = request.principal.workspaceId;
      const { double_opt_in, ...input } = request.body as Static<typeof S.AddSubscriberBody>;
      if (double_opt_in) {
        const audience = await requireAudience(ctx.db, workspaceId, (request.params as Id).id);
        const pending = await requestConfirmation(ctx, audience, input, request.principal);
        return reply.code(202).send({
          object: 'subscriber_confirmation',
          email: pending.email,
          audience: { id: audience.id, name: audience.name },
          email_id: pending.emailId,
          message: 'A confirmation email was sent; the subscriber is added when its link is followed',
        });
      }
      const result = await transact(ctx.db, async (tx) => {
        const audience = await requireAudience(tx, workspaceId, (request.params as Id).id);
        const { subscriber, outcome } = await addSubscriber(tx, workspaceId, audience, input);
        const contact = (await findContactById(tx, workspaceId, subscriber.contact_id))!;
        return { outcome, audience, email: contact.email, object: subscriberObject(subscriber, audience, contact) };
      });
      await sendWelcome(ctx, result.audience, result.email, result.outcome, request.principal);
      if (result.outcome === 'already_subscribed')
        throw new ApiError(409, { error: 'This address is already subscribed to the audience', existing: result.object });
      return reply.code(result.outcome === 'created' ? 201 : 200).send(result.object);
    },
  );
  app.get(
    '/audiences/:id/subscribers',
    {
      schema: {
        tags: subscriberTags,
        params: S.AudienceIdParams,
        querystring: S.SubscriberListQuery,
        response: { 200: S.SubscriberList, ...notFound },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const audience = await requireAudience(ctx.db, workspaceId, (request.params as Id).id);
      return listSubscribers(ctx.db, workspaceId, audience, request.query as Query, request.url);
    },
  );
  app.post(
    '/audiences/:id/subscribers/bulk',
    {
      schema: {
        tags: subscriberTags,
        params: S.AudienceIdParams,
        body: S.BulkAddBody,
        response: { 200: S.BulkAddResult, 400: S.BulkInvalid, ...notFound, 422: S.UsageError },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const audience = await requireAudience(ctx.db, workspaceId, (request.params as Id).id);
      return bulkAddSubscribers(ctx.db, workspaceId, audience, (request.body as Static<typeof S.BulkAddBody>).subscribers);
    },
  );
  app.post(
    '/audiences/:id/subscribers/bulk-remove',
    {
      schema: {
        tags: subscriberTags,
        params: S.AudienceIdParams,
        body: S.BulkRemoveBody,
        response: { 200: S.BulkRemoveResult, ...notFound },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const audience = await requireAudience(ctx.db, workspaceId, (request.params as Id).id);
      return bulkRemoveSubscribers(ctx.db, workspaceId, audience, (request.body as Static<typeof S.BulkRemoveBody>).subscribers);
    },
  );
  app.get(
    '/audiences/:id/subscribers/:subscriber',
    { schema: { tags: subscriberTags, params: S.SubscriberParams, response: { 200: S.Subscriber, ...notFound } } },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const params = request.params as SubscriberId;
      const audience = await requireAudience(ctx.db, workspaceId, params.id);
      const { subscriber, contact } = await requireSubscriber(ctx.db, workspaceId, audience, params.subscriber);
      return subscriberObject(subscriber, audience, contact);
    },
  );
  app.post(
    '/audiences/:id/subscribers/:subscriber',
    {
      schema: {
        tags: subscriberTags,
        params: S.SubscriberParams,
        body: S.UpdateSubscriberBody,
        response: { 200: S.Subscriber, ...errorResponses({ 400: 'error', 404: 'error' }) },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const params = request.params as SubscriberId;
      return transact(ctx.db, async (tx) => {
        const audience = await requireAudience(tx, workspaceId, params.id);
        return updateSubscriber(tx, workspaceId, audience, params.subscriber, request.body as Static<typeof S.UpdateSubscriberBody>);
      });
    },
  );
  app.delete(
    '/audiences/:id/subscribers/:subscriber',
    { schema: { tags: subscriberTags, params: S.SubscriberParams, response: { 200: S.DeletedSubscriber, ...notFound } } },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      const params = request.params as SubscriberId;
      return transact(ctx.db, async (tx) =>
        removeSubscriber(tx, workspaceId, await requireAudience(tx, workspaceId, params.id), params.subscriber),
      );
    },
  );
}

export const resource: Resource = {
  name: 'audiences',
  v2(app, ctx) {
    audienceRoutes(app, ctx);
    subscriberRoutes(app, ctx);
  },
  v1: registerLegacyAudiences,
  public: registerHostedPages,
};
