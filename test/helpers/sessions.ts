// Dashboard users for API tests: a user made the way `postlane user create` makes one, signed
// in by accepting the link, with a client that sends the session cookie and its CSRF token
// like the dashboard does. Every answer is held against /openapi.json (contract.ts), and a
// request that gets no answer within `timeoutMs` fails instead of hanging the test.
import assert from 'node:assert/strict';
import type { RunningPostlane } from '../../src/server.ts';
import { createUser } from '../../src/resources/users/service.ts';
import { checkAgainstContract } from './contract.ts';
import type { ApiResponse } from './app.ts';

export const PASSWORD = 'a long enough password';

export interface SignedInUser {
  userId: string;
  email: string;
  cookie: string;
  csrf: string;
  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

export async function call<T = any>(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<ApiResponse<T>> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  await checkAgainstContract(url, method, path, response.status, response.headers.get('content-type'), parsed);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** A user of `workspaceId` with `role`, signed in (a new user sets the password; one who has
 *  an account already joins with it). */
export async function signedInUser(
  app: { url: string; running: RunningPostlane },
  email: string,
  workspaceId: string,
  role: 'admin' | 'member',
): Promise<SignedInUser> {
  const created = await createUser(app.running.ctx.db, { email, workspaceId, role }, app.url);
  const accepted = created.url
    ? await call(app.url, 'POST', `/auth/invitations/${created.url.split('#')[1]}/accept`, { password: PASSWORD })
    : await call(app.url, 'POST', '/auth/sign-in', { email, password: PASSWORD });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const cookie = accepted.headers.get('set-cookie')!.split(';')[0];
  const csrf: string = accepted.body.csrf_token;
  if (accepted.body.workspace.id !== workspaceId) {
    const switched = await call(app.url, 'POST', '/auth/workspace', { workspace_id: workspaceId }, { cookie, 'x-csrf-token': csrf });
    assert.equal(switched.status, 200, JSON.stringify(switched.body));
  }
  return {
    userId: created.user.id,
    email,
    cookie,
    csrf,
    request: (method, path, body, headers = {}) =>
      call(app.url, method, path, body, { cookie, ...(method === 'GET' || method === 'HEAD' ? {} : { 'x-csrf-token': csrf }), ...headers }),
  };
}
