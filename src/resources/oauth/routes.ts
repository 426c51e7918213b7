// The OAuth 2.1 authorization server at the API host: discovery (RFC 8414, RFC 9728), dynamic
// client registration (RFC 7591), the authorization endpoint (it sends the browser to the
// dashboard's consent page), the token and revocation endpoints, and the dashboard's list of
// the apps a person has authorised. Access tokens open /v2 and /v1 through the authenticator's
// token hook installed here. See https://emailit.com/docs/developers/oauth-apps/
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import formbody from '@fastify/formbody';
import type { Resource } from '../../platform/resource.ts';
import type { AppContext } from '../../platform/context.ts';
import { messageError } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import { requireSession } from '../users/index.ts';
import { registerClient } from './clients.ts';
import {
  AuthorizationQuery,
  AuthorizationRequestInfo,
  AuthorizationServerMetadata,
  AuthorizedAppList,
  DecisionBody,
  DecisionResult,
  GrantParams,
  OAuthErrorBody,
  ProtectedResourceMetadata,
  RegisteredClient,
  RegistrationBody,
  RevokeBody,
  Revoked,
  RevokedApp,
  TokenBody,
  TokenResponseBody,
} from './schemas.ts';
import {
  checkAuthorizationRequest,
  decide,
  exchangeToken,
  listAuthorizedApps,
  principalOfBearer,
  RedirectedAuthorizationError,
  resourceUrls,
  revokeAuthorizedApp,
  revokeToken,
  SCOPES,
  type AuthorizationParams,
} from './service.ts';

const tags = ['OAuth'];
const publicRoute = { scope: 'public' as const };
// OAuth requests are a few short fields.
const OAUTH_BODY_LIMIT = 64 * 1024;
const oauthErrors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, OAuthErrorBody]));
// Browser-based MCP clients call discovery, registration, token and revocation from another origin.
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type, authorization, mcp-protocol-version',
};

