// Dashboard sessions: a random id in an HttpOnly, SameSite=Strict cookie (only its SHA-256 is
// stored), and a per-session CSRF token the dashboard sends back in `X-CSRF-Token` with every
// state change; a state change whose Origin is another site is refused outright. A session is
// never an API key (bearerSecret only takes `secret_…`) and an API key never opens a session.
// Sign-in itself is guarded by sign-in-guard.ts (device cookies, per-network limits, proof of work).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/database.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { localRecordHosts, localSettings } from '../../platform/local-names.ts';
import type { Config } from '../../config.ts';
import { hashSecret, type Principal } from '../../platform/http/auth.ts';
import { ApiError, frameworkError, messageError } from '../../platform/http/errors.ts';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_SECONDS, SignInGuard, SignInRefused, type Proof } from './sign-in-guard.ts';
import { dummyHash, verifyPassword } from './passwords.ts';
import { findUserByEmail, membershipOf, membershipsOf, type Role } from './service.ts';

export const SESSION_COOKIE = 'postlane_session';
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_MS = 14 * 24 * 3600 * 1000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SessionRow {
  id_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  expires_at: number;
}

/** One cookie's value from a Cookie header (a full cookie parser is more than this needs). */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

const secure = (ctx: AppContext) => ctx.config.publicUrl.startsWith('https:');

