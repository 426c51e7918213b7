// The OAuth 2.1 authorization server's rules: authorization requests (PKCE S256 only, exact
// redirect URIs), the person's approval (workspaces and a scope no wider than asked), single-use
// codes, 15-minute access tokens bound to one resource (RFC 8707), refresh tokens rotated on
// every use whose replay revokes the whole grant, revocation (RFC 7009), and the principal an
// access token stands for: the person's own role in the workspace, so every role and scope
// check of the API applies to it unchanged.
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../../platform/context.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { newId } from '../../platform/ids.ts';
import { hashSecret, type Principal, type Scope } from '../../platform/http/auth.ts';
import { membershipOf, membershipsOf } from '../users/service.ts';
import { findClient, redirectMatches, type OAuthClient } from './clients.ts';
import { OAuthError } from './errors.ts';
import type {} from './tables.ts';

export const CODE_MS = 60_000;
export const ACCESS_TOKEN_MS = 15 * 60_000;
export const REFRESH_TOKEN_MS = 30 * 24 * 3600_000;
export const SCOPES = ['sending', 'full'] as const;
const ACCESS_PREFIX = 'plat_';
const REFRESH_PREFIX = 'plrt_';
const CODE_PREFIX = 'plac_';

export type Resource = 'api' | 'mcp';

/** The resource identifiers (RFC 8707) of the REST API and of the MCP server. */
export function resourceUrls(publicUrl: string): Record<Resource, string> {
  const base = publicUrl.replace(/\/+$/, '');
  return { api: base, mcp: `${base}/mcp` };
}

function resourceOf(publicUrl: string, value: string | undefined): Resource {
  const urls = resourceUrls(publicUrl);
  if (value === undefined || value === '') return 'api';
  const given = value.replace(/\/+$/, '');
  if (given === urls.api || given === `${urls.api}/v2` || given === `${urls.api}/v1`) return 'api';
  if (given === urls.mcp) return 'mcp';
  throw new OAuthError(400, 'invalid_target', `The resource ${value.slice(0, 200)} is not served here; use ${urls.api} or ${urls.mcp}`);
}

const newSecret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

// ---------------------------------------------------------------------------------------
// Authorization requests

export interface AuthorizationParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export interface CheckedRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  /** The widest scope the client asked for (the person may grant less). */
  scope: Scope;
  resource: Resource;
}

/** Refused before the client's redirect URI is trusted: shown to the person, never redirected. */
export class UnsafeAuthorizationError extends OAuthError {}

/** An error sent back to the client's (verified) redirect URI. */
export class RedirectedAuthorizationError extends OAuthError {
  readonly location: string;
  constructor(code: string, description: string, location: string) {
    super(400, code, description);
    this.location = location;
  }
}

export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

const CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

/** Checks an authorization request; the client and its redirect URI first, then the rest. */
export async function checkAuthorizationRequest(ctx: AppContext, params: AuthorizationParams): Promise<CheckedRequest> {
  const client = await findClient(ctx, params.client_id);
  if (!client) throw new UnsafeAuthorizationError(400, 'invalid_client', 'Unknown client_id');
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined && client.redirect_uris.length === 1) redirectUri = client.redirect_uris[0];
  if (!redirectUri || !redirectMatches(client, redirectUri))
    throw new UnsafeAuthorizationError(
      400,
      'invalid_request',
      "redirect_uri is missing or is not one of the client's registered redirect URIs",
    );
  const issuer = resourceUrls(ctx.config.publicUrl).api;
  const fail = (code: string, description: string) => {
    throw new RedirectedAuthorizationError(
      code,
      description,
      redirectWith(redirectUri, { error: code, error_description: description, state: params.state, iss: issuer }),
    );
  };
  if (params.response_type !== 'code') fail('unsupported_response_type', 'response_type must be code');
  if (!params.code_challenge) fail('invalid_request', 'code_challenge is required (PKCE)');
  if (params.code_challenge_method !== 'S256')
    fail('invalid_request', 'transform algorithm not supported: code_challenge_method must be S256');
  if (!CHALLENGE.test(params.code_challenge!)) fail('invalid_request', 'code_challenge must be 43 to 128 characters of [A-Za-z0-9._~-]');
  let scope: Scope = 'full';
  if (params.scope !== undefined && params.scope.trim() !== '') {
    const asked = params.scope.trim().split(/\s+/);
    if (asked.some((s) => !(SCOPES as readonly string[]).includes(s))) fail('invalid_scope', 'scope may be sending or full');
    scope = asked.includes('full') ? 'full' : 'sending';
  }
  let resource: Resource = 'api';
  try {
    resource = resourceOf(ctx.config.publicUrl, params.resource);
  } catch (error) {
    fail('invalid_target', (error as Error).message);
  }
  return { client, redirectUri, state: params.state, codeChallenge: params.code_challenge!, scope, resource };
}

