// The contacts API (docs/api.md, "Contacts, audiences and subscribers"): thin handlers over
// service.ts.
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { Query } from '../../platform/http/lists.ts';
import { plainError } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';
import { UsageError } from '../audiences/service.ts';
import { listContacts } from './list.ts';
import { registerContactTransfers } from './transfer-routes.ts';
import { contactDetails, contactObject, createContactNow, deleteContact, requireContact, updateContact } from './service.ts';
import { transact } from '../../platform/db/transact.ts';

const tags = ['Contacts'];
type Id = Static<typeof S.ContactIdParams>;
const UPDATE_FIELDS = ['email', 'first_name', 'last_name', 'custom_fields', 'unsubscribed', 'audiences'] as const;

export const resource: Resource = {
  name: 'contacts',
  async v2(app, ctx) {
    await registerContactTransfers(app, ctx);
    app.post(
      '/contacts',
      {
        schema: {
          tags,
          body: S.CreateContactBody,
          response: { 201: S.Contact, ...errorResponses({ 400: 'error', 409: 'conflict' }), 422: UsageError },
        },
      },
      async (request, reply) => {
        const { contact, memberships } = await createContactNow(
          ctx.db,
          request.principal.workspaceId,
          request.body as Static<typeof S.CreateContactBody>,
        );
        return reply.code(201).send(contactObject(contact, memberships));
      },
    );
    app.get('/contacts', { schema: { tags, querystring: S.ContactListQuery, response: { 200: S.ContactList } } }, async (request) =>
      listContacts(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get(
      '/contacts/:id',
      { schema: { tags, params: S.ContactIdParams, response: { 200: S.DetailedContact, ...errorResponses({ 404: 'error' }) } } },
      async (request) => {
        const workspaceId = request.principal.workspaceId;
        return contactDetails(ctx.db, workspaceId, await requireContact(ctx.db, workspaceId, (request.params as Id).id));
      },
    );
    app.post(
      '/contacts/:id',
      {
        schema: {
          tags,
          params: S.ContactIdParams,
          body: S.UpdateContactBody,
          response: { 200: S.DetailedContact, ...errorResponses({ 400: 'error', 404: 'error', 409: 'error' }), 422: UsageError },
        },
        // No body at all is "none of the fields" (400 `{error}`), not a schema error.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => {
        const body = request.body as Static<typeof S.UpdateContactBody>;
        if (!UPDATE_FIELDS.some((field) => body[field] !== undefined))
          throw plainError(400, `Send at least one of ${UPDATE_FIELDS.join(', ')}`);
        const workspaceId = request.principal.workspaceId;
        return transact(ctx.db, async (tx) => {
          const contact = await requireContact(tx, workspaceId, (request.params as Id).id);
          return contactDetails(tx, workspaceId, await updateContact(tx, workspaceId, contact, body));
        });
      },
    );
    app.delete(
      '/contacts/:id',
      { schema: { tags, params: S.ContactIdParams, response: { 200: S.DeletedContact, ...errorResponses({ 404: 'error' }) } } },
      async (request) => {
        const workspaceId = request.principal.workspaceId;
        return transact(ctx.db, async (tx) =>
          deleteContact(tx, workspaceId, await requireContact(tx, workspaceId, (request.params as Id).id)),
        );
      },
    );
  },
};
