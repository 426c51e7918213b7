import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { looksLikeId } from '../../platform/ids.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { SlidingWindowLimiter } from '../../platform/http/rate-limit.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { ChallengeIssuer } from './challenge.ts';
import { embedBundle, workspaceScript } from './embed-script.ts';
import { loadPublicForm, submitPublicForm, type SubmitInput } from './public.ts';
import * as S from './schemas.ts';
import {
  createForm,
  deleteForm,
  embedSnippet,
  getForm,
  listForms,
  listSubmissions,
  liveFormsByEmbedKey,
  publishForm,
  rotateFormToken,
  unpublishForm,
  updateForm,
} from './service.ts';

const tags = ['Forms'];
type Id = Static<typeof S.IdParams>;
type Token = Static<typeof S.TokenParams>;

// Like the other lists: an unknown sort key or direction is ignored (docs/api.md, "Conventions"),
// not refused.
const sortKeys = (keys: string[]) => ({
  order: Type.Optional(Type.String({ description: `Sort key: ${keys.join(', ')}; newest first without it` })),
  direction: Type.Optional(Type.String({ description: 'asc or desc (order without direction sorts ascending)' })),
});
const ListQuery = pageLimitQuery(10, sortKeys(['name', 'type', 'status', 'created_at']));
const SubmissionsQuery = pageLimitQuery(10, sortKeys(['created_at', 'page_url', 'experiment_id', 'variant_id']));

const notFound = errorResponses({ 404: 'error' });
const publicErrors = errorResponses({ 404: 'error', 429: 'rateLimit' });

// Per IP, whatever the plan (https://emailit.com/docs/limits.md).
const LOADS_PER_MINUTE = 60;
const SUBMITS_PER_MINUTE = 30;

function checkLimit(limiter: SlidingWindowLimiter, request: FastifyRequest, what: string): void {
  const decision = limiter.hit(request.ip);
  if (decision.allowed) return;
  const body = {
    error: 'Rate limit exceeded',
    message: `Too many ${what}: at most ${decision.limit} per minute from one address`,
    limit: decision.limit,
    current: decision.limit,
    retry_after: decision.retryAfter,
  };
  throw new ApiError(429, body, { 'retry-after': String(decision.retryAfter) });
}

// Any site may embed a form: the public answers carry CORS headers, and the submit's preflight
// is answered here (a few headers; the CORS plugin would apply to the authenticated routes too).
function allowAnyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', 'retry-after');
}

/** A frm_ id is the API (full key); anything else is a public token (no key). */
const isApiRequest = (request: FastifyRequest) => looksLikeId((request.params as { id?: string }).id ?? '', 'frm');

