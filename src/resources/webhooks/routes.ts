import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { subscribeToEvents } from '../../platform/events.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { SlidingWindowLimiter } from '../../platform/http/rate-limit.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { FILTER_OPERATORS, MAX_FILTER_RULES } from '../../platform/event-filter.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { webhookFanOut } from './queue.ts';
import { getWebhookRequest, listWebhookRequests, resendWebhookRequest, testWebhook } from './requests.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, resetWebhookSecret, updateWebhook } from './service.ts';

const tags = ['Webhooks'];
const IdParams = Type.Object({ id: Type.String({ description: 'wh_ id or URL-encoded name' }) });
const RequestParams = Type.Object({
  id: Type.String({ description: 'wh_ id or URL-encoded name' }),
  request_id: Type.String({ description: 'whr_ id' }),
});

const FilterRule = Type.Object({
  field: Type.String({ minLength: 1, maxLength: 255, description: 'dotted path into the event object; a leading `payload.` is ignored' }),
  operator: Type.Union(FILTER_OPERATORS.map((op) => Type.Literal(op))),
  value: Type.Optional(Type.Unknown({ description: 'required except for is_set and is_not_set; an array for in and not_in' })),
});
const Filter = Type.Union([
  Type.Object({
    match: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('any')])),
    rules: Type.Array(FilterRule, { maxItems: MAX_FILTER_RULES }),
  }),
  Type.Null(),
]);
const Events = Type.Array(Type.String({ maxLength: 255 }), { maxItems: 500 });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http or https endpoint' });

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  url: Url,
  all_events: Type.Optional(Type.Boolean({ default: false })),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  events: Type.Optional(Events),
  filter: Type.Optional(Filter),
});
const UpdateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  url: Type.Optional(Url),
  all_events: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean()),
  events: Type.Optional(Events),
  filter: Type.Optional(Filter),
});
const TestBody = Type.Object({ type: Type.Optional(Type.String({ minLength: 1, maxLength: 255, default: 'email.delivered' })) });

type Id = Static<typeof IdParams>;
type RequestId = Static<typeof RequestParams>;

// Test deliveries: 5 per minute per IP (https://emailit.com/docs/limits.md), whatever the plan.
const testLimiter = new SlidingWindowLimiter(5, 60_000);

const notFound = errorResponses({ 404: 'error' });
// 400 bad url, name or filter; 403 filters on a plan without them; 409 a taken name.
const writeErrors = errorResponses({ 400: 'error', 403: 'planRequired', 404: 'error', 409: 'conflict' });

export const resource: Resource = {
  name: 'webhooks',
  v2(app, ctx) {
    app.post(
      '/webhooks',
      { schema: { tags, body: CreateBody, response: { 201: S.WebhookWithSecret, ...writeErrors, ...errorResponses({ 422: 'error' }) } } },
      async (request, reply) => {
        const webhook = await createWebhook(ctx, request.principal.workspaceId, request.body as Static<typeof CreateBody>);
        return reply.code(201).send(webhook);
      },
    );
    app.get('/webhooks', { schema: { tags, querystring: pageLimitQuery(10), response: { 200: S.WebhookList } } }, async (request) =>
      listWebhooks(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/webhooks/:id', { schema: { tags, params: IdParams, response: { 200: S.WebhookWithSecret, ...notFound } } }, async (request) =>
      getWebhook(ctx, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/webhooks/:id',
      { schema: { tags, params: IdParams, body: UpdateBody, response: { 200: S.Webhook, ...writeErrors } } },
      async (request) =>
        updateWebhook(ctx, request.principal.workspaceId, (request.params as Id).id, (request.body ?? {}) as Static<typeof UpdateBody>),
    );
    app.delete('/webhooks/:id', { schema: { tags, params: IdParams, response: { 200: S.DeletedWebhook, ...notFound } } }, async (request) =>
      deleteWebhook(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/webhooks/:id/reset-secret',
      { schema: { tags, params: IdParams, response: { 200: S.WebhookWithSecret, ...notFound } } },
      async (request) => resetWebhookSecret(ctx, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/webhooks/:id/test',
      {
        schema: {
          tags,
          params: IdParams,
          body: TestBody,
          response: { 200: S.WebhookTest, ...errorResponses({ 400: 'errorMessage', 404: 'error', 429: 'rateLimit' }) },
        },
        // The body is optional: no body means the default sample type.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request, reply) => {
        const decision = testLimiter.hit(request.ip);
        if (!decision.allowed) {
          const body = {
            error: 'Rate limit exceeded',
            message: 'Too many webhook tests: at most 5 per minute',
            limit: decision.limit,
            current: decision.limit,
            retry_after: decision.retryAfter,
          };
          throw new ApiError(429, body, { 'retry-after': String(decision.retryAfter) });
        }
        const body = (request.body ?? {}) as Static<typeof TestBody>;
        return reply.send(await testWebhook(ctx, request.principal.workspaceId, (request.params as Id).id, body.type ?? 'email.delivered'));
      },
    );
    app.get(
      '/webhooks/:id/requests',
      { schema: { tags, params: IdParams, querystring: pageLimitQuery(10), response: { 200: S.WebhookRequestList, ...notFound } } },
      async (request) =>
        listWebhookRequests(ctx.db, request.principal.workspaceId, (request.params as Id).id, request.query as Query, request.url),
    );
    app.get(
      '/webhooks/:id/requests/:request_id',
      { schema: { tags, params: RequestParams, response: { 200: S.WebhookRequestDetail, ...notFound } } },
      async (request) => {
        const { id, request_id } = request.params as RequestId;
        return getWebhookRequest(ctx.db, request.principal.workspaceId, id, request_id);
      },
    );
    app.post(
      '/webhooks/:id/requests/:request_id/resend',
      {
        schema: {
          tags,
          params: RequestParams,
          response: { 200: S.WebhookRequest, ...errorResponses({ 404: 'error', 409: 'error', 422: 'error' }) },
        },
      },
      async (request) => {
        const { id, request_id } = request.params as RequestId;
        return resendWebhookRequest(ctx.db, request.principal.workspaceId, id, request_id);
      },
    );
  },
  registerJobs() {
    // Fan-out runs wherever events are emitted (every role), inside the event's transaction.
    subscribeToEvents(webhookFanOut);
  },
  async start(ctx, roles) {
    if (!roles.has('worker')) return;
    const dispatcher = new WebhookDispatcher(ctx, { pollMs: ctx.config.webhookPollMs });
    dispatcher.start();
    return () => dispatcher.stop();
  },
};
