// Tracking endpoints, answered whatever the Host (the domain's tracking CNAME points here):
// GET /o/<token>.gif → a 1x1 GIF (always, so a mail client never shows a broken image) and an
// open; GET /c/<token> → 302 to the link's original URL and a click, 404 for unknown tokens.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Resource } from '../../platform/resource.ts';
import { findLink, recordHit } from './service.ts';

const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NO_CACHE = 'no-store, no-cache, must-revalidate, private, max-age=0';

function client(request: FastifyRequest) {
  const agent = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: typeof agent === 'string' ? agent : null };
}

/** A Location value Node accepts: the URL as stored when it is plain ASCII, else as a browser would normalize it. */
export function locationOf(url: string): string {
  if (!/[^\x21-\x7e]/.test(url)) return url;
  try {
    return new URL(url).href;
  } catch {
    return encodeURI(url);
  }
}

export const resource: Resource = {
  name: 'tracking',
  public(app, ctx) {
    const routeOptions = { schema: { hide: true }, config: { scope: 'public' as const } };
    app.get<{ Params: { file: string } }>('/o/:file', routeOptions, async (request, reply: FastifyReply) => {
      const token = request.params.file.replace(/\.gif$/i, '');
      if (request.method === 'GET') {
        const link = await findLink(ctx.db, token, 'open');
        if (link) await recordHit(ctx.db, link, client(request));
      }
      return reply.code(200).header('content-type', 'image/gif').header('cache-control', NO_CACHE).header('pragma', 'no-cache').send(PIXEL);
    });
    app.get<{ Params: { token: string } }>('/c/:token', routeOptions, async (request, reply: FastifyReply) => {
      const link = await findLink(ctx.db, request.params.token, 'click');
      if (!link || !link.url)
        return reply.code(404).header('content-type', 'text/plain; charset=utf-8').header('cache-control', NO_CACHE).send('Link not found');
      if (request.method === 'GET') await recordHit(ctx.db, link, client(request));
      return reply.code(302).header('location', locationOf(link.url)).header('cache-control', NO_CACHE).send();
    });
  },
};