export interface Decision {
  approve: boolean;
  workspace_ids?: string[];
  scope?: string;
}

/** The person's answer: where their browser goes next (a code, or access_denied). */
export async function decide(ctx: AppContext, userId: string, params: AuthorizationParams, decision: Decision): Promise<string> {
  const request = await checkAuthorizationRequest(ctx, params);
  const issuer = resourceUrls(ctx.config.publicUrl).api;
  if (!decision.approve) {
    return redirectWith(request.redirectUri, {
      error: 'access_denied',
      error_description: 'The person declined',
      state: request.state,
      iss: issuer,
    });
  }
  const scope = (decision.scope ?? request.scope) as Scope;
  if (!(SCOPES as readonly string[]).includes(scope)) throw new OAuthError(400, 'invalid_scope', 'scope must be sending or full');
  if (request.scope === 'sending' && scope === 'full')
    throw new OAuthError(400, 'invalid_scope', 'The app asked for sending only; full cannot be granted');
  const workspaceIds = [...new Set(decision.workspace_ids ?? [])];
  if (workspaceIds.length === 0) throw new OAuthError(400, 'invalid_request', 'Choose at least one workspace');
  const memberships = new Set((await membershipsOf(ctx.db, userId)).map((m) => m.workspace_id));
  if (workspaceIds.some((id) => !memberships.has(id)))
    throw new OAuthError(400, 'invalid_request', 'You can only grant access to workspaces you belong to');
  const code = newSecret(CODE_PREFIX);
  await ctx.db.transaction().execute(async (tx) => {
    const grantId = newId('oag');
    await tx
      .insertInto('oauth_grants')
      .values({
        id: grantId,
        client_id: request.client.client_id,
        client_name: request.client.client_name,
        user_id: userId,
        scope,
        resource: request.resource,
        workspace_ids: JSON.stringify(workspaceIds),
        current_workspace_id: workspaceIds[0],
        created_at: nowIso(),
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    await tx
      .insertInto('oauth_codes')
      .values({
        code_hash: hashSecret(code),
        grant_id: grantId,
        redirect_uri: request.redirectUri,
        code_challenge: request.codeChallenge,
        expires_at: Math.floor(nowMs()) + CODE_MS,
        used_at: null,
      })
      .execute();
  });
  return redirectWith(request.redirectUri, { code, state: request.state, iss: issuer });
}

// ---------------------------------------------------------------------------------------
// Tokens

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);

async function issueTokens(tx: Executor, grantId: string, scope: string): Promise<TokenResponse> {
  const access = newSecret(ACCESS_PREFIX);
  const refresh = newSecret(REFRESH_PREFIX);
  const now = Math.floor(nowMs());
  const createdAt = nowIso();
  await tx
    .insertInto('oauth_tokens')
    .values([
      {
        token_hash: hashSecret(access),
        grant_id: grantId,
        kind: 'access',
        expires_at: now + ACCESS_TOKEN_MS,
        used_at: null,
        created_at: createdAt,
      },
      {
        token_hash: hashSecret(refresh),
        grant_id: grantId,
        kind: 'refresh',
        expires_at: now + REFRESH_TOKEN_MS,
        used_at: null,
        created_at: createdAt,
      },
    ])
    .execute();
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_MS / 1000, refresh_token: refresh, scope };
}

