import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import type { Db } from '../../platform/db/database.ts';
import type { EmailRow } from './objects.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { acceptIdempotently, sendResponseFor } from './send.ts';
import { buildSendRequest, type SendBody } from './send-request.ts';
import { EMAIL_STATUSES, EMAILS_DEFAULT_LIMIT, listEmails } from './read.ts';
import { emailAttachments, emailBody, emailMeta, emailRaw, findEmail, retrievedEmail } from './retrieved.ts';
import { cancelEmail, rescheduleEmail } from './manage.ts';
import { retryEmail } from './retry.ts';
import { forwardEmail } from './forward.ts';
import { purgeJob } from './retention.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import * as S from './schemas.ts';

const tags = ['Emails'];
const AddressList = Type.Union([Type.String(), Type.Array(Type.String())]);

// Documents POST /emails in the OpenAPI file. Bodies are checked by buildSendRequest, whose
// errors take the spec's send shape ({error:'Validation failed', validation_errors}).
const SendBodySchema = Type.Object({
  from: Type.String({ description: 'addr or "Name <addr>" on a verified sending domain' }),
  to: AddressList,
  cc: Type.Optional(AddressList),
  bcc: Type.Optional(AddressList),
  reply_to: Type.Optional(AddressList),
  subject: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  template: Type.Optional(Type.String()),
  variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  attachments: Type.Optional(
    Type.Array(
      Type.Object({
        filename: Type.String(),
        content: Type.Optional(Type.String()),
        url: Type.Optional(Type.String()),
        content_type: Type.Optional(Type.String()),
        content_id: Type.Optional(Type.String()),
        encoding: Type.Optional(Type.String()),
      }),
    ),
  ),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  meta: Type.Optional(Type.Record(Type.String(), Type.String())),
  scheduled_at: Type.Optional(Type.String()),
  tracking: Type.Optional(
    Type.Union([Type.Boolean(), Type.Object({ loads: Type.Optional(Type.Boolean()), clicks: Type.Optional(Type.Boolean()) })]),
  ),
});

const IdParams = Type.Object({ id: Type.String({ description: 'em_ id' }) });
type Id = Static<typeof IdParams>;
const DateParam = Type.Union([Type.String({ format: 'date' }), Type.String({ format: 'date-time' })]);
const ListQuery = pageLimitQuery(EMAILS_DEFAULT_LIMIT, {
  type: Type.Optional(Type.Union([Type.Literal('outbound'), Type.Literal('inbound')], { default: 'outbound' })),
  date_from: Type.Optional(DateParam),
  date_to: Type.Optional(DateParam),
  order: Type.Optional(Type.String({ description: 'sort key: any filter key' })),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});
const RescheduleBody = Type.Object({
  scheduled_at: Type.String({ description: 'ISO 8601 with a time zone, or English such as "tomorrow at 9am"; at least 3 minutes ahead' }),
});
// Documents the forward body; it is checked by the forward service (send-shaped 400s).
const ForwardBodySchema = Type.Object({
  to: AddressList,
  include_headers: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'true adds a forwarded-message block and a Fwd: subject; false resends the original unchanged',
    }),
  ),
  comment: Type.Optional(Type.String()),
  body: Type.Optional(Type.String({ description: 'alias of comment' })),
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
});

// What sending (and forwarding) can answer besides the email:
// https://emailit.com/docs/email-api.md, https://emailit.com/docs/api-reference/idempotency/.
const sendErrors = errorResponses({
  400: ['sendValidation', 'errorMessage'], // validation; a malformed Idempotency-Key
  402: 'errorMessage',
  403: 'errorMessage', // domain not authorized; unverified workspace (with code and blocked_recipients)
  404: ['errorMessage', 'error'],
  409: 'errorMessage',
  413: 'errorMessage',
  422: ['errorMessage', 'error'],
  429: 'rateLimit',
  503: 'errorMessage',
});
const notFound = errorResponses({ 404: 'errorMessage' });
const notFoundOr422 = errorResponses({ 404: 'errorMessage', 422: 'errorMessage' });

export const resource: Resource = {
  name: 'emails',
  v2(app, ctx) {
    app.post(
      '/emails',
      {
        schema: { tags, body: SendBodySchema, response: { 200: S.AcceptedEmail, ...sendErrors } },
        attachValidation: true,
        config: { scope: 'sending' },
      },
      async (request, reply) => {
        const outcome = await acceptIdempotently(
          ctx,
          request.principal,
          request.headers['idempotency-key'],
          () => buildSendRequest(ctx, request.principal.workspaceId, request.body as SendBody),
          sendResponseFor,
        );
        return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
      },
    );

    app.get('/emails', { schema: { tags, querystring: ListQuery, response: { 200: S.EmailList } } }, async (request) =>
      listEmails(ctx.db, request.principal.workspaceId, request.query as Query, request.url),
    );
    const read = (path: string, body: TSchema, view: (db: Db, row: EmailRow) => Promise<unknown>) =>
      app.get(path, { schema: { tags, params: IdParams, response: { 200: body, ...notFound } } }, async (request) =>
        view(ctx.db, await findEmail(ctx.db, request.principal.workspaceId, (request.params as Id).id)),
      );
    read('/emails/:id', S.RetrievedEmail, retrievedEmail);
    read('/emails/:id/raw', S.EmailRaw, emailRaw);
    read('/emails/:id/body', S.EmailBody, emailBody);
    read('/emails/:id/meta', S.EmailMeta, emailMeta);
    read('/emails/:id/attachments', S.EmailAttachments, emailAttachments);
    app.get('/email/:id', { schema: { tags, params: IdParams, response: { 200: S.EmailStatus, ...notFound } } }, async (request) => {
      const row = await findEmail(ctx.db, request.principal.workspaceId, (request.params as Id).id);
      return { status: row.status };
    });

    app.post(
      '/emails/:id',
      { schema: { tags, params: IdParams, body: RescheduleBody, response: { 200: S.ChangedEmail, ...notFoundOr422 } } },
      async (request) =>
        rescheduleEmail(
          ctx,
          request.principal.workspaceId,
          (request.params as Id).id,
          (request.body as Static<typeof RescheduleBody>).scheduled_at,
        ),
    );
    app.post(
      '/emails/:id/cancel',
      { schema: { tags, params: IdParams, response: { 200: S.ChangedEmail, ...notFoundOr422 } } },
      async (request) => cancelEmail(ctx, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/emails/:id/retry',
      {
        schema: {
          tags,
          params: IdParams,
          response: {
            200: S.RetriedEmail,
            ...notFoundOr422,
            ...errorResponses({ 402: 'errorMessage', 403: 'errorMessage', 422: ['errorMessage', 'error'] }),
          },
        },
      },
      async (request) => retryEmail(ctx, request.principal, (request.params as Id).id),
    );
    app.post(
      '/emails/:id/forward',
      {
        schema: { tags, params: IdParams, body: ForwardBodySchema, response: { 200: S.AcceptedEmail, ...sendErrors } },
        attachValidation: true,
        config: { scope: 'sending' },
      },
      async (request, reply) => {
        const outcome = await forwardEmail(
          ctx,
          request.principal,
          (request.params as Id).id,
          request.headers['idempotency-key'],
          request.body,
        );
        return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
      },
    );
  },
  jobs: (ctx) => ({ handlers: [purgeJob(ctx)] }),
};
