// POST /v2/email-verifications (https://emailit.com/docs/api-reference/email-verifications.md).
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { createResolver } from '../../platform/dns.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { EmailVerification, VerifyBody } from './schemas.ts';
import { createVerification } from './service.ts';

const tags = ['Email verification'];

export const resource: Resource = {
  name: 'email-verifications',
  v2(app, ctx) {
    const resolver = createResolver(ctx.config.dnsServers, { timeoutMs: ctx.config.dnsTimeoutMs });
    app.post(
      '/email-verifications',
      {
        schema: {
          tags,
          summary: 'Verify one address',
          description: '5 credits, charged before the check. An address that cannot receive mail is still a 200 with result `invalid`.',
          body: VerifyBody,
          response: { 200: EmailVerification, ...errorResponses({ 402: 'errorMessage' }) },
        },
      },
      async (request) =>
        createVerification(
          ctx.db,
          { config: ctx.config, resolver },
          request.principal.workspaceId,
          request.body as Static<typeof VerifyBody>,
        ),
    );
  },
};
