// People, sessions and their boundaries, over real HTTP: sign-in and its rate limits, the
// session cookie and its CSRF token, a session never as an API key and a key never as a
// session, workspace switching and isolation, invitations mailed through the delivery path,
// sign-out everywhere, the `postlane user create` command and the first start's printed link.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { databaseUrlOf, eventually, freePort, freshDatabase, startChildApp, urlWithSchema } from '../helpers/app.ts';
import { startDashboardApp, type DashboardApp } from './helpers.ts';
import { createWorkspace } from '../../src/resources/workspaces/service.ts';
import { createUser } from '../../src/resources/users/service.ts';
import { SIGN_IN_PER_ACCOUNT, SIGN_IN_PER_DEVICE, SIGN_IN_PER_IP } from '../../src/resources/users/sessions.ts';
import { request as httpRequest } from 'node:http';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';

let app: DashboardApp;

before(async () => {
  app = await startDashboardApp();
});
after(async () => {
  await app?.close();
});

interface Browserish {
  cookie: string;
  csrf: string;
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body: parsed as any, headers: response.headers };
}

/** A user made by the CLI's service, who accepts the link and so is signed in. */
async function newUser(
  email: string,
  workspaceId: string,
  role: 'admin' | 'member' = 'member',
  password = 'a long enough password',
): Promise<Browserish> {
  const created = await createUser(app.running.ctx.db, { email, workspaceId, role }, app.url);
  const token = created.url!.split('#')[1];
  const accepted = await call('POST', `/auth/invitations/${token}/accept`, { password });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  return sessionFrom(accepted);
}

