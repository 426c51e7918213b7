// The OAuth 2.1 authorization server over real HTTP: discovery, what it refuses (each with the
// error its RFC names, nothing written), resource-bound tokens, refresh rotation with reuse
// detection, and access tokens on the API with an API key's scope rules and the person's role.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { authorize, mcp, pkce, REDIRECT, registerClient, signedInPerson, tokenRequest, tokensFor, type Person } from './helpers.ts';

let app: TestApp;
let admin: Person;

let documents: Server;
let documentsUrl: string;
const served = new Map<string, string>();
let fetches = 0;

before(async () => {
  // Client ID metadata documents on loopback (allowed here by ALLOW_PRIVATE_URLS, as in development).
  documents = createServer((request, response) => {
    fetches++;
    const body = served.get(request.url!);
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(body ?? '{}');
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  app = await startTestApp({ env: { ALLOW_PRIVATE_URLS: 'true' } });
  admin = await signedInPerson(app, [{ id: app.workspace.id, role: 'admin' }]);
});
after(async () => {
  documents?.close();
  await app?.close();
});

const tokenRows = async () =>
  Number(
    (
      await app.running.ctx.db
        .selectFrom('oauth_tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

test('discovery documents name the endpoints, and a 401 names the resource metadata', async () => {
  const as = await app.as(null).get('/.well-known/oauth-authorization-server');
  assert.equal(as.status, 200);
  assert.equal(as.body.token_endpoint, `${app.config.publicUrl}/oauth/token`);
  assert.deepEqual(as.body.code_challenge_methods_supported, ['S256']);
  const api = await app.as(null).get('/.well-known/oauth-protected-resource');
  assert.equal(api.body.resource, app.config.publicUrl);
  const mcpMeta = await app.as(null).get('/.well-known/oauth-protected-resource/mcp');
  assert.equal(mcpMeta.body.resource, `${app.config.publicUrl}/mcp`);
  const refused = await app.as(null).get('/v2/emails');
  assert.equal(refused.status, 401);
  assert.equal(
    refused.headers.get('www-authenticate'),
    `Bearer resource_metadata="${app.config.publicUrl}/.well-known/oauth-protected-resource"`,
  );
});

test('authorization requests: plain PKCE, a missing challenge, an unregistered redirect or client are refused without an open redirect', async () => {
  const clientId = await registerClient(app);
  const { challenge } = pkce();
  const base = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's 1',
  };
  const go = (params: Record<string, string>) => fetch(`${app.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });

  const fine = await go(base);
  assert.equal(fine.status, 302);
  assert.match(fine.headers.get('location')!, /^\/dashboard\/oauth\/authorize\?/);

  for (const [params, description] of [
    [{ ...base, code_challenge_method: 'plain' }, /S256/],
    [{ ...base, code_challenge: '' }, /code_challenge is required/],
  ] as const) {
    const response = await go(params as Record<string, string>);
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get('location')!);
    assert.equal(location.origin + location.pathname, REDIRECT);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.match(location.searchParams.get('error_description')!, description);
    assert.equal(location.searchParams.get('state'), 's 1');
  }
  // A loopback redirect may use any port (RFC 8252); any other difference is refused, never followed.
  assert.equal((await go({ ...base, redirect_uri: 'http://127.0.0.1:9999/callback' })).status, 302);
  for (const redirect of ['https://evil.example/callback', 'http://127.0.0.1:8123/other', `${REDIRECT}?x=1`]) {
    const response = await go({ ...base, redirect_uri: redirect });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
    assert.equal((await response.json()).error, 'invalid_request');
  }
  const unknown = await go({ ...base, client_id: 'oac_unknown' });
  assert.equal(unknown.status, 400);
  assert.equal((await unknown.json()).error, 'invalid_client');
  // Registration refuses a redirect URI that is neither https nor loopback.
  const bad = await app.as(null).post('/oauth/register', { redirect_uris: ['http://example.com/cb'] });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'invalid_redirect_uri');
});

test('the code exchange refuses a wrong or missing verifier, another redirect URI, and a reused code, writing nothing', async () => {
  const auth = await authorize(app, admin);
  const fields = {
    grant_type: 'authorization_code',
    code: auth.code,
    redirect_uri: REDIRECT,
    client_id: auth.clientId,
    code_verifier: auth.verifier,
  };
  const before = await tokenRows();
  const wrong = await tokenRequest(app, { ...fields, code_verifier: pkce().verifier });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, 'invalid_grant');
  const missing = await tokenRequest(app, { ...fields, code_verifier: '' });
  assert.equal(missing.body.error, 'invalid_request');
  const otherRedirect = await tokenRequest(app, { ...fields, redirect_uri: 'http://127.0.0.1:8123/elsewhere' });
  assert.equal(otherRedirect.body.error, 'invalid_grant');
  const otherResource = await tokenRequest(app, { ...fields, resource: `${app.config.publicUrl}/mcp` });
  assert.equal(otherResource.body.error, 'invalid_target');
  assert.equal(await tokenRows(), before, 'nothing written');

  const ok = await tokenRequest(app, fields);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('cache-control'), 'no-store');
  assert.equal((await app.as(ok.body.access_token).get('/v2/emails')).status, 200);
  const reused = await tokenRequest(app, fields);
  assert.equal(reused.body.error, 'invalid_grant');
  // The reuse revokes what the code gave the first time.
  assert.equal((await app.as(ok.body.access_token).get('/v2/emails')).status, 401);
});

test('a token opens only the resource it was issued for', async () => {
  const apiToken = await tokensFor(app, admin);
  const mcpToken = await tokensFor(app, admin, { resource: `${app.config.publicUrl}/mcp` });
  assert.equal((await app.as(apiToken.access_token).get('/v2/emails')).status, 200);
  assert.equal((await app.as(apiToken.access_token).get('/v1/events')).status, 200, 'the legacy API too');
  const refusedMcp = await mcp(app, apiToken.access_token, 'tools/list');
  assert.equal(refusedMcp.status, 401);
  assert.match(refusedMcp.headers.get('www-authenticate')!, /oauth-protected-resource\/mcp"/);
  assert.equal((await app.as(mcpToken.access_token).get('/v2/emails')).status, 401);
  assert.equal((await mcp(app, mcpToken.access_token, 'tools/list')).status, 200);
});

test('refresh tokens rotate; a replayed one revokes the whole family', async () => {
  const first = await tokensFor(app, admin);
  const refresh = (token: string) => tokenRequest(app, { grant_type: 'refresh_token', refresh_token: token, client_id: first.clientId });
  const second = await refresh(first.refresh_token);
  assert.equal(second.status, 200);
  assert.notEqual(second.body.refresh_token, first.refresh_token);
  assert.equal((await app.as(second.body.access_token).get('/v2/emails')).status, 200);
  const replay = await refresh(first.refresh_token);
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  assert.equal((await app.as(second.body.access_token).get('/v2/emails')).status, 401, 'the family is revoked');
  assert.equal((await refresh(second.body.refresh_token)).body.error, 'invalid_grant');
});

test("a sending token has a sending key's reach; a member's token a member's", async () => {
  const sending = await tokensFor(app, admin, { granted: 'sending' });
  assert.equal(sending.scope, 'sending');
  const list = await app.as(sending.access_token).get('/v2/emails');
  assert.equal(list.status, 403);
  assert.match(list.body.message, /"full" permission/);

  const member = await signedInPerson(app, [{ id: app.workspace.id, role: 'member' }]);
  const memberToken = await tokensFor(app, member);
  assert.equal((await app.as(memberToken.access_token).get('/v2/emails')).status, 200);
  const invitations = await app.as(memberToken.access_token).get('/v2/invitations');
  assert.equal(invitations.status, 403);
  // A person can grant only workspaces they belong to.
  const other = await app.newWorkspace();
  const response = await fetch(`${app.url}/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: member.cookie, 'x-csrf-token': member.csrf },
    body: JSON.stringify({
      response_type: 'code',
      client_id: sending.clientId,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      approve: true,
      workspace_ids: [other.workspace.id],
    }),
  });
  assert.equal(response.status, 400);
  assert.equal((await response.json()).error, 'invalid_request');
});

test('a client ID metadata document names a client: fetched once, checked, size-bounded', async () => {
  const clientId = `${documentsUrl}/client.json`;
  served.set('/client.json', JSON.stringify({ client_id: clientId, client_name: 'Hosted Metadata App', redirect_uris: [REDIRECT] }));
  served.set(
    '/liar.json',
    JSON.stringify({ client_id: 'https://someone.else/client.json', client_name: 'Liar', redirect_uris: [REDIRECT] }),
  );
  served.set(
    '/huge.json',
    JSON.stringify({ client_id: `${documentsUrl}/huge.json`, client_name: 'x'.repeat(20_000), redirect_uris: [REDIRECT] }),
  );
  const { challenge } = pkce();
  const info = (id: string) =>
    app
      .as(null)
      .get(
        `/oauth/authorize/request?${new URLSearchParams({ response_type: 'code', client_id: id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' })}`,
      );
  const shown = await info(clientId);
  assert.equal(shown.status, 200, shown.text);
  assert.equal(shown.body.client_name, 'Hosted Metadata App');
  assert.equal(shown.body.redirect_host, '127.0.0.1:8123');
  const before = fetches;
  const tokens = await tokensFor(app, admin, { clientId });
  assert.equal((await app.as(tokens.access_token).get('/v2/emails')).status, 200);
  assert.equal(fetches, before, 'the document is cached');
  for (const id of [`${documentsUrl}/liar.json`, `${documentsUrl}/huge.json`, `${documentsUrl}/missing.json`]) {
    const refused = await info(id);
    assert.equal(refused.status, 400, id);
    assert.equal(refused.body.error, 'invalid_client', id);
  }
});

test('a person lists the apps they authorised and revokes one: its tokens stop working', async () => {
  const tokens = await tokensFor(app, admin);
  const session = { cookie: admin.cookie, 'x-csrf-token': admin.csrf };
  const listed = await app.as(null).get('/auth/apps', session);
  assert.equal(listed.status, 200);
  const grant = listed.body.data.find((a: any) => a.client_id === tokens.clientId);
  assert.equal(grant.name, 'Refusal Tester');
  const someoneElse = await signedInPerson(app, [{ id: app.workspace.id, role: 'admin' }]);
  assert.equal(
    (await app.as(null).delete(`/auth/apps/${grant.id}`, { cookie: someoneElse.cookie, 'x-csrf-token': someoneElse.csrf })).status,
    404,
  );
  assert.equal((await app.as(tokens.access_token).get('/v2/emails')).status, 200);
  const revoked = await app.as(null).delete(`/auth/apps/${grant.id}`, session);
  assert.equal(revoked.status, 200);
  assert.equal((await app.as(tokens.access_token).get('/v2/emails')).status, 401);
  assert.equal(
    (await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId })).body.error,
    'invalid_grant',
  );
});
