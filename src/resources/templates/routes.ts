import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { perPageQuery, type Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { TemplateChanged, TemplateDeleted, TemplateList, TemplateWithVersions } from './schemas.ts';
import { EDITORS, createTemplate, deleteTemplate, getTemplate, listTemplates, publishTemplate, updateTemplate } from './service.ts';

const tags = ['Templates'];
const Id = Type.Object({ id: Type.String({ description: 'tem_ id of a version' }) });
const Editor = Type.Union(EDITORS.map((e) => Type.Literal(e)));
const Text191 = Type.String({ maxLength: 191 });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const Source = Type.Union([Type.String(), Type.Object({}, { additionalProperties: true }), Type.Null()], {
  description: 'Editor source document, stored as is; for editor mjml: MJML markup, MJML JSON or a stored MJML document',
});
const Fields = {
  from: Type.Optional(Nullable(Text191)),
  subject: Type.Optional(Nullable(Text191)),
  reply_to: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()])),
  html: Type.Optional(Nullable(Type.String())),
  text: Type.Optional(Nullable(Type.String())),
  source: Type.Optional(Source),
  editor: Type.Optional(Editor),
};
const CreateBody = Type.Object({ name: Text191, alias: Text191, ...Fields });
const UpdateBody = Type.Object({ name: Type.Optional(Text191), alias: Type.Optional(Text191), ...Fields });
const ListQuery = perPageQuery({
  include_content: Type.Optional(Type.Boolean()),
  'filter[name]': Type.Optional(Type.String()),
  'filter[alias]': Type.Optional(Type.String()),
  'filter[editor]': Type.Optional(Editor),
  sort: Type.Optional(Type.Union(['name', 'alias', 'created_at', 'updated_at', 'published_at'].map((k) => Type.Literal(k)))),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

// 400 and 422 (MJML) are `{message, errors}`; 403 only for MJML while it is in alpha.
const writeErrors = errorResponses({ 400: 'fieldValidation', 403: 'errorMessage', 404: 'message', 409: 'error', 422: 'fieldValidation' });
const notFound = errorResponses({ 404: 'message' });

export const resource: Resource = {
  name: 'templates',
  v2(app, ctx) {
    app.post(
      '/templates',
      { schema: { tags, body: CreateBody, response: { 201: TemplateChanged, ...writeErrors } } },
      async (request, reply) => {
        const result = await createTemplate(ctx.db, request.principal.workspaceId, request.body as Static<typeof CreateBody>);
        return reply.code(201).send(result);
      },
    );
    app.get('/templates', { schema: { tags, querystring: ListQuery, response: { 200: TemplateList } } }, async (request) =>
      listTemplates(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/templates/:id', { schema: { tags, params: Id, response: { 200: TemplateWithVersions, ...notFound } } }, async (request) =>
      getTemplate(ctx.db, request.principal.workspaceId, (request.params as Static<typeof Id>).id),
    );
    app.post(
      '/templates/:id',
      { schema: { tags, params: Id, body: UpdateBody, response: { 200: TemplateChanged, ...writeErrors } } },
      async (request) =>
        updateTemplate(
          ctx.db,
          request.principal.workspaceId,
          (request.params as Static<typeof Id>).id,
          request.body as Static<typeof UpdateBody>,
        ),
    );
    app.post(
      '/templates/:id/publish',
      { schema: { tags, params: Id, response: { 200: TemplateChanged, ...errorResponses({ 404: 'message', 409: 'error' }) } } },
      async (request) => publishTemplate(ctx.db, request.principal.workspaceId, (request.params as Static<typeof Id>).id),
    );
    app.delete('/templates/:id', { schema: { tags, params: Id, response: { 200: TemplateDeleted, ...notFound } } }, async (request) =>
      deleteTemplate(ctx.db, request.principal.workspaceId, (request.params as Static<typeof Id>).id),
    );
  },
};