function sessionFrom(response: { headers: Headers; body: any }): Browserish {
  const cookie = response.headers.get('set-cookie')!.split(';')[0];
  const csrf = response.body.csrf_token;
  return {
    cookie,
    csrf,
    request: (method, path, body, headers = {}) =>
      call(method, path, body, { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': csrf }), ...headers }),
  };
}

async function signIn(email: string, password: string) {
  return call('POST', '/auth/sign-in', { email, password });
}

/** A request from another client: its connection leaves from `source`, another loopback address (request.ip; no proxy is trusted). */
function callFrom(source: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const req = httpRequest(
      `${app.url}${path}`,
      { method, localAddress: source, agent: false, headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The device cookie a successful sign-in leaves (`name=value`), from its Set-Cookie headers. */
function deviceCookieOf(setCookies: string[]): string {
  const device = setCookies.find((c) => c.startsWith('postlane_device='));
  assert.ok(device, `a device cookie among ${JSON.stringify(setCookies)}`);
  assert.match(
    device,
    /^postlane_device=usr_\w+\.[\w-]{22}\.[\w-]{43}; Path=\/auth\/sign-in; HttpOnly; SameSite=Strict; Max-Age=31536000$/,
  );
  return device.split(';')[0];
}

/** The `proof` for a 429 challenge_required: its challenge, solved as the dashboard solves it. */
async function solved(challenge: { parameters: Record<string, unknown>; signature?: string }) {
  const solution = await solveChallenge({ challenge: challenge as never, deriveKey });
  assert.ok(solution, 'the challenge was solved');
  return { challenge, solution: { counter: solution.counter, derivedKey: solution.derivedKey } };
}

test("the session cookie is HttpOnly and SameSite=Strict, and opens /v2 for the session's workspace", async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'cookie-co', verified: true });
  const created = await createUser(app.running.ctx.db, { email: 'cookie@example.org', workspaceId: workspace.id, role: 'admin' }, app.url);
  const token = created.url!.split('#')[1];
  const info = await call('GET', `/auth/invitations/${token}`);
  assert.deepEqual(info.body, { email: 'cookie@example.org', role: 'admin', workspace_name: 'cookie-co', has_password: false });
  const accepted = await call('POST', `/auth/invitations/${token}/accept`, { password: 'short' });
  assert.equal(accepted.status, 400);
  assert.equal(accepted.body.error, 'The password must have at least 10 characters');

  const ok = await call('POST', `/auth/invitations/${token}/accept`, { password: 'a long enough password' });
  assert.equal(ok.status, 200);
  const setCookie = ok.headers.get('set-cookie')!;
  assert.match(setCookie, /^postlane_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
  const user = sessionFrom(ok);
  const created2 = await user.request('POST', '/v2/api-keys', { name: 'made in the dashboard' });
  assert.equal(created2.status, 201);
  const keys = await user.request('GET', '/v2/api-keys');
  assert.deepEqual(keys.body.data.map((k: any) => k.name).sort(), ['Default key', 'made in the dashboard']);
  // The link worked once.
  assert.equal((await call('POST', `/auth/invitations/${token}/accept`, { password: 'a long enough password' })).status, 404);
});

test("sign-in refuses a wrong password in the API's words; after too many, unknown browsers must solve a challenge", async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'limits', verified: true });
  await newUser('limited@example.org', workspace.id);
  const wrong = await signIn('limited@example.org', 'not the password');
  assert.equal(wrong.status, 401);
  assert.deepEqual(wrong.body, { error: 'invalid_credentials', message: 'Wrong email or password' });
  assert.equal(wrong.headers.get('set-cookie'), null, 'no device cookie without a sign-in');
  const unknown = await signIn('nobody@example.org', 'whatever it is');
  assert.deepEqual(unknown.body, wrong.body, 'an unknown address is answered like a wrong password');
  for (let i = 1; i < SIGN_IN_PER_ACCOUNT; i++) assert.equal((await signIn('limited@example.org', 'still not it')).status, 401);
  const asked = await signIn('limited@example.org', 'a long enough password');
  assert.equal(asked.status, 429);
  assert.equal(asked.body.error, 'challenge_required');
  assert.equal(
    asked.body.message,
    'Too many failed sign-ins for this account from unknown browsers: solve the challenge and send it as proof with the attempt',
  );
  assert.equal(asked.body.challenge.parameters.algorithm, 'SHA-256');
  // An unknown address gets the same treatment after as many failures: the answer tells no one which accounts exist.
  for (let i = 1; i < SIGN_IN_PER_ACCOUNT; i++) await signIn('nobody@example.org', 'whatever it is');
  assert.equal((await signIn('nobody@example.org', 'whatever it is')).body.error, 'challenge_required');
  // Solved, the right password gets in; a wrong one is still just wrong.
  const proof = await solved(asked.body.challenge);
  const forged = {
    ...proof,
    solution: { ...proof.solution, derivedKey: proof.solution.derivedKey.replace(/^./, (c) => (c === '0' ? '1' : '0')) },
  };
  assert.equal(
    (await call('POST', '/auth/sign-in', { email: 'limited@example.org', password: 'a long enough password', proof: forged })).body.error,
    'challenge_required',
  );
  const signedIn = await call('POST', '/auth/sign-in', { email: 'limited@example.org', password: 'a long enough password', proof });
  assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
  const replay = await call('POST', '/auth/sign-in', { email: 'limited@example.org', password: 'a long enough password', proof });
  assert.equal(replay.status, 429);
  assert.match(replay.body.message, /^That challenge was used already/);
});

