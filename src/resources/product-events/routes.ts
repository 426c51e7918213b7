// Product events over HTTP: sending them (Events Only or full keys), the workspace's event
// definitions, and a contact's activity. https://emailit.com/docs/api-reference/events/send/ ·
// https://emailit.com/docs/api-reference/workspace-events/
import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { recordIdempotently, type EventInput } from './service.ts';
import { createDefinition, deleteDefinition, getDefinition, listDefinitions, updateDefinition } from './definitions-service.ts';
import { listContactActivity } from './activity.ts';

const tags = ['Events'];
const definitionTags = ['Workspace events'];
const IdParams = Type.Object({ id: Type.String({ maxLength: 200, description: 'wev_ id, name or w:<name>' }) });
const ContactParams = Type.Object({ id: Type.String({ maxLength: 320, description: 'con_ id or email address' }) });
type Id = Static<typeof IdParams>;

// 400 a refused event (`errors` names each property); 403 plan_required on Pay as you go, or
// the plan's count of event types reached; 409 an Idempotency-Key in use; 503 its store unreachable.
const sendErrors = errorResponses({
  400: ['fieldValidation', 'errorMessage'],
  403: ['planRequired', 'errorMessage'],
  409: 'errorMessage',
  413: 'framework',
  503: 'errorMessage',
});
const definitionWriteErrors = errorResponses({ 400: 'fieldValidation', 403: ['planRequired', 'errorMessage'], 409: 'conflict' });
const notFound = errorResponses({ 404: 'error' });

// One event is at most its 32 KB of properties and a few fields; a batch a hundred of them.
const ONE_EVENT_BYTES = 64 * 1024;

export const resource: Resource = {
  name: 'product-events',
  v2(app, ctx) {
    app.post(
      '/events',
      {
        config: { scope: 'events' },
        bodyLimit: ONE_EVENT_BYTES,
        schema: { tags, body: S.SendEventBody, response: { 200: S.RecordedEvent, ...sendErrors } },
      },
      async (request) =>
        recordIdempotently(
          ctx.db,
          request.principal.workspaceId,
          request.headers['idempotency-key'],
          (recorded) => recorded[0],
          [request.body as EventInput],
          'api',
          () => '',
        ),
    );
    app.post(
      '/events/batch',
      {
        config: { scope: 'events' },
        bodyLimit: S.MAX_BATCH * ONE_EVENT_BYTES,
        schema: { tags, body: S.SendEventsBatchBody, response: { 200: S.RecordedEvents, ...sendErrors } },
      },
      async (request) => {
        const { events } = request.body as Static<typeof S.SendEventsBatchBody>;
        return recordIdempotently(
          ctx.db,
          request.principal.workspaceId,
          request.headers['idempotency-key'],
          (recorded) => ({ data: recorded }),
          events as EventInput[],
          'api',
          (i) => `events.${i}.`,
        );
      },
    );

    app.post(
      '/workspace/events',
      { schema: { tags: definitionTags, body: S.CreateDefinitionBody, response: { 201: S.WorkspaceEvent, ...definitionWriteErrors } } },
      async (request, reply) =>
        reply
          .code(201)
          .send(await createDefinition(ctx.db, request.principal.workspaceId, request.body as Static<typeof S.CreateDefinitionBody>)),
    );
    app.get(
      '/workspace/events',
      { schema: { tags: definitionTags, querystring: pageLimitQuery(25), response: { 200: S.WorkspaceEventList } } },
      async (request) => listDefinitions(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get(
      '/workspace/events/:id',
      { schema: { tags: definitionTags, params: IdParams, response: { 200: S.WorkspaceEvent, ...notFound } } },
      async (request) => getDefinition(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/workspace/events/:id',
      {
        schema: {
          tags: definitionTags,
          params: IdParams,
          body: S.UpdateDefinitionBody,
          response: { 200: S.WorkspaceEvent, ...notFound, ...errorResponses({ 400: 'fieldValidation' }) },
        },
      },
      async (request) =>
        updateDefinition(
          ctx.db,
          request.principal.workspaceId,
          (request.params as Id).id,
          request.body as Static<typeof S.UpdateDefinitionBody>,
        ),
    );
    app.delete(
      '/workspace/events/:id',
      { schema: { tags: definitionTags, params: IdParams, response: { 200: S.DeletedWorkspaceEvent, ...notFound } } },
      async (request) => deleteDefinition(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );

    app.get(
      '/contacts/:id/events',
      {
        schema: {
          tags: ['Contacts'],
          params: ContactParams,
          querystring: pageLimitQuery(25, {
            type: Type.Optional(Type.String()),
            scope: Type.Optional(Type.Union([Type.Literal('workspace'), Type.Literal('custom')])),
          }),
          response: { 200: S.ContactActivity, ...notFound },
        },
      },
      async (request) =>
        listContactActivity(
          ctx.db,
          request.principal.workspaceId,
          (request.params as { id: string }).id,
          request.query as Query,
          request.url,
        ),
    );
  },
};
