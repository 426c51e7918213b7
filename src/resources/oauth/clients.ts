// OAuth clients: registered by dynamic client registration (RFC 7591), or named by the https URL
// of a client ID metadata document, fetched through the same SSRF guard as webhooks (public
// addresses only unless ALLOW_PRIVATE_URLS), bounded in size and time, and cached. Every client
// is public (PKCE, no secret), so registration always answers `token_endpoint_auth_method: none`.
import type { AppContext } from '../../platform/context.ts';
import { nowIso } from '../../platform/clock.ts';
import { newId } from '../../platform/ids.ts';
import { fetchPinned, parseHttpUrl, resolvePublicAddress } from '../../platform/net.ts';
import { resolverFor } from '../webhooks/service.ts';
import { OAuthError } from './errors.ts';
import type {} from './tables.ts';

export interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
}

const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const METADATA_MAX_BYTES = 16 * 1024;
const METADATA_TIMEOUT_MS = 5000;
const METADATA_CACHE_MS = 5 * 60 * 1000;
const METADATA_CACHE_MAX = 1000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// Schemes a redirect may never use: they run code or read files instead of reaching an app.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:']);

export function isLoopbackRedirect(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** A redirect URI a client may register: https, http on a loopback address (RFC 8252), or an app's own scheme. */
function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URI_LENGTH)
    throw new OAuthError(400, 'invalid_redirect_uri', 'Each redirect URI must be a URL of at most 2000 characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError(400, 'invalid_redirect_uri', `${JSON.stringify(value.slice(0, 100))} is not an absolute URL`);
  }
  if (url.hash) throw new OAuthError(400, 'invalid_redirect_uri', 'A redirect URI may not contain a fragment');
  if (FORBIDDEN_SCHEMES.has(url.protocol))
    throw new OAuthError(400, 'invalid_redirect_uri', `The ${url.protocol} scheme is not allowed in a redirect URI`);
  if (url.protocol === 'http:' && !isLoopbackRedirect(url))
    throw new OAuthError(
      400,
      'invalid_redirect_uri',
      'A redirect URI must use https, except on a loopback address (127.0.0.1, [::1] or localhost)',
    );
  return value;
}

function checkClientMetadata(input: Record<string, unknown>): { client_name: string; redirect_uris: string[] } {
  const uris = input.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0)
    throw new OAuthError(400, 'invalid_redirect_uri', 'redirect_uris must list at least one redirect URI');
  if (uris.length > MAX_REDIRECT_URIS)
    throw new OAuthError(400, 'invalid_redirect_uri', `At most ${MAX_REDIRECT_URIS} redirect URIs may be registered`);
  const redirect_uris = uris.map(checkRedirectUri);
  const grantTypes = input.grant_types;
  if (
    grantTypes !== undefined &&
    (!Array.isArray(grantTypes) ||
      !grantTypes.includes('authorization_code') ||
      grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
  ) {
    throw new OAuthError(
      400,
      'invalid_client_metadata',
      'grant_types may contain only authorization_code and refresh_token, and must contain authorization_code',
    );
  }
  const responseTypes = input.response_types;
  if (responseTypes !== undefined && (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code'))) {
    throw new OAuthError(400, 'invalid_client_metadata', 'response_types may contain only code');
  }
  const name = typeof input.client_name === 'string' ? input.client_name.trim().slice(0, 200) : '';
  return { client_name: name || 'Unnamed app', redirect_uris };
}

/** Dynamic client registration (RFC 7591): the registered client's metadata, 201. */
export async function registerClient(ctx: AppContext, input: Record<string, unknown>) {
  const { client_name, redirect_uris } = checkClientMetadata(input);
  const client_id = newId('oac');
  const now = nowIso();
  const metadata = {
    client_id,
    client_id_issued_at: Math.floor(Date.parse(now) / 1000),
    client_name,
    redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  await ctx.db
    .insertInto('oauth_clients')
    .values({
      id: client_id,
      name: client_name,
      redirect_uris: JSON.stringify(redirect_uris),
      metadata: JSON.stringify(metadata),
      created_at: now,
    })
    .execute();
  return metadata;
}

const metadataCache = new Map<string, { client: OAuthClient; expires: number }>();

function isMetadataDocumentId(clientId: string, allowHttp: boolean): boolean {
  return clientId.startsWith('https://') || (allowHttp && clientId.startsWith('http://'));
}

/** A client ID metadata document, fetched (public addresses only, 16 KB, 5 s) and cached for 5 minutes. */
async function metadataDocumentClient(ctx: AppContext, clientId: string): Promise<OAuthClient | null> {
  const cached = metadataCache.get(clientId);
  if (cached && cached.expires > Date.now()) return cached.client;
  let url: URL;
  try {
    url = parseHttpUrl(clientId);
  } catch {
    return null;
  }
  if (url.pathname === '/' || url.hash || url.username || url.password) return null; // the document must sit at a path
  try {
    const address = await resolvePublicAddress(resolverFor(ctx), url.hostname, ctx.config.allowPrivateUrls);
    const response = await fetchPinned(url, address, {
      headers: { accept: 'application/json' },
      timeoutMs: METADATA_TIMEOUT_MS,
      maxBytes: METADATA_MAX_BYTES,
    });
    if (response.status !== 200) return null;
    const document = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
    if (!document || typeof document !== 'object' || document.client_id !== clientId) return null;
    const { client_name, redirect_uris } = checkClientMetadata(document);
    const client = { client_id: clientId, client_name, redirect_uris };
    if (metadataCache.size >= METADATA_CACHE_MAX) metadataCache.clear();
    metadataCache.set(clientId, { client, expires: Date.now() + METADATA_CACHE_MS });
    return client;
  } catch {
    return null; // unreachable, private, too large, not JSON or not valid metadata: no such client
  }
}

/** The client a client_id names, or null. */
export async function findClient(ctx: AppContext, clientId: string | undefined): Promise<OAuthClient | null> {
  if (!clientId || clientId.length > MAX_URI_LENGTH) return null;
  if (isMetadataDocumentId(clientId, ctx.config.allowPrivateUrls)) return metadataDocumentClient(ctx, clientId);
  const row = await ctx.db
    .selectFrom('oauth_clients')
    .select(['id', 'name', 'redirect_uris'])
    .where('id', '=', clientId)
    .executeTakeFirst();
  return row ? { client_id: row.id, client_name: row.name, redirect_uris: JSON.parse(row.redirect_uris) as string[] } : null;
}

/** Whether `given` is one of the client's redirect URIs: exactly, or a loopback one on any port (RFC 8252 §7.3). */
export function redirectMatches(client: OAuthClient, given: string): boolean {
  if (client.redirect_uris.includes(given)) return true;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return false;
  }
  if (!isLoopbackRedirect(url)) return false;
  return client.redirect_uris.some((registered) => {
    const r = new URL(registered);
    return (
      isLoopbackRedirect(r) &&
      r.hostname === url.hostname &&
      r.pathname === url.pathname &&
      r.search === url.search &&
      !url.hash &&
      !url.username &&
      !url.password
    );
  });
}
