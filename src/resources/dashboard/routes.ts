// Serves the web dashboard (built from dashboard/ by `npm ci`'s prepare step into
// dashboard/dist) on the HTTP port of every process that serves the API; `/` leads to it.
// A handful of files, so they are held in memory with a gzip copy each instead of a static-file
// plugin: fingerprinted assets are cached for good, index.html is answered for every page path.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Resource } from '../../platform/resource.ts';

export const DASHBOARD_DIST = join(import.meta.dirname, '..', '..', '..', 'dashboard', 'dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

// The dashboard's pages run only our own script; an email's HTML is shown in a sandboxed frame
// (no scripts, no same origin), so it may show remote images but never run anything.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src * data: blob:; font-src * data:; frame-src 'self' blob: data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
}

function loadAssets(): Map<string, Asset> | null {
  if (!existsSync(join(DASHBOARD_DIST, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else {
        const body = readFileSync(join(dir, entry.name));
        assets.set(`${prefix}${entry.name}`, {
          body,
          gzip: gzipSync(body, { level: 9 }),
          type: TYPES[extname(entry.name)] ?? 'application/octet-stream',
        });
      }
    }
  };
  walk(DASHBOARD_DIST, '');
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cache: string) {
  reply.headers({ ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': cache, vary: 'accept-encoding' });
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

export const resource: Resource = {
  name: 'dashboard',
  public(app) {
    let assets: Map<string, Asset> | null | undefined;
    const hidden = { schema: { hide: true }, config: { scope: 'public' as const } };
    app.get('/', hidden, async (_request, reply) => reply.redirect('/dashboard/', 302));
    const serve = async (request: FastifyRequest, reply: FastifyReply) => {
      assets ??= loadAssets();
      if (!assets) {
        return reply.code(503).type('text/plain').send('The dashboard is not built: run `npm run build:dashboard` (npm ci does it).\n');
      }
      const path = (request.params as { '*'?: string })['*'] ?? '';
      const file = assets.get(path);
      if (file && path.startsWith('assets/')) return send(request, reply, file, 'public, max-age=31536000, immutable');
      // Anything else is a page of the dashboard: its router reads the path.
      if (path.startsWith('assets/')) return reply.code(404).type('text/plain').send('Not found\n');
      return send(request, reply, assets.get('index.html')!, 'no-cache');
    };
    // `/dashboard` and `/dashboard/` (trailing slashes are ignored), and every path below.
    app.get('/dashboard', hidden, serve);
    app.get('/dashboard/*', hidden, serve);
  },
};