test('a flood of wrong passwords from another address never locks the owner out; that address is throttled', async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'flooded', verified: true });
  await newUser('owner@example.org', workspace.id);
  const own = await call('POST', '/auth/sign-in', { email: 'owner@example.org', password: 'a long enough password' });
  assert.equal(own.status, 200);
  const device = deviceCookieOf(own.headers.getSetCookie());

  // The attacker, at 127.0.0.2: wrong, wrong…, then challenges, then the address is refused outright.
  const statuses: string[] = [];
  let last: Awaited<ReturnType<typeof callFrom>> | null = null;
  for (let i = 0; i < SIGN_IN_PER_IP + 5; i++) {
    last = await callFrom('127.0.0.2', 'POST', '/auth/sign-in', { email: 'owner@example.org', password: `guess ${i}` });
    statuses.push(last.status === 429 ? last.body.error : String(last.status));
  }
  assert.deepEqual(statuses, [
    ...Array(SIGN_IN_PER_ACCOUNT).fill('401'),
    ...Array(SIGN_IN_PER_IP - SIGN_IN_PER_ACCOUNT).fill('challenge_required'),
    ...Array(5).fill('too_many_attempts'),
  ]);
  assert.ok(Number(last!.headers['retry-after']) > 0);
  assert.match(last!.body.message, /^Too many sign-in attempts; try again in \d+ seconds$/);

  // The owner's browser, with its device cookie, signs in at once: from its own address, and even from the attacker's.
  const mine = await call('POST', '/auth/sign-in', { email: 'owner@example.org', password: 'a long enough password' }, { cookie: device });
  assert.equal(mine.status, 200, JSON.stringify(mine.body));
  const shared = await callFrom(
    '127.0.0.2',
    'POST',
    '/auth/sign-in',
    { email: 'owner@example.org', password: 'a long enough password' },
    { cookie: device },
  );
  assert.equal(shared.status, 200, JSON.stringify(shared.body));

  // A new browser of the owner's (no device cookie, at 127.0.0.3) is asked for proof of work, not refused.
  const fresh = await callFrom('127.0.0.3', 'POST', '/auth/sign-in', { email: 'owner@example.org', password: 'a long enough password' });
  assert.equal(fresh.status, 429);
  assert.equal(fresh.body.error, 'challenge_required');
  const admitted = await callFrom('127.0.0.3', 'POST', '/auth/sign-in', {
    email: 'owner@example.org',
    password: 'a long enough password',
    proof: await solved(fresh.body.challenge),
  });
  assert.equal(admitted.status, 200, JSON.stringify(admitted.body));
  // …while a solved challenge does not lift the attacker's address limit.
  const stillRefused = await callFrom('127.0.0.2', 'POST', '/auth/sign-in', {
    email: 'owner@example.org',
    password: 'guess',
    proof: await solved(fresh.body.challenge),
  });
  assert.equal(stillRefused.body.error, 'too_many_attempts');
});

test('wrong passwords sent all at once from many addresses are all counted: no more than the limit are tried', async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'burst', verified: true });
  await newUser('burst@example.org', workspace.id);
  const answers = await Promise.all(
    Array.from({ length: 3 * SIGN_IN_PER_ACCOUNT }, (_, i) =>
      callFrom(`127.0.1.${i + 1}`, 'POST', '/auth/sign-in', { email: 'burst@example.org', password: `guess ${i}` }),
    ),
  );
  const tally = answers.reduce<Record<string, number>>(
    (t, a) => (
      (t[a.status === 429 ? a.body.error : String(a.status)] = (t[a.status === 429 ? a.body.error : String(a.status)] ?? 0) + 1), t
    ),
    {},
  );
  assert.deepEqual(tally, { 401: SIGN_IN_PER_ACCOUNT, challenge_required: 2 * SIGN_IN_PER_ACCOUNT });
});

test('failures with a device cookie lock out that cookie only; a cookie of another user or a forged one counts for nothing', async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'devices', verified: true });
  await newUser('laptop@example.org', workspace.id);
  await newUser('other@example.org', workspace.id);
  const signedIn = await callFrom('127.0.0.4', 'POST', '/auth/sign-in', {
    email: 'laptop@example.org',
    password: 'a long enough password',
  });
  const device = deviceCookieOf(signedIn.headers['set-cookie'] as string[]);
  for (let i = 0; i < SIGN_IN_PER_DEVICE; i++)
    assert.equal(
      (await callFrom('127.0.0.4', 'POST', '/auth/sign-in', { email: 'laptop@example.org', password: 'typo' }, { cookie: device })).status,
      401,
    );
  const locked = await callFrom(
    '127.0.0.4',
    'POST',
    '/auth/sign-in',
    { email: 'laptop@example.org', password: 'a long enough password' },
    { cookie: device },
  );
  assert.equal(locked.status, 429);
  assert.equal(locked.body.error, 'too_many_attempts');
  // Those failures were this browser's: the account asks no one else for a challenge.
  assert.equal(
    (await callFrom('127.0.0.5', 'POST', '/auth/sign-in', { email: 'laptop@example.org', password: 'a long enough password' })).status,
    200,
  );

  // Another user's cookie, or a tampered one, makes an attempt untrusted: counted per address and per account.
  const otherDevice = deviceCookieOf(
    (await callFrom('127.0.0.6', 'POST', '/auth/sign-in', { email: 'other@example.org', password: 'a long enough password' })).headers[
      'set-cookie'
    ] as string[],
  );
  const tampered = device.replace(/usr_\w+/, otherDevice.split('=')[1].split('.')[0]);
  for (const cookie of [otherDevice, tampered]) {
    for (let i = 0; i < SIGN_IN_PER_ACCOUNT; i++)
      await callFrom(
        '127.0.0.7',
        'POST',
        '/auth/sign-in',
        { email: `victim-${cookie.length}@example.org`, password: 'nope nope' },
        { cookie },
      );
    const asked = await callFrom(
      '127.0.0.7',
      'POST',
      '/auth/sign-in',
      { email: `victim-${cookie.length}@example.org`, password: 'nope nope' },
      { cookie },
    );
    assert.equal(asked.body.error, 'challenge_required');
  }
});

