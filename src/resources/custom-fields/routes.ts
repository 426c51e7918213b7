// Custom field definitions under /v2/custom-fields (an API of ours; the spec shows none):
// create, list, retrieve by id or key, relabel, delete.
import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { Query } from '../../platform/http/lists.ts';
import { pageLimitQuery } from '../../platform/http/lists.ts';
import { errorResponses, pageLimitListOf } from '../../platform/http/responses.ts';
import { createCustomField, deleteCustomField, FIELD_TYPES, getCustomField, listCustomFields, updateCustomField } from './service.ts';

const tags = ['Custom fields'];
const text = (description: string) => Type.String({ description });
const FieldType = Type.Union(
  FIELD_TYPES.map((t) => Type.Literal(t)),
  { description: 'text, number, date (YYYY-MM-DD) or boolean' },
);

const CustomField = Type.Object(
  {
    object: Type.Literal('custom_field', { description: 'Always custom_field' }),
    id: text('fld_ id'),
    key: text("Key in contacts' custom_fields and in {{cf.<key>}} merge tags"),
    label: text('Name shown to people'),
    type: FieldType,
    created_at: text('When created'),
    updated_at: text('When last changed'),
  },
  { title: 'CustomField' },
);
const CreateBody = Type.Object({
  key: Type.String({ maxLength: 64, description: 'letters, digits and underscores' }),
  label: Type.Optional(Type.String({ maxLength: 191 })),
  type: Type.String({ description: 'text, number, date or boolean' }),
});
const UpdateBody = Type.Object({ label: Type.String({ maxLength: 191 }) });
const IdParams = Type.Object({ id: Type.String({ description: 'fld_ id or key' }) });
const Deleted = Type.Object(
  {
    object: Type.Literal('custom_field', { description: 'Always custom_field' }),
    id: text('fld_ id'),
    key: text('Key'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedCustomField' },
);
const ListQuery = pageLimitQuery(10, {
  sort: Type.Optional(Type.String({ description: 'key, label, type or created_at' })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});
type Id = Static<typeof IdParams>;
const notFound = errorResponses({ 404: 'error' });

export const resource: Resource = {
  name: 'custom-fields',
  v2(app, ctx) {
    app.post(
      '/custom-fields',
      { schema: { tags, body: CreateBody, response: { 201: CustomField, ...errorResponses({ 400: 'error', 409: 'conflict' }) } } },
      async (request, reply) => {
        const body = request.body as Static<typeof CreateBody>;
        return reply
          .code(201)
          .send(
            await createCustomField(ctx.db, request.principal.workspaceId, { ...body, type: body.type as (typeof FIELD_TYPES)[number] }),
          );
      },
    );
    app.get(
      '/custom-fields',
      { schema: { tags, querystring: ListQuery, response: { 200: pageLimitListOf(CustomField, 'CustomFieldList') } } },
      async (request) => listCustomFields(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/custom-fields/:id', { schema: { tags, params: IdParams, response: { 200: CustomField, ...notFound } } }, async (request) =>
      getCustomField(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/custom-fields/:id',
      {
        schema: {
          tags,
          params: IdParams,
          body: UpdateBody,
          response: { 200: CustomField, ...errorResponses({ 400: 'error', 404: 'error' }) },
        },
      },
      async (request) =>
        updateCustomField(ctx.db, request.principal.workspaceId, (request.params as Id).id, request.body as Static<typeof UpdateBody>),
    );
    app.delete('/custom-fields/:id', { schema: { tags, params: IdParams, response: { 200: Deleted, ...notFound } } }, async (request) =>
      deleteCustomField(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
  },
};
