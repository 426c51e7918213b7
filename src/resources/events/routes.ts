import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { pageLimitQuery, perPageQuery, type Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { Event, EventList, LegacyEvent, LegacyEventList } from './schemas.ts';
import { EVENTS_DEFAULT_LIMIT, getEvent, getLegacyEvent, listEvents, listLegacyEvents } from './service.ts';

const tags = ['Events'];
const IdParams = Type.Object({ id: Type.String({ description: 'evt_ id' }) });
type Id = Static<typeof IdParams>;

const TypeParam = Type.Union([Type.String(), Type.Array(Type.String())], { description: 'one event type or a comma-separated list' });
const ListQuery = pageLimitQuery(EVENTS_DEFAULT_LIMIT, {
  type: Type.Optional(TypeParam),
  scope: Type.Optional(Type.String({ description: 'system, workspace (w: events) or custom (c: events); one or a comma-separated list' })),
  include_data: Type.Optional(Type.Boolean({ default: false, description: "include each event's data" })),
  order: Type.Optional(Type.String()),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});
const LegacyListQuery = perPageQuery({ 'filter[type]': Type.Optional(TypeParam) });

const notFound = errorResponses({ 404: 'error' });

export const resource: Resource = {
  name: 'events',
  v2(app, ctx) {
    app.get(
      '/events',
      { schema: { tags, querystring: ListQuery, response: { 200: EventList, ...errorResponses({ 422: 'errorMessage' }) } } },
      async (request) => listEvents(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/events/:id', { schema: { tags, params: IdParams, response: { 200: Event, ...notFound } } }, async (request) =>
      getEvent(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
  },
  v1(app, ctx) {
    app.get(
      '/events',
      { schema: { tags: ['Events (v1)'], querystring: LegacyListQuery, response: { 200: LegacyEventList } } },
      async (request) => listLegacyEvents(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get(
      '/events/:id',
      { schema: { tags: ['Events (v1)'], params: IdParams, response: { 200: LegacyEvent, ...notFound } } },
      async (request) => getLegacyEvent(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
  },
};