test('state changes need the CSRF token and the same origin; reads need only the cookie', async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'csrf-co', verified: true });
  const user = await newUser('csrf@example.org', workspace.id, 'admin');
  const noToken = await call('POST', '/v2/api-keys', { name: 'x' }, { cookie: user.cookie });
  assert.equal(noToken.status, 403);
  assert.equal(noToken.body.message, 'Missing or wrong CSRF token (X-CSRF-Token)');
  const wrongToken = await call('POST', '/v2/api-keys', { name: 'x' }, { cookie: user.cookie, 'x-csrf-token': 'guess' });
  assert.equal(wrongToken.status, 403);
  const otherOrigin = await user.request('POST', '/v2/api-keys', { name: 'x' }, { origin: 'http://evil.example' });
  assert.equal(otherOrigin.status, 403);
  assert.equal(otherOrigin.body.message, 'Cross-origin requests may not change anything');
  const crossSite = await user.request('POST', '/v2/api-keys', { name: 'x' }, { 'sec-fetch-site': 'cross-site' });
  assert.equal(crossSite.status, 403);
  const signInFromElsewhere = await call(
    'POST',
    '/auth/sign-in',
    { email: 'csrf@example.org', password: 'a long enough password' },
    { origin: 'http://evil.example' },
  );
  assert.equal(signInFromElsewhere.status, 403);
  const keys = await user.request('GET', '/v2/api-keys');
  assert.deepEqual(
    keys.body.data.map((k: any) => k.name),
    ['Default key'],
    'nothing was created',
  );
  const sameOrigin = await user.request('POST', '/v2/api-keys', { name: 'x' }, { origin: app.url });
  assert.equal(sameOrigin.status, 201);
});

test('a session never works as an API key, and an API key never opens a session', async () => {
  const { workspace, apiKey } = await createWorkspace(app.running.ctx.db, { name: 'split', verified: true });
  const user = await newUser('split@example.org', workspace.id, 'admin');
  const sessionId = user.cookie.split('=')[1];
  assert.equal((await call('GET', '/v2/api-keys', undefined, { authorization: `Bearer ${sessionId}` })).status, 401);
  assert.equal((await call('GET', '/v2/api-keys', undefined, { authorization: `Bearer secret_${sessionId}` })).status, 401);
  assert.equal((await call('GET', '/auth/session', undefined, { authorization: `Bearer ${apiKey}` })).status, 401);
  assert.equal((await call('GET', '/auth/session', undefined, { cookie: `postlane_session=${apiKey}` })).status, 401);
  // With an Authorization header the cookie is not even looked at: a wrong key fails even
  // beside a valid session.
  assert.equal((await call('GET', '/v2/api-keys', undefined, { cookie: user.cookie, authorization: 'Bearer secret_wrong' })).status, 401);
  assert.equal((await call('GET', '/v2/api-keys', undefined, { cookie: user.cookie, authorization: `Bearer ${apiKey}` })).status, 200);
});

