// OAuth in tests without a browser: a person with a password, signed in over HTTP, approving
// authorization requests through the same decision endpoint the consent page calls.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from '../helpers/app.ts';
import { hashPassword } from '../../src/resources/users/passwords.ts';
import { newId } from '../../src/platform/ids.ts';

export const REDIRECT = 'http://127.0.0.1:8123/callback';

export interface Person {
  cookie: string;
  csrf: string;
  userId: string;
}

/** A user who is `role` in each workspace, signed in. */
export async function signedInPerson(app: TestApp, workspaces: Array<{ id: string; role: 'admin' | 'member' }>): Promise<Person> {
  const db = app.running.ctx.db;
  const email = `p-${randomBytes(4).toString('hex')}@people.test`;
  const userId = newId('usr');
  const now = new Date().toISOString();
  await db
    .insertInto('users')
    .values({ id: userId, email, password_hash: await hashPassword('correct horse battery'), created_at: now, updated_at: now })
    .execute();
  for (const w of workspaces)
    await db.insertInto('memberships').values({ user_id: userId, workspace_id: w.id, role: w.role, created_at: now }).execute();
  const response = await fetch(`${app.url}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  assert.equal(response.status, 200);
  const cookie = response.headers.get('set-cookie')!.split(';')[0];
  return { cookie, csrf: (await response.json()).csrf_token, userId };
}

export async function registerClient(app: TestApp, redirectUris = [REDIRECT]): Promise<string> {
  const response = await app.as(null).post('/oauth/register', { client_name: 'Refusal Tester', redirect_uris: redirectUris });
  assert.equal(response.status, 201, response.text);
  return response.body.client_id;
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface Authorization {
  clientId: string;
  verifier: string;
  code: string;
}

/** Approves a request as `person` and returns the code from the redirect. */
export async function authorize(
  app: TestApp,
  person: Person,
  options: { clientId?: string; resource?: string; scope?: string; granted?: 'sending' | 'full'; workspaceIds?: string[] } = {},
): Promise<Authorization> {
  const clientId = options.clientId ?? (await registerClient(app));
  const { verifier, challenge } = pkce();
  const response = await fetch(`${app.url}/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-csrf-token': person.csrf },
    body: JSON.stringify({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
      ...(options.scope ? { scope: options.scope } : {}),
      ...(options.resource ? { resource: options.resource } : {}),
      approve: true,
      workspace_ids: options.workspaceIds ?? [app.workspace.id],
      ...(options.granted ? { granted_scope: options.granted } : {}),
    }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  const code = new URL(body.redirect_to).searchParams.get('code');
  assert.ok(code, body.redirect_to);
  return { clientId, verifier, code };
}

export function tokenRequest(app: TestApp, fields: Record<string, string>) {
  return app
    .as(null)
    .request('POST', '/oauth/token', new URLSearchParams(fields).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
}

/** Authorizes and exchanges the code: the token response. */
export async function tokensFor(app: TestApp, person: Person, options: Parameters<typeof authorize>[2] = {}) {
  const auth = await authorize(app, person, options);
  const response = await tokenRequest(app, {
    grant_type: 'authorization_code',
    code: auth.code,
    redirect_uri: REDIRECT,
    client_id: auth.clientId,
    code_verifier: auth.verifier,
    ...(options.resource ? { resource: options.resource } : {}),
  });
  assert.equal(response.status, 200, response.text);
  return { ...response.body, clientId: auth.clientId } as { access_token: string; refresh_token: string; scope: string; clientId: string };
}

/** One JSON-RPC message to /mcp with `bearer`. */
export async function mcp(
  app: TestApp,
  bearer: string,
  method: string,
  params: unknown = {},
  headers: Record<string, string> = {},
  query = '',
) {
  const response = await fetch(`${app.url}/mcp${query}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}
