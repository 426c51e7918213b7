// Request and response schemas of the OAuth 2.1 authorization server and the dashboard's list
// of authorised apps.
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });
const urls = (description: string) => Type.Array(Type.String(), { description });

/** `{error, error_description}` (RFC 6749 §5.2). */
export const OAuthErrorBody = Type.Object(
  {
    error: text('OAuth error code (invalid_request, invalid_grant, invalid_client, invalid_target, …)'),
    error_description: text('What went wrong, for a person'),
  },
  { title: 'OAuthError', additionalProperties: true },
);

export const AuthorizationServerMetadata = Type.Object(
  {
    issuer: text('Issuer identifier'),
    authorization_endpoint: text('Where the browser is sent'),
    token_endpoint: text('Code and refresh token exchange'),
    registration_endpoint: text('Dynamic client registration (RFC 7591)'),
    revocation_endpoint: text('Token revocation (RFC 7009)'),
    response_types_supported: urls('Always ["code"]'),
    grant_types_supported: urls('authorization_code and refresh_token'),
    code_challenge_methods_supported: urls('Always ["S256"]'),
    token_endpoint_auth_methods_supported: urls('Always ["none"]: clients are public and use PKCE'),
    revocation_endpoint_auth_methods_supported: urls('Always ["none"]'),
    scopes_supported: urls('sending and full'),
    client_id_metadata_document_supported: Type.Boolean({
      description: 'A client_id may be the https URL of a client ID metadata document',
    }),
    authorization_response_iss_parameter_supported: Type.Boolean({ description: 'The redirect carries iss (RFC 9207)' }),
  },
  { title: 'AuthorizationServerMetadata' },
);

export const ProtectedResourceMetadata = Type.Object(
  {
    resource: text('The resource identifier to ask tokens for (RFC 8707)'),
    resource_name: text('Its name'),
    authorization_servers: urls('Issuers that grant tokens for it'),
    scopes_supported: urls('sending and full'),
    bearer_methods_supported: urls('Always ["header"]'),
  },
  { title: 'ProtectedResourceMetadata' },
);

export const RegistrationBody = Type.Object(
  {
    redirect_uris: Type.Array(Type.String(), { description: 'Exact redirect URIs (https, loopback http on any port, or an app scheme)' }),
    client_name: Type.Optional(text('Shown to the person on the consent page')),
    grant_types: Type.Optional(Type.Array(Type.String())),
    response_types: Type.Optional(Type.Array(Type.String())),
    token_endpoint_auth_method: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const RegisteredClient = Type.Object(
  {
    client_id: text('The new client ID'),
    client_id_issued_at: Type.Integer({ description: 'Seconds since the epoch' }),
    client_name: text('Name'),
    redirect_uris: urls('Registered redirect URIs'),
    grant_types: urls('authorization_code, refresh_token'),
    response_types: urls('code'),
    token_endpoint_auth_method: text('none'),
  },
  { title: 'RegisteredClient' },
);

const authorizationFields = {
  response_type: Type.Optional(text('code')),
  client_id: Type.Optional(text('A registered client ID or the URL of a client ID metadata document')),
  redirect_uri: Type.Optional(text("One of the client's redirect URIs")),
  code_challenge: Type.Optional(text('PKCE S256 challenge')),
  code_challenge_method: Type.Optional(text('S256')),
  state: Type.Optional(text('Returned unchanged')),
  scope: Type.Optional(text('sending or full')),
  resource: Type.Optional(text('The API (PUBLIC_URL) or the MCP server (PUBLIC_URL/mcp)')),
};

export const AuthorizationQuery = Type.Object(authorizationFields);

export const AuthorizationRequestInfo = Type.Object(
  {
    client_id: text('The client'),
    client_name: text("The client's name"),
    redirect_host: text('Where the browser returns'),
    scope: text('The widest scope the app asked for'),
    resource: Type.Union([Type.Literal('api'), Type.Literal('mcp')], { description: 'What the token will open' }),
  },
  { title: 'AuthorizationRequestInfo' },
);

export const DecisionBody = Type.Object({
  ...authorizationFields,
  approve: Type.Boolean({ description: 'true to grant access, false to decline' }),
  workspace_ids: Type.Optional(
    Type.Array(Type.String(), { maxItems: 100, description: 'The workspaces the app may use (the first is its default)' }),
  ),
  granted_scope: Type.Optional(Type.Union([Type.Literal('sending'), Type.Literal('full')])),
});

export const DecisionResult = Type.Object({ redirect_to: text('Where the browser goes next') }, { title: 'AuthorizationDecision' });

export const TokenBody = Type.Object(
  {
    grant_type: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
    redirect_uri: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    code_verifier: Type.Optional(Type.String()),
    refresh_token: Type.Optional(Type.String()),
    resource: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const TokenResponseBody = Type.Object(
  {
    access_token: text('Bearer token for 15 minutes'),
    token_type: Type.Literal('Bearer', { description: 'Always Bearer' }),
    expires_in: Type.Integer({ description: 'Seconds' }),
    refresh_token: text('Single use: each refresh returns a new one'),
    scope: text('sending or full'),
  },
  { title: 'TokenResponse' },
);

export const RevokeBody = Type.Object(
  { token: Type.Optional(Type.String()), token_type_hint: Type.Optional(Type.String()), client_id: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

export const Revoked = Type.Object({}, { title: 'Revoked', description: 'Always empty' });

const AuthorizedApp = Type.Object(
  {
    object: Type.Literal('authorized_app', { description: 'Always authorized_app' }),
    id: text('The grant'),
    client_id: text('The app'),
    name: text("The app's name"),
    scope: text('sending or full'),
    resource: text('api or mcp'),
    workspace_ids: urls('Workspaces it may use'),
    created_at: text('When it was approved'),
    last_used_at: nullable(text('When a token was last used')),
  },
  { title: 'AuthorizedApp' },
);

export const AuthorizedAppList = Type.Object(
  { data: Type.Array(AuthorizedApp, { description: 'Newest first' }) },
  { title: 'AuthorizedAppList' },
);
export const RevokedApp = Type.Object(
  {
    object: Type.Literal('authorized_app', { description: 'Always authorized_app' }),
    id: text('The grant'),
    revoked: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'RevokedApp' },
);
export const GrantParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