test("a member of workspace A never sees workspace B; switching works only between one's own workspaces", async () => {
  const a = await createWorkspace(app.running.ctx.db, { name: 'A corp', verified: true });
  const b = await createWorkspace(app.running.ctx.db, { name: 'B corp', verified: true });
  const bApi = (path: string, body: unknown) => call('POST', path, body, { authorization: `Bearer ${b.apiKey}` });
  assert.equal((await bApi('/v2/suppressions', { email: 'secret-of-b@example.org' })).status, 201);
  const member = await newUser('member-a@example.org', a.workspace.id);

  const session = await member.request('GET', '/auth/session');
  assert.deepEqual(
    session.body.workspaces.map((w: any) => w.name),
    ['A corp'],
  );
  assert.deepEqual((await member.request('GET', '/v2/suppressions')).body.data, []);
  const sw = await member.request('POST', '/auth/workspace', { workspace_id: b.workspace.id });
  assert.equal(sw.status, 404);
  assert.deepEqual((await member.request('GET', '/v2/suppressions')).body.data, []);
  const bSuppression = (await call('GET', '/v2/suppressions', undefined, { authorization: `Bearer ${b.apiKey}` })).body.data[0];
  assert.equal((await member.request('GET', `/v2/suppressions/${bSuppression.id}`)).status, 404);

  // Invited to B too, the same user can switch, and then sees B only.
  const invited = await call('POST', '/v2/invitations', { email: 'member-a@example.org' }, { authorization: `Bearer ${b.apiKey}` });
  assert.equal(invited.status, 201);
  const token = invited.body.url.split('#')[1];
  assert.equal((await call('GET', `/auth/invitations/${token}`)).body.has_password, true);
  assert.equal((await call('POST', `/auth/invitations/${token}/accept`, { password: 'wrong password!' })).status, 401);
  assert.equal((await call('POST', `/auth/invitations/${token}/accept`, { password: 'a long enough password' })).status, 200);
  const switched = await member.request('POST', '/auth/workspace', { workspace_id: b.workspace.id });
  assert.equal(switched.status, 200);
  assert.equal(switched.body.workspace.name, 'B corp');
  assert.deepEqual(
    (await member.request('GET', '/v2/suppressions')).body.data.map((s: any) => s.email),
    ['secret-of-b@example.org'],
  );
});

test("members cannot manage people; admins invite by email, delivered through Postlane's own mail path", async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'Invite Co', verified: true });
  const admin = await newUser('boss@example.org', workspace.id, 'admin');
  const member = await newUser('staff@example.org', workspace.id, 'member');
  const refused = await member.request('POST', '/v2/invitations', { email: 'new@example.org' });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'admin_role_required');
  assert.equal((await member.request('DELETE', `/v2/members/${(await admin.request('GET', '/auth/session')).body.user.id}`)).status, 403);

  const invited = await admin.request('POST', '/v2/invitations', { email: 'new@example.org', role: 'member' });
  assert.equal(invited.status, 201);
  const mail = await eventually(async () => app.sink.messages.find((m) => m.rcptTo.includes('new@example.org')), 15_000);
  const body = mail.raw.toString('utf8');
  assert.match(body, /Invite Co/);
  assert.ok(body.replace(/=\r\n/g, '').includes(invited.body.url.split('#')[1]), 'the mailed link carries the token');
  assert.deepEqual(
    (await admin.request('GET', '/v2/invitations')).body.data.map((i: any) => i.email),
    ['new@example.org'],
  );
  assert.equal((await admin.request('POST', '/v2/invitations', { email: 'staff@example.org' })).status, 409);

  // The last admin stays an admin.
  const adminId = (await admin.request('GET', '/auth/session')).body.user.id;
  const demote = await admin.request('POST', `/v2/members/${adminId}`, { role: 'member' });
  assert.equal(demote.status, 400);
  assert.equal(demote.body.error, 'A workspace keeps at least one admin');
  const members = (await admin.request('GET', '/v2/members')).body.data;
  assert.deepEqual(
    members.map((m: any) => [m.email, m.role]),
    [
      ['boss@example.org', 'admin'],
      ['staff@example.org', 'member'],
    ],
  );
});

test('sign-out ends this session; sign-out everywhere ends them all', async () => {
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'signout', verified: true });
  const first = await newUser('leaver@example.org', workspace.id);
  const second = sessionFrom(await signIn('leaver@example.org', 'a long enough password'));
  const third = sessionFrom(await signIn('leaver@example.org', 'a long enough password'));
  const out = await first.request('POST', '/auth/sign-out');
  assert.equal(out.status, 200);
  assert.match(out.headers.get('set-cookie')!, /Max-Age=0/);
  assert.equal((await first.request('GET', '/v2/suppressions')).status, 401);
  assert.equal((await second.request('GET', '/v2/suppressions')).status, 200);
  const everywhere = await second.request('POST', '/auth/sign-out-everywhere');
  assert.deepEqual(everywhere.body, { signed_out: true, sessions: 2 });
  assert.equal((await third.request('GET', '/v2/suppressions')).status, 401);
  assert.equal((await third.request('GET', '/auth/session')).status, 401);
});

