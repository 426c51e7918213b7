import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Resource } from '../../platform/resource.ts';
import { warmUpMjml } from './pool.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { MjmlReference, MjmlRender, MjmlSourceError, MjmlValidation } from './schemas.ts';
import { checkRenderLimit, mjmlReference, renderSource, requireMjmlAccess, validateSource } from './service.ts';

const tags = ['MJML'];
const Source = Type.Unknown({ description: 'MJML markup, MJML JSON, or a stored MJML document (string or object, at most 2 MB)' });
const ValidateBody = Type.Object({ source: Type.Optional(Source) });
const RenderBody = Type.Object({
  source: Type.Optional(Source),
  variables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Temple variables; nothing is auto-filled' })),
});

// 403 mjml_alpha without the feature; 422 a missing or unreadable source.
const mjmlErrors = { ...errorResponses({ 403: 'errorMessage' }), 422: MjmlSourceError };

export const resource: Resource = {
  name: 'mjml',
  v2(app, ctx) {
    // Access comes before anything about the request itself: without the alpha feature every
    // request is 403 mjml_alpha, whatever its body.
    const access = async (request: FastifyRequest) => {
      await requireMjmlAccess(ctx.db, request.principal.workspaceId);
      request.body ??= {}; // no body at all is "missing source" (422), not a schema error
    };
    app.post(
      '/mjml/validate',
      { schema: { tags, body: ValidateBody, response: { 200: MjmlValidation, ...mjmlErrors } }, preValidation: access },
      async (request) => validateSource((request.body as Static<typeof ValidateBody>).source),
    );
    app.post(
      '/mjml/render',
      {
        schema: { tags, body: RenderBody, response: { 200: MjmlRender, ...mjmlErrors, ...errorResponses({ 429: 'rateLimit' }) } },
        preValidation: async (request) => {
          await access(request);
          checkRenderLimit(request.principal.workspaceId);
        },
      },
      async (request) => {
        const body = request.body as Static<typeof RenderBody>;
        return renderSource(body.source, body.variables);
      },
    );
    app.get(
      '/mjml/reference',
      { schema: { tags, response: { 200: MjmlReference, ...errorResponses({ 403: 'errorMessage' }) } }, preValidation: access },
      async () => mjmlReference(),
    );
  },
  async start(ctx, roles) {
    // Loading mjml takes a few seconds of CPU: done ahead only where MJML is in use.
    if (!roles.has('api')) return;
    const users = await ctx.db.selectFrom('workspaces').select('id').where('features', 'like', '%"mjml"%').limit(1).execute();
    if (users.length > 0) warmUpMjml();
  },
};