export function authorizationServerMetadata(ctx: AppContext) {
  const issuer = resourceUrls(ctx.config.publicUrl).api;
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

function protectedResourceMetadata(ctx: AppContext, which: 'api' | 'mcp') {
  const urls = resourceUrls(ctx.config.publicUrl);
  return {
    resource: urls[which],
    resource_name: which === 'api' ? 'Postlane API' : 'Postlane MCP server',
    authorization_servers: [urls.api],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
  };
}

/** The `WWW-Authenticate` challenge of a 401 from the API or the MCP server (RFC 9728 §5.1). */
export function bearerChallenge(publicUrl: string, which: 'api' | 'mcp'): string {
  const base = resourceUrls(publicUrl).api;
  return `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource${which === 'mcp' ? '/mcp' : ''}"`;
}

export const resource: Resource = {
  name: 'oauth',
  async public(app, ctx) {
    // Access tokens for the REST API open /v2 and /v1 like an API key of the grant's scope.
    ctx.auth.tokenAuthenticator = (token) => principalOfBearer(ctx, token);
    await app.register(formbody, { bodyLimit: OAUTH_BODY_LIMIT });

    const cors = (reply: FastifyReply) => reply.headers(CORS);
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/oauth/register',
      '/oauth/token',
      '/oauth/revoke',
    ]) {
      app.options(path, { schema: { hide: true }, config: publicRoute }, async (_request, reply) => cors(reply).code(204).send());
    }

    app.get(
      '/.well-known/oauth-authorization-server',
      {
        config: publicRoute,
        schema: { tags, summary: 'OAuth authorization server metadata (RFC 8414)', response: { 200: AuthorizationServerMetadata } },
      },
      async (_request, reply) => {
        cors(reply);
        return authorizationServerMetadata(ctx);
      },
    );
    app.get(
      '/.well-known/oauth-protected-resource',
      {
        config: publicRoute,
        schema: { tags, summary: 'Protected resource metadata of the REST API (RFC 9728)', response: { 200: ProtectedResourceMetadata } },
      },
      async (_request, reply) => {
        cors(reply);
        return protectedResourceMetadata(ctx, 'api');
      },
    );
    app.get(
      '/.well-known/oauth-protected-resource/mcp',
      {
        config: publicRoute,
        schema: { tags, summary: 'Protected resource metadata of the MCP server (RFC 9728)', response: { 200: ProtectedResourceMetadata } },
      },
      async (_request, reply) => {
        cors(reply);
        return protectedResourceMetadata(ctx, 'mcp');
      },
    );

    app.post(
      '/oauth/register',
      {
        config: publicRoute,
        bodyLimit: OAUTH_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Register a client (RFC 7591)',
          body: RegistrationBody,
          response: { 201: RegisteredClient, ...oauthErrors(400) },
        },
      },
      async (request, reply) => {
        cors(reply).header('cache-control', 'no-store');
        return reply.code(201).send(await registerClient(ctx, request.body as Record<string, unknown>));
      },
    );

    app.get(
      '/oauth/authorize',
      {
        config: publicRoute,
        schema: {
          tags,
          summary: 'Start an authorization: the browser is sent to the consent page, or back to the client with an error',
          querystring: AuthorizationQuery,
          response: {
            302: { description: "To the consent page, or to the client's redirect URI with error and state" },
            ...oauthErrors(400),
          },
        },
      },
      async (request, reply) => {
        const params = request.query as AuthorizationParams;
        try {
          await checkAuthorizationRequest(ctx, params);
        } catch (error) {
          // Only a redirect URI registered for this client is ever redirected to.
          if (error instanceof RedirectedAuthorizationError)
            return reply.code(302).header('location', error.location).header('cache-control', 'no-store').send();
          throw error;
        }
        const query = new URLSearchParams(Object.entries(params).filter(([, v]) => typeof v === 'string') as Array<[string, string]>);
        return reply.code(302).header('location', `/dashboard/oauth/authorize?${query}`).header('cache-control', 'no-store').send();
      },
    );

    app.get(
      '/oauth/authorize/request',
      {
        config: publicRoute,
        schema: {
          tags,
          summary: 'What an authorization request asks for (the consent page shows it)',
          querystring: AuthorizationQuery,
          response: { 200: AuthorizationRequestInfo, ...oauthErrors(400) },
        },
      },
      async (request) => {
        const checked = await checkAuthorizationRequest(ctx, request.query as AuthorizationParams);
        return {
          client_id: checked.client.client_id,
          client_name: checked.client.client_name,
          redirect_host: new URL(checked.redirectUri).host || new URL(checked.redirectUri).protocol,
          scope: checked.scope,
          resource: checked.resource,
        };
      },
    );

    app.post(
      '/oauth/authorize/decision',
      {
        config: publicRoute,
        bodyLimit: OAUTH_BODY_LIMIT,
        schema: {
          tags,
          summary: 'The signed-in person approves or declines an authorization request',
          body: DecisionBody,
          response: { 200: DecisionResult, ...oauthErrors(400), ...errorResponses({ 401: 'framework', 403: 'framework' }) },
        },
      },
      async (request) => {
        const session = await requireSession(ctx, request);
        const { approve, workspace_ids, granted_scope, ...params } = request.body as Static<typeof DecisionBody>;
        try {
          return { redirect_to: await decide(ctx, session.user_id, params, { approve, workspace_ids, scope: granted_scope }) };
        } catch (error) {
          if (error instanceof RedirectedAuthorizationError) return { redirect_to: error.location };
          throw error;
        }
      },
    );

    app.post(
      '/oauth/token',
      {
        config: publicRoute,
        bodyLimit: OAUTH_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Exchange a code or a refresh token for tokens',
          body: TokenBody,
          response: { 200: TokenResponseBody, ...oauthErrors(400, 401) },
        },
      },
      async (request, reply) => {
        cors(reply).headers({ 'cache-control': 'no-store', pragma: 'no-cache' });
        return exchangeToken(ctx, (request.body ?? {}) as Static<typeof TokenBody>);
      },
    );

    app.post(
      '/oauth/revoke',
      {
        config: publicRoute,
        bodyLimit: OAUTH_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Revoke a token (RFC 7009): a refresh token ends its whole authorization',
          body: RevokeBody,
          response: { 200: Revoked, ...oauthErrors(400) },
        },
      },
      async (request, reply) => {
        cors(reply);
        const body = (request.body ?? {}) as Static<typeof RevokeBody>;
        await revokeToken(ctx, body.token, body.client_id);
        return {};
      },
    );

    app.get(
      '/auth/apps',
      {
        config: publicRoute,
        schema: {
          tags: ['Dashboard sign-in'],
          summary: 'The apps the signed-in person has authorised',
          response: { 200: AuthorizedAppList, ...errorResponses({ 401: 'framework' }) },
        },
      },
      async (request: FastifyRequest) => listAuthorizedApps(ctx.db, (await requireSession(ctx, request)).user_id),
    );

    app.delete(
      '/auth/apps/:id',
      {
        config: publicRoute,
        schema: {
          tags: ['Dashboard sign-in'],
          summary: 'Revoke an authorised app (all its tokens stop working)',
          params: GrantParams,
          response: { 200: RevokedApp, ...errorResponses({ 401: 'framework', 403: 'framework', 404: 'errorMessage' }) },
        },
      },
      async (request) => {
        const session = await requireSession(ctx, request);
        const revoked = await revokeAuthorizedApp(ctx, session.user_id, (request.params as Static<typeof GrantParams>).id);
        if (!revoked) throw messageError(404, 'not_found', 'No such authorised app');
        return revoked;
      },
    );
  },
};