test('the overview counts sends, deliveries and bounces per day, and shows credits and limits', async () => {
  const stats = await app.api.get('/v2/stats/emails?days=7');
  assert.equal(stats.status, 200);
  assert.equal(stats.body.data.length, 7);
  assert.equal(stats.body.to, new Date().toISOString().slice(0, 10));
  const workspace = await app.api.get('/v2/workspace');
  assert.equal(workspace.body.name, 'default');
  assert.equal(workspace.body.daily_limit, 5000);
  assert.equal((await app.api.get('/v2/stats/emails?days=91')).status, 400);
});

test('/ leads to the dashboard, served with its security headers and compressed', async () => {
  const root = await call('GET', '/');
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/dashboard/');
  for (const path of ['/dashboard/', '/dashboard', '/dashboard/emails/em_123']) {
    const page = await fetch(`${app.url}${path}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
    assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    const html = await page.text();
    assert.match(html, /<script type="module" src="\/dashboard\/assets\/app-[A-Z0-9]+\.js"><\/script>/);
  }
  const html = await (await fetch(`${app.url}/dashboard/`)).text();
  const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1];
  const asset = await fetch(`${app.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('cache-control')!, /immutable/);
  assert.equal(asset.headers.get('content-encoding'), 'gzip');
  // The whole initial script, compressed as served, stays under 200 kB.
  assert.ok(
    Number(asset.headers.get('content-length')) < 200 * 1024,
    `initial JavaScript is ${asset.headers.get('content-length')} bytes gzipped`,
  );
  assert.equal((await fetch(`${app.url}/dashboard/assets/nope.js`)).status, 404);
});

test('`postlane user create` prints a link to set the password; the first start prints its set-up link', async () => {
  const root = join(import.meta.dirname, '..', '..');
  const url = await databaseUrlOf({ config: app.running.ctx.config, running: app.running });
  const run = (args: string[]) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, [join(root, 'src', 'main.ts'), ...args], {
        env: { ...process.env, DATABASE_URL: url, DATA_DIR: app.running.ctx.config.dataDir, PUBLIC_URL: app.url },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code) => resolve({ code: code ?? 1, out, err }));
    });
  const { workspace } = await createWorkspace(app.running.ctx.db, { name: 'cli-co', verified: true });
  const made = await run(['user', 'create', '--email', 'cli@example.org', '--workspace', workspace.id, '--role', 'admin', '--json']);
  assert.equal(made.code, 0, made.err);
  const printed = JSON.parse(made.out);
  assert.equal(printed.role, 'admin');
  assert.match(printed.password_link, new RegExp(`^${app.url}/dashboard/accept#`));
  const accepted = await call('POST', `/auth/invitations/${printed.password_link.split('#')[1]}/accept`, {
    password: 'a long enough password',
  });
  assert.equal(accepted.status, 200);
  assert.equal(accepted.body.workspace.role, 'admin');
  const bad = await run(['user', 'create', '--email', 'x@example.org', '--workspace', 'wsp_nope']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /no workspace with id wsp_nope/);

  // A fresh server on an empty database prints its key and the set-up link.
  const database = await freshDatabase();
  const port = await freePort();
  const child = await startChildApp({
    HTTP_PORT: String(port),
    HTTP_HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: database.dataDir,
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
  });
  try {
    const link = /http:\/\/127\.0\.0\.1:\d+\/dashboard\/accept#[\w-]+/.exec(child.output())?.[0];
    assert.ok(link, child.output());
    assert.match(child.output(), /secret_/);
    const info = await fetch(`http://127.0.0.1:${port}/auth/invitations/${link.split('#')[1]}`);
    assert.deepEqual(await info.json(), { email: null, role: 'admin', workspace_name: 'default', has_password: false });
  } finally {
    await child.kill();
    await database.drop();
  }
});