function setSessionCookie(ctx: AppContext, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  const attributes = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`];
  if (secure(ctx)) attributes.push('Secure');
  reply.header('set-cookie', attributes.join('; '));
}

export async function openSession(ctx: AppContext, reply: FastifyReply, userId: string, workspaceId: string): Promise<SessionRow> {
  const id = randomBytes(32).toString('base64url');
  const row = {
    id_hash: hashSecret(id),
    user_id: userId,
    workspace_id: workspaceId,
    csrf_token: randomBytes(24).toString('base64url'),
    expires_at: Math.floor(nowMs()) + SESSION_MS,
  };
  await ctx.db
    .insertInto('sessions')
    .values({ ...row, created_at: nowIso() })
    .execute();
  setSessionCookie(ctx, reply, id, SESSION_MS / 1000);
  return row;
}

export function clearSessionCookie(ctx: AppContext, reply: FastifyReply): void {
  setSessionCookie(ctx, reply, '', 0);
}

async function sessionOf(db: Db, request: FastifyRequest): Promise<SessionRow | null> {
  const id = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (!id || id.length > 100) return null;
  const row = await db
    .selectFrom('sessions')
    .select(['id_hash', 'user_id', 'workspace_id', 'csrf_token', 'expires_at'])
    .where('id_hash', '=', hashSecret(id))
    .executeTakeFirst();
  if (!row || Number(row.expires_at) < nowMs()) return null;
  return row;
}

function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    try {
      return new URL(origin).host === request.headers.host;
    } catch {
      return false;
    }
  }
  // Browsers that send no Origin still say where a request comes from.
  const site = request.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

/** Refuses a state change from another site, or one without this session's CSRF token. */
export function checkCsrf(request: FastifyRequest, session: SessionRow | null): void {
  if (SAFE_METHODS.has(request.method)) return;
  if (!sameOrigin(request)) throw frameworkError(403, 'Cross-origin requests may not change anything');
  if (!session) return;
  const sent = request.headers[CSRF_HEADER];
  const expected = Buffer.from(session.csrf_token);
  const given = Buffer.from(typeof sent === 'string' ? sent : '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw frameworkError(403, 'Missing or wrong CSRF token (X-CSRF-Token)');
}

/** The signed-in session of a request (with its CSRF check), or a 401. */
export async function requireSession(ctx: AppContext, request: FastifyRequest): Promise<SessionRow> {
  const session = await sessionOf(ctx.db, request);
  if (!session) throw frameworkError(401, 'Not signed in');
  checkCsrf(request, session);
  return session;
}

/**
 * The principal of a /v2 request made with a session cookie (called only when the request has
 * no Authorization header): the session's current workspace, with the member's role.
 */
export function cookieAuthenticator(ctx: AppContext) {
  return async (request: FastifyRequest): Promise<Principal | null> => {
    const session = await sessionOf(ctx.db, request);
    if (!session) return null;
    const role = await membershipOf(ctx.db, session.user_id, session.workspace_id);
    if (!role) return null;
    checkCsrf(request, session);
    return {
      keyId: '',
      keyHash: '',
      workspaceId: session.workspace_id,
      scope: 'full',
      sendingDomainId: null,
      userId: session.user_id,
      role,
    };
  };
}

export { SIGN_IN_PER_ACCOUNT, SIGN_IN_PER_DEVICE, SIGN_IN_PER_IP, SIGN_IN_WINDOW_MS } from './sign-in-guard.ts';

/** One running app's sign-in guard (its device cookies are signed with a key every server shares). */
export function signInGuard(ctx: AppContext): SignInGuard {
  return new SignInGuard(ctx.verpSecret);
}

export interface SignInAttempt {
  ip: string;
  cookieHeader: string | undefined;
  email: string;
  password: string;
  proof?: Proof;
}

/** Checks an email and password (guarded: sign-in-guard.ts); the user id, or a 401/429 ApiError. */
export async function checkSignIn(db: Db, guard: SignInGuard, attempt: SignInAttempt): Promise<string> {
  const user = await findUserByEmail(db, attempt.email);
  let admission;
  try {
    const device = guard.readDeviceCookie(readCookie(attempt.cookieHeader, DEVICE_COOKIE));
    admission = await guard.admit({ ip: attempt.ip, email: attempt.email, userId: user?.id ?? null, device, proof: attempt.proof });
  } catch (error) {
    if (!(error instanceof SignInRefused)) throw error;
    throw new ApiError(429, error.body, error.body.retry_after ? { 'retry-after': String(error.body.retry_after) } : {});
  }
  const ok = await verifyPassword(attempt.password, user?.password_hash ?? (await dummyHash()));
  if (!user?.password_hash || !ok) throw messageError(401, 'invalid_credentials', 'Wrong email or password');
  guard.succeeded(admission);
  return user.id;
}

/** Marks this browser as one the user signed in with (a new nonce at each sign-in). */
export function setDeviceCookie(ctx: AppContext, reply: FastifyReply, guard: SignInGuard, userId: string): void {
  // Sent to the sign-in route only; HttpOnly, so no script of any page can copy it.
  const attributes = [
    `${DEVICE_COOKIE}=${guard.deviceCookieFor(userId)}`,
    'Path=/auth/sign-in',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${DEVICE_COOKIE_MAX_AGE_SECONDS}`,
  ];
  if (secure(ctx)) attributes.push('Secure');
  reply.header('set-cookie', attributes.join('; '));
}

/** What the dashboard needs to know about who is signed in. */
/** What the dashboard shows about the server's own setup (a banner while its names are local). */
function serverSetup(config: Config) {
  return {
    public_url: config.publicUrl,
    mail_hostname: config.mailHostname,
    local_settings: localSettings(config),
    local_record_hosts: localRecordHosts(config),
  };
}

export async function describeSession(db: Db, session: Pick<SessionRow, 'user_id' | 'workspace_id' | 'csrf_token'>, config: Config) {
  const user = await db.selectFrom('users').select(['id', 'email']).where('id', '=', session.user_id).executeTakeFirstOrThrow();
  const memberships = await membershipsOf(db, session.user_id);
  const current = memberships.find((m) => m.workspace_id === session.workspace_id);
  return {
    object: 'session' as const,
    user: { id: user.id, email: user.email },
    workspace: current ? { id: current.workspace_id, name: current.workspace_name, role: current.role } : null,
    workspaces: memberships.map((m) => ({ id: m.workspace_id, name: m.workspace_name, role: m.role as Role })),
    csrf_token: session.csrf_token,
    server: serverSetup(config),
  };
}