/** Ends a grant: it and every token it issued stop working at once. */
export async function revokeGrant(ctx: AppContext, db: Executor, grantId: string): Promise<void> {
  await db.updateTable('oauth_grants').set({ revoked_at: nowIso() }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
  await db.deleteFrom('oauth_tokens').where('grant_id', '=', grantId).execute();
  forgetGrant(grantId);
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface TokenRequest {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  client_id?: string;
  code_verifier?: string;
  refresh_token?: string;
  resource?: string;
}

export async function exchangeToken(ctx: AppContext, body: TokenRequest): Promise<TokenResponse> {
  if (body.grant_type === 'authorization_code') return redeemCode(ctx, body);
  if (body.grant_type === 'refresh_token') return refresh(ctx, body);
  throw new OAuthError(
    400,
    body.grant_type ? 'unsupported_grant_type' : 'invalid_request',
    'grant_type must be authorization_code or refresh_token',
  );
}

async function grantOf(db: Executor, grantId: string) {
  return db.selectFrom('oauth_grants').selectAll().where('id', '=', grantId).executeTakeFirst();
}

async function redeemCode(ctx: AppContext, body: TokenRequest): Promise<TokenResponse> {
  if (!body.code) throw new OAuthError(400, 'invalid_request', 'code is required');
  if (!body.client_id) throw new OAuthError(400, 'invalid_request', 'client_id is required');
  if (!body.code_verifier) throw new OAuthError(400, 'invalid_request', 'code_verifier is required (PKCE)');
  const row = await ctx.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', hashSecret(body.code)).executeTakeFirst();
  if (!row) throw invalidGrant('The authorization code is not valid');
  const grant = await grantOf(ctx.db, row.grant_id);
  if (!grant || grant.revoked_at) throw invalidGrant('The authorization code is not valid');
  if (row.used_at) {
    // A code used twice was intercepted: whatever it gave the first time is revoked too.
    await revokeGrant(ctx, ctx.db, grant.id);
    throw invalidGrant('The authorization code was already used');
  }
  if (Number(row.expires_at) < nowMs()) throw invalidGrant('The authorization code has expired');
  if (grant.client_id !== body.client_id) throw invalidGrant('The authorization code was issued to another client');
  if (body.redirect_uri !== undefined && body.redirect_uri !== row.redirect_uri)
    throw invalidGrant('redirect_uri does not match the authorization request');
  if (!VERIFIER.test(body.code_verifier) || s256(body.code_verifier) !== row.code_challenge)
    throw invalidGrant('code_verifier does not match the code challenge');
  if (body.resource !== undefined && resourceOf(ctx.config.publicUrl, body.resource) !== grant.resource) {
    throw new OAuthError(400, 'invalid_target', 'The resource differs from the one authorized');
  }
  return ctx.db.transaction().execute(async (tx) => {
    const used = await tx
      .updateTable('oauth_codes')
      .set({ used_at: nowIso() })
      .where('code_hash', '=', row.code_hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) throw invalidGrant('The authorization code was already used');
    return issueTokens(tx, grant.id, grant.scope);
  });
}

async function refresh(ctx: AppContext, body: TokenRequest): Promise<TokenResponse> {
  if (!body.refresh_token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required');
  if (!body.client_id) throw new OAuthError(400, 'invalid_request', 'client_id is required');
  const row = await ctx.db
    .selectFrom('oauth_tokens')
    .selectAll()
    .where('token_hash', '=', hashSecret(body.refresh_token))
    .where('kind', '=', 'refresh')
    .executeTakeFirst();
  if (!row) throw invalidGrant('The refresh token is not valid');
  const grant = await grantOf(ctx.db, row.grant_id);
  if (!grant || grant.revoked_at) throw invalidGrant('The refresh token is not valid');
  if (grant.client_id !== body.client_id) throw invalidGrant('The refresh token was issued to another client');
  if (row.used_at) {
    await revokeGrant(ctx, ctx.db, grant.id);
    throw invalidGrant('The refresh token was already used; every token of this authorization is now revoked');
  }
  if (Number(row.expires_at) < nowMs()) throw invalidGrant('The refresh token has expired');
  if (body.resource !== undefined && resourceOf(ctx.config.publicUrl, body.resource) !== grant.resource) {
    throw new OAuthError(400, 'invalid_target', 'The resource differs from the one authorized');
  }
  const outcome = await ctx.db.transaction().execute(async (tx) => {
    const used = await tx
      .updateTable('oauth_tokens')
      .set({ used_at: nowIso() })
      .where('token_hash', '=', row.token_hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) return null; // used concurrently: a replay
    return issueTokens(tx, grant.id, grant.scope);
  });
  if (!outcome) {
    await revokeGrant(ctx, ctx.db, grant.id);
    throw invalidGrant('The refresh token was already used; every token of this authorization is now revoked');
  }
  return outcome;
}

/** RFC 7009: a refresh token ends its whole grant, an access token only itself; unknown tokens are no error. */
export async function revokeToken(ctx: AppContext, token: string | undefined, clientId: string | undefined): Promise<void> {
  if (!token) throw new OAuthError(400, 'invalid_request', 'token is required');
  const row = await ctx.db
    .selectFrom('oauth_tokens')
    .select(['token_hash', 'grant_id', 'kind'])
    .where('token_hash', '=', hashSecret(token))
    .executeTakeFirst();
  if (!row) return;
  const grant = await grantOf(ctx.db, row.grant_id);
  if (!grant || (clientId !== undefined && grant.client_id !== clientId)) return;
  if (row.kind === 'refresh') await revokeGrant(ctx, ctx.db, grant.id);
  else {
    await ctx.db.deleteFrom('oauth_tokens').where('token_hash', '=', row.token_hash).execute();
    tokenCache.delete(row.token_hash);
  }
}

// ---------------------------------------------------------------------------------------
// Access tokens as principals

export interface TokenPrincipal extends Principal {
  userId: string;
  role: 'admin' | 'member';
  grantId: string;
  /** Every workspace the grant covers. */
  workspaceIds: string[];
}

interface CachedToken {
  principal: TokenPrincipal;
  resource: Resource;
  expires: number;
}

// Briefly cached like API keys (a revocation in this process drops its entries at once).
const CACHE_MS = 1000;
const tokenCache = new Map<string, CachedToken>();

function forgetGrant(grantId: string): void {
  for (const [hash, cached] of tokenCache) if (cached.principal.grantId === grantId) tokenCache.delete(hash);
}

export function looksLikeAccessToken(secret: string | null): secret is string {
  return secret !== null && secret.startsWith(ACCESS_PREFIX) && secret.length < 200;
}

/** The principal of an access token for `resource`, or null (unknown, expired, revoked, another resource, no longer a member). */
export async function principalOfToken(ctx: AppContext, token: string, resource: Resource): Promise<TokenPrincipal | null> {
  if (!looksLikeAccessToken(token)) return null;
  const hash = hashSecret(token);
  const now = nowMs();
  const cached = tokenCache.get(hash);
  if (cached && cached.expires > now) return cached.resource === resource ? cached.principal : null;
  const row = await ctx.db
    .selectFrom('oauth_tokens')
    .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
    .select([
      'oauth_tokens.expires_at',
      'oauth_grants.id as grant_id',
      'oauth_grants.user_id',
      'oauth_grants.scope',
      'oauth_grants.resource',
      'oauth_grants.workspace_ids',
      'oauth_grants.current_workspace_id',
      'oauth_grants.revoked_at',
    ])
    .where('oauth_tokens.token_hash', '=', hash)
    .where('oauth_tokens.kind', '=', 'access')
    .executeTakeFirst();
  if (!row || row.revoked_at || Number(row.expires_at) < now) {
    tokenCache.delete(hash);
    return null;
  }
  const role = await membershipOf(ctx.db, row.user_id, row.current_workspace_id);
  if (!role) return null;
  const principal: TokenPrincipal = {
    keyId: '',
    keyHash: '',
    workspaceId: row.current_workspace_id,
    scope: row.scope as Scope,
    sendingDomainId: null,
    userId: row.user_id,
    role,
    grantId: row.grant_id,
    workspaceIds: JSON.parse(row.workspace_ids) as string[],
  };
  if (tokenCache.size > 10_000) tokenCache.clear();
  tokenCache.set(hash, { principal, resource: row.resource as Resource, expires: Math.min(now + CACHE_MS, Number(row.expires_at)) });
  void ctx.db
    .updateTable('oauth_grants')
    .set({ last_used_at: nowIso() })
    .where('id', '=', row.grant_id)
    .execute()
    .catch(() => {});
  return row.resource === resource ? principal : null;
}

// A tool call of the MCP server runs its operation through the app with a credential of its own
// that stands for the caller's principal (in the workspace the call names) for that call only:
// random, never stored, forgotten when the call ends.
const DELEGATION_PREFIX = 'pldg_';
const delegations = new Map<string, Principal>();

export function delegate(principal: Principal): { credential: string; end(): void } {
  const credential = newSecret(DELEGATION_PREFIX);
  delegations.set(credential, principal);
  return { credential, end: () => void delegations.delete(credential) };
}

/** The principal of a bearer that is no API key: a call's delegation, or a REST access token. */
export function principalOfBearer(ctx: AppContext, token: string): Promise<Principal | null> {
  if (token.startsWith(DELEGATION_PREFIX)) return Promise.resolve(delegations.get(token) ?? null);
  return principalOfToken(ctx, token, 'api');
}

/** The same person in another workspace of the grant (their role there), or null. */
export async function inWorkspace(db: Db, principal: TokenPrincipal, workspaceId: string): Promise<TokenPrincipal | null> {
  if (!principal.workspaceIds.includes(workspaceId)) return null;
  const role = await membershipOf(db, principal.userId, workspaceId);
  return role ? { ...principal, workspaceId, role } : null;
}

/** Makes `workspaceId` the grant's default workspace (the MCP switch-workspace tool). */
export async function switchWorkspace(db: Db, principal: TokenPrincipal, workspaceId: string): Promise<void> {
  await db.updateTable('oauth_grants').set({ current_workspace_id: workspaceId }).where('id', '=', principal.grantId).execute();
  forgetGrant(principal.grantId);
}

/** Adds a workspace the person just created to the grant. */
export async function addWorkspaceToGrant(db: Db, principal: TokenPrincipal, workspaceId: string): Promise<void> {
  const workspaceIds = [...principal.workspaceIds, workspaceId];
  await db
    .updateTable('oauth_grants')
    .set({ workspace_ids: JSON.stringify(workspaceIds) })
    .where('id', '=', principal.grantId)
    .execute();
  forgetGrant(principal.grantId);
}

// ---------------------------------------------------------------------------------------
// The apps a person has authorised

export async function listAuthorizedApps(db: Db, userId: string) {
  const rows = await db
    .selectFrom('oauth_grants')
    .select(['id', 'client_id', 'client_name', 'scope', 'resource', 'workspace_ids', 'created_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();
  return {
    data: rows.map((row) => ({
      object: 'authorized_app' as const,
      id: row.id,
      client_id: row.client_id,
      name: row.client_name,
      scope: row.scope,
      resource: row.resource,
      workspace_ids: JSON.parse(row.workspace_ids) as string[],
      created_at: row.created_at,
      last_used_at: row.last_used_at,
    })),
  };
}

export async function revokeAuthorizedApp(ctx: AppContext, userId: string, grantId: string) {
  const grant = await grantOf(ctx.db, grantId);
  if (!grant || grant.user_id !== userId || grant.revoked_at) return null;
  await revokeGrant(ctx, ctx.db, grant.id);
  return { object: 'authorized_app' as const, id: grant.id, revoked: true as const };
}
