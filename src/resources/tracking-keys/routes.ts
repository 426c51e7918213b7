// Tracking keys over HTTP (https://emailit.com/docs/api-reference/tracking-keys/), the tracking
// script, and the endpoint it sends to (https://emailit.com/docs/events/tracking-script/).
// The endpoint answers CORS only to the key's allowed origins; others get 403 and no CORS
// headers, so a page elsewhere can neither send nor read.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Resource } from '../../platform/resource.ts';
import { pageLimitQuery, type Query } from '../../platform/http/lists.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { plainError } from '../../platform/http/errors.ts';
import * as S from './schemas.ts';
import {
  checkCollectLimit,
  collect,
  createTrackingKey,
  deleteTrackingKey,
  getTrackingKey,
  listTrackingKeys,
  liveTrackingKey,
  originRefused,
  updateTrackingKey,
  type CollectInput,
} from './service.ts';
import { originAllowed } from './origins.ts';

const tags = ['Tracking keys'];
const IdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'tkey_ id' }) });
const KeyParams = Type.Object({ key: Type.String({ maxLength: 64, description: 'The public key (pk_…)' }) });
type Id = Static<typeof IdParams>;
// Keys go into the workspace's web pages: only its admins make, change or delete them.
const admin = { role: 'admin' as const };
const notFound = errorResponses({ 404: 'error' });

const SCRIPT_SOURCE = readFileSync(join(import.meta.dirname, 'script.js'), 'utf8');

function scriptFor(endpoint: string) {
  const body = SCRIPT_SOURCE.replace('__ENDPOINT__', endpoint);
  return { body, gzipped: gzipSync(body), etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` };
}

/** The key of a script request after the limit, the key and the origin checks (in that order). */
async function admitted(request: FastifyRequest, reply: FastifyReply, db: Parameters<typeof liveTrackingKey>[0]) {
  const { key } = request.params as { key: string };
  checkCollectLimit(key, request.ip);
  const row = await liveTrackingKey(db, key);
  if (!row) throw plainError(404, 'Tracking key not found');
  const origin = typeof request.headers.origin === 'string' ? request.headers.origin : undefined;
  const allowed = JSON.parse(row.allowed_origins) as string[];
  if (!originAllowed(allowed, origin)) throw originRefused();
  reply
    .header('access-control-allow-origin', allowed.length === 0 ? '*' : origin!)
    .header('vary', 'origin')
    .header('access-control-expose-headers', 'retry-after');
  return row;
}

export const resource: Resource = {
  name: 'tracking-keys',
  v2(app, ctx) {
    const publicUrl = ctx.config.publicUrl;
    app.post(
      '/tracking-keys',
      {
        config: admin,
        schema: {
          tags,
          body: S.CreateTrackingKeyBody,
          response: { 201: S.TrackingKey, ...errorResponses({ 400: 'fieldValidation', 403: ['planRequired', 'errorMessage'] }) },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await createTrackingKey(
              ctx.db,
              publicUrl,
              request.principal.workspaceId,
              request.body as Static<typeof S.CreateTrackingKeyBody>,
            ),
          ),
    );
    app.get(
      '/tracking-keys',
      { schema: { tags, querystring: pageLimitQuery(25), response: { 200: S.TrackingKeyList } } },
      async (request) => listTrackingKeys(ctx.db, publicUrl, request.principal.workspaceId, request.query as Query, request.url),
    );
    app.get('/tracking-keys/:id', { schema: { tags, params: IdParams, response: { 200: S.TrackingKey, ...notFound } } }, async (request) =>
      getTrackingKey(ctx.db, publicUrl, request.principal.workspaceId, (request.params as Id).id),
    );
    app.post(
      '/tracking-keys/:id',
      {
        config: admin,
        schema: {
          tags,
          params: IdParams,
          body: S.UpdateTrackingKeyBody,
          response: { 200: S.TrackingKey, ...notFound, ...errorResponses({ 400: 'fieldValidation' }) },
        },
      },
      async (request) =>
        updateTrackingKey(
          ctx.db,
          publicUrl,
          request.principal.workspaceId,
          (request.params as Id).id,
          request.body as Static<typeof S.UpdateTrackingKeyBody>,
        ),
    );
    app.delete(
      '/tracking-keys/:id',
      { config: admin, schema: { tags, params: IdParams, response: { 200: S.DeletedTrackingKey, ...notFound } } },
      async (request) => deleteTrackingKey(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );

    app.post(
      '/track/:key',
      {
        config: { scope: 'public' },
        bodyLimit: 64 * 1024,
        schema: {
          tags,
          params: KeyParams,
          body: S.CollectBody,
          description:
            "What the tracking script sends (no API key; the public tracking key in the path). Answers CORS only to the key's allowed origins; 120 requests a minute per key and address.",
          response: {
            200: S.Collected,
            ...errorResponses({
              400: ['fieldValidation', 'validation', 'framework'],
              403: ['errorMessage', 'planRequired'],
              404: 'error',
              413: 'framework',
              429: 'rateLimit',
            }),
          },
        },
      },
      async (request, reply) => {
        const row = await admitted(request, reply, ctx.db);
        return collect(ctx.db, row, request.body as CollectInput);
      },
    );
    app.options('/track/:key', { schema: { hide: true }, config: { scope: 'public' } }, async (request, reply) => {
      await admitted(request, reply, ctx.db);
      reply
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    });
  },

  public(app, ctx) {
    const endpointBase = ctx.config.publicUrl.replace(/\/$/, '');
    app.get<{ Params: { file: string } }>(
      '/js/track/:file',
      { schema: { hide: true }, config: { scope: 'public' } },
      async (request, reply) => {
        reply
          .header('content-type', 'application/javascript; charset=utf-8')
          .header('x-content-type-options', 'nosniff')
          .header('access-control-allow-origin', '*');
        const key = /^(pk_[A-Za-z0-9]{32})\.js$/.exec(request.params.file)?.[1];
        const row = key ? await liveTrackingKey(ctx.db, key) : null;
        if (!row) return reply.code(404).header('cache-control', 'no-store').send('/* Postlane: no tracking key */\n');
        const script = scriptFor(`${endpointBase}/v2/track/${row.key}`);
        reply.header('cache-control', 'public, max-age=300').header('etag', script.etag).header('vary', 'accept-encoding');
        if (request.headers['if-none-match'] === script.etag) return reply.code(304).send();
        if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')))
          return reply.header('content-encoding', 'gzip').send(script.gzipped);
        return reply.send(script.body);
      },
    );
  },
};
