// The whole way an AI assistant connects, with the official MCP TypeScript SDK client (its
// Streamable HTTP transport and OAuth client provider interface, unmodified) against a running
// Postlane: discovery, dynamic registration, authorization in real Chromium (sign in, approve
// on the consent page), code exchange, tools/list, a tool call whose email arrives at the SMTP
// sink, a refresh, revocation, and the 401 after it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { launchBrowser } from '../helpers/browser.ts';
import { eventually } from '../helpers/app.ts';
import { publishRecords } from '../helpers/sending.ts';
import { newContext, signInFirstAdmin, startDashboardApp, type DashboardApp } from '../dashboard/helpers.ts';

/** What an MCP host keeps: its registration, tokens and PKCE verifier; it opens the browser where told. */
class TestOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl: string;
  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  state() {
    return 'opaque state/with?odd=chars&more';
  }
}

let app: DashboardApp;
let browser: Browser;
let page: Page;
let callback: Server;
let callbackUrl: string;
const callbacks: URL[] = [];

before(async () => {
  app = await startDashboardApp();
  browser = await launchBrowser();
  page = await (await newContext(browser)).newPage();
  // The assistant's loopback redirect listener (RFC 8252).
  callback = createServer((request, response) => {
    const url = new URL(request.url!, callbackUrl);
    if (url.pathname === '/callback') callbacks.push(url);
    response.end('You can close this window.');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  await signInFirstAdmin(page, app);
  const domain = await app.api.post('/v2/domains', { name: 'acme.test' });
  assert.equal(domain.status, 201, domain.text);
  publishRecords(app.dns, domain.body.dns_records);
  assert.equal((await app.api.post(`/v2/domains/${domain.body.id}/verify`)).status, 200);
});

after(async () => {
  await browser?.close();
  callback?.close();
  await app?.close();
});

const connect = async (provider: TestOAuthProvider) => {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
};

test('an MCP client signs in with OAuth, sends an email through a tool, refreshes, and is shut out once revoked', async () => {
  // Unauthenticated, the server says where its protected resource metadata is.
  const bare = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  assert.equal(bare.status, 401);
  assert.equal(bare.headers.get('www-authenticate'), `Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`);

  const provider = new TestOAuthProvider(callbackUrl);
  const first = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { authProvider: provider });
  await assert.rejects(new Client({ name: 'test-assistant', version: '1.0.0' }).connect(first), UnauthorizedError);
  assert.ok(provider.client?.client_id.startsWith('oac_'), 'registered dynamically');
  const authorizationUrl = provider.authorizationUrl!;
  assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${app.url}/oauth/authorize`);
  assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorizationUrl.searchParams.get('resource'), `${app.url}/mcp`);

  // The browser the assistant opens has no session yet: the person signs in on the consent page,
  // then approves; the browser lands on the assistant's loopback listener.
  const consent = await (await newContext(browser)).newPage();
  await consent.goto(authorizationUrl.toString());
  await consent.getByLabel('Email').fill('marketer@acme.test');
  await consent.getByLabel('Password').fill('correct horse battery');
  await consent.getByRole('button', { name: 'Sign in' }).click();
  await consent.getByRole('heading', { name: 'Authorize Test Assistant' }).waitFor();
  assert.match(await consent.locator('main').innerText(), /sent back to 127\.0\.0\.1:\d+/);
  assert.equal(await consent.getByRole('checkbox', { name: 'default (admin)' }).isChecked(), true);
  await consent.getByRole('button', { name: 'Approve' }).click();
  await eventually(() => Promise.resolve(callbacks.length === 1)).catch(async (error) => {
    throw new Error(`${error}: at ${consent.url()}: ${await consent.locator('body').innerText()}`);
  });
  const redirected = callbacks[0];
  assert.equal(redirected.searchParams.get('state'), 'opaque state/with?odd=chars&more', 'state comes back unchanged');
  assert.equal(redirected.searchParams.get('iss'), app.url);
  await first.finishAuth(redirected.searchParams.get('code')!);
  assert.ok(provider.saved?.access_token && provider.saved.refresh_token);
  assert.equal(provider.saved.expires_in, 900);

  const { client } = await connect(provider);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of [
    'send-email',
    'list-emails',
    'get-email',
    'list-workspaces',
    'switch-workspace',
    'create-workspace',
    'get-current-workspace',
  ])
    assert.ok(names.includes(name), name);
  assert.ok(tools.find((t) => t.name === 'list-emails')!.inputSchema.properties!.workspace, 'OAuth tools take a workspace argument');

  const current = await client.callTool({ name: 'get-current-workspace', arguments: {} });
  assert.equal((current.structuredContent as any).role, 'admin');
  assert.equal((current.structuredContent as any).scope, 'full');

  const sent = await client.callTool({
    name: 'send-email',
    arguments: { from: 'hello@acme.test', to: 'jane@example.org', subject: 'Sent by an assistant', text: 'Hello from MCP.' },
  });
  assert.equal(sent.isError, undefined, JSON.stringify(sent));
  const emailId = (sent.structuredContent as any).id ?? (sent.structuredContent as any).ids?.[0];
  assert.ok(emailId, JSON.stringify(sent.structuredContent));
  await eventually(
    () =>
      Promise.resolve(
        app.sink.messages.some((m) => m.rcptTo.includes('jane@example.org') && m.raw.toString().includes('Sent by an assistant')),
      ),
    15_000,
  );

  // The tool result is the REST answer itself.
  const viaTool = await client.callTool({ name: 'get-email', arguments: { id: emailId } });
  const viaRest = await app.api.get(`/v2/emails/${emailId}`);
  assert.equal((viaTool.structuredContent as any).id, viaRest.body.id);
  assert.equal(JSON.parse((viaTool.content as any)[0].text).id, viaRest.body.id);

  // An API error is a tool error with the API's own status and message.
  const viaRestMissing = await app.api.get('/v2/emails/em_doesnotexist000000000000000');
  const missing = await client.callTool({ name: 'get-email', arguments: { id: 'em_doesnotexist000000000000000' } });
  assert.equal(missing.isError, true);
  const problem = JSON.parse((missing.content as any)[0].text);
  assert.equal(problem.status, 404);
  assert.equal(problem.error, viaRestMissing.body.error);

  // An expired access token: the SDK refreshes with the refresh token and goes on.
  const before = provider.saved!;
  provider.saved = { ...before, access_token: 'plat_expired' };
  const again = await client.callTool({ name: 'get-current-workspace', arguments: {} });
  assert.equal(again.isError, undefined);
  assert.notEqual(provider.saved!.refresh_token, before.refresh_token, 'the refresh token rotated');
  assert.notEqual(provider.saved!.access_token, before.access_token);

  // The dashboard lists the app; revoking the refresh token ends the authorization.
  await page.goto(`${app.url}/dashboard/api-keys`);
  await page.getByRole('button', { name: 'Revoke Test Assistant' }).waitFor();
  assert.match(await page.getByRole('region', { name: 'Authorized apps' }).innerText(), /Test Assistant\s+full \(MCP\)/);
  const revoked = await fetch(`${app.url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: provider.saved!.refresh_token!, client_id: provider.client!.client_id }),
  });
  assert.equal(revoked.status, 200);
  const after = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${provider.saved!.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
  });
  assert.equal(after.status, 401);
  await assert.rejects(client.callTool({ name: 'get-current-workspace', arguments: {} }));
  await page.reload();
  await page.getByText('No app is authorized to use your account.').waitFor();
  await client.close();
});
