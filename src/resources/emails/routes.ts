import { Type } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { acceptIdempotently, sendResponseFor } from './send.ts';
import { buildSendRequest, type SendBody } from './send-request.ts';

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
  attachments: Type.Optional(Type.Array(Type.Object({
    filename: Type.String(),
    content: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    content_id: Type.Optional(Type.String()),
    encoding: Type.Optional(Type.String()),
  }))),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  meta: Type.Optional(Type.Record(Type.String(), Type.String())),
  scheduled_at: Type.Optional(Type.String()),
  tracking: Type.Optional(Type.Union([Type.Boolean(), Type.Object({ loads: Type.Optional(Type.Boolean()), clicks: Type.Optional(Type.Boolean()) })])),
});

export const resource: Resource = {
  name: 'emails',
  v2(app, ctx) {
    app.post('/emails', { schema: { tags, body: SendBodySchema }, attachValidation: true, config: { scope: 'sending' } }, async (request, reply) => {
      const outcome = await acceptIdempotently(
        ctx,
        request.principal,
        request.headers['idempotency-key'],
        () => buildSendRequest(ctx, request.principal.workspaceId, request.body as SendBody),
        sendResponseFor,
      );
      return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
    });
  },
};