export const resource: Resource = {
  name: 'forms',
  async v2(app, ctx) {
    const challenges = new ChallengeIssuer(ctx.verpSecret);
    // Limits of this server (per process, like the other fixed per-endpoint limits).
    const loads = new SlidingWindowLimiter(LOADS_PER_MINUTE, 60_000);
    const submits = new SlidingWindowLimiter(SUBMITS_PER_MINUTE, 60_000);
    const workspace = (request: FastifyRequest) => request.principal.workspaceId;

    app.post('/forms', { schema: { tags, body: S.CreateBody, response: { 201: S.Form } } }, async (request, reply) =>
      reply.code(201).send(await createForm(ctx.db, workspace(request), request.body as Static<typeof S.CreateBody>)),
    );
    app.get('/forms', { schema: { tags, querystring: ListQuery, response: { 200: S.FormList } } }, async (request) =>
      listForms(ctx.db, workspace(request), request.query as Query, request.url),
    );
    app.get(
      '/forms/embed',
      {
        schema: {
          tags,
          description:
            "The workspace's embed script: one script tag for every page (it shows the live popup, flyout, full-page and banner forms) and the element that places an embed form.",
          response: { 200: S.FormEmbed },
        },
      },
      async (request) => embedSnippet(ctx.db, ctx.config.publicUrl, workspace(request)),
    );

    app.get(
      '/forms/:id',
      {
        schema: {
          tags,
          params: S.LoadParams,
          description:
            'With a frm_ id and a full key: the form. With a public token and no key: what the embed script needs to render the live form (60 per minute per IP; 404 for a draft or unknown token).',
          response: { 200: Type.Union([S.Form, S.PublicForm]), ...publicErrors },
        },
        config: { scope: (request) => (isApiRequest(request) ? 'full' : 'public') },
      },
      async (request, reply) => {
        const { id } = request.params as Id;
        if (isApiRequest(request)) return getForm(ctx.db, workspace(request), id);
        allowAnyOrigin(reply);
        reply.header('cache-control', 'no-store');
        checkLimit(loads, request, 'form loads');
        return loadPublicForm(ctx.db, challenges, id);
      },
    );

    const update = async (request: FastifyRequest) =>
      updateForm(ctx.db, workspace(request), (request.params as Id).id, (request.body ?? {}) as Static<typeof S.UpdateBody>);
    const updateSchema = {
      tags,
      params: S.IdParams,
      body: S.UpdateBody,
      response: { 200: S.Form, ...errorResponses({ 400: 'error', 404: 'error', 422: 'error' }) },
    };
    // No body at all is an update of nothing (200, unchanged), not a schema error.
    const preValidation = async (request: FastifyRequest) => {
      request.body ??= {};
    };
    app.post('/forms/:id', { schema: updateSchema, preValidation }, update);
    // The spec's transition table names this path for the same update.
    app.post('/forms/:id/update', { schema: updateSchema, preValidation }, update);

    app.delete(
      '/forms/:id',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'Deletes the form with its submissions; its token stops answering.',
          response: { 200: S.DeletedForm, ...notFound },
        },
      },
      async (request) => deleteForm(ctx.db, workspace(request), (request.params as Id).id),
    );
    app.post(
      '/forms/:id/publish',
      { schema: { tags, params: S.IdParams, response: { 200: S.Form, ...errorResponses({ 404: 'error', 422: 'error' }) } } },
      async (request) => publishForm(ctx.db, workspace(request), (request.params as Id).id),
    );
    app.post(
      '/forms/:id/unpublish',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'Back to draft: the form stops collecting sign-ups at once. No body.',
          response: { 200: S.Form, ...notFound },
        },
      },
      async (request) => unpublishForm(ctx.db, workspace(request), (request.params as Id).id),
    );
    app.post(
      '/forms/:id/rotate-token',
      {
        schema: {
          tags,
          params: S.IdParams,
          description: 'A new public token; the old one stops answering at once. No body.',
          response: { 200: S.Form, ...notFound },
        },
      },
      async (request) => rotateFormToken(ctx.db, workspace(request), (request.params as Id).id),
    );
    app.get(
      '/forms/:id/submissions',
      {
        schema: {
          tags,
          params: S.IdParams,
          querystring: SubmissionsQuery,
          description: "The form's submissions, newest first (search matches any submitted value).",
          response: { 200: S.FormSubmissionList, ...notFound },
        },
      },
      async (request) => listSubmissions(ctx.db, workspace(request), (request.params as Id).id, request.query as Query, request.url),
    );

    app.post(
      '/forms/:token/submit',
      {
        schema: {
          tags,
          params: S.TokenParams,
          body: S.SubmitBody,
          description:
            "A visitor's submission of a live form (no key; 30 per minute per IP). 400 names each refused field; 403 without a solved proof-of-work challenge.",
          response: {
            201: S.SubmitResult,
            ...errorResponses({ 400: 'fieldValidation', 403: 'errorMessage', 413: 'framework' }),
            ...publicErrors,
          },
        },
        config: { scope: 'public' },
        bodyLimit: 256 * 1024,
        onRequest: async (_request, reply) => allowAnyOrigin(reply),
      },
      async (request, reply) => {
        checkLimit(submits, request, 'form submissions');
        const referer = typeof request.headers.referer === 'string' ? request.headers.referer : undefined;
        const result = await submitPublicForm(ctx.db, challenges, (request.params as Token).token, request.body as SubmitInput, referer);
        return reply.code(201).send(result);
      },
    );
    app.options('/forms/:token/submit', { schema: { hide: true }, config: { scope: 'public' } }, async (_request, reply) => {
      allowAnyOrigin(reply);
      reply
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '86400')
        .code(204)
        .send();
    });
  },

  public(app, ctx) {
    // Built while the server starts, without holding the start up. A bundle that cannot be built
    // (a broken install) costs the forms their script, not the server its API.
    const bundle = embedBundle().catch((error: unknown) => {
      ctx.log.error({ err: error }, 'the forms embed script could not be built; /js/<key>/postlane.js answers 503');
      return null;
    });
    app.get<{ Params: { key: string } }>(
      '/js/:key/postlane.js',
      { schema: { hide: true }, config: { scope: 'public' } },
      async (request, reply) => {
        reply
          .header('content-type', 'application/javascript; charset=utf-8')
          .header('x-content-type-options', 'nosniff')
          .header('access-control-allow-origin', '*');
        const code = await bundle;
        if (code === null)
          return reply.code(503).header('cache-control', 'no-store').send('/* Postlane: the forms script is unavailable */\n');
        const forms = /^[A-Za-z0-9]{1,64}$/.test(request.params.key) ? await liveFormsByEmbedKey(ctx.db, request.params.key) : null;
        if (!forms) return reply.code(404).header('cache-control', 'no-store').send('/* Postlane: no workspace has this key */\n');
        const script = workspaceScript(code, { forms });
        // Short-lived: a newly published form shows within a minute; updates to live forms at once.
        reply.header('cache-control', 'public, max-age=60').header('etag', script.etag).header('vary', 'accept-encoding');
        if (request.headers['if-none-match'] === script.etag) return reply.code(304).send();
        if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')))
          return reply.header('content-encoding', 'gzip').send(script.gzipped);
        return reply.send(script.body);
      },
    );
  },
};
