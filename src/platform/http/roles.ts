// Workspace roles, enforced by the server for every request whatever the credential. A route
// that only an admin may use says so once, in its config (`config: { role: 'admin' }`); app.ts
// then runs `roleCheck` right after the credential and scope checks, before the body is read,
// and documents the 403 in the route's responses. The rule is decided from the principal alone
// (actingRole), so a session, an API key or any later credential (an OAuth access token) is
// judged the same way.
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, WorkspaceRole } from './auth.ts';
import { ApiError, messageError } from './errors.ts';

export { WORKSPACE_ROLES, type WorkspaceRole } from './auth.ts';
/** What a route may demand of the principal's role (`config.role`). */
export type RequiredRole = 'admin';

export const ADMIN_ROLE_REQUIRED = 'admin_role_required';

export const adminRoleRequired = () =>
  messageError(403, ADMIN_ROLE_REQUIRED, 'Only an admin of this workspace may do this; ask one of its admins');

/**
 * The role a principal acts with in its workspace. A credential that acts for a user (a
 * dashboard session; later an OAuth access token) carries that user's current role, and
 * without one it is a member. A credential that acts for no user, an API key, speaks for the
 * workspace itself: only an admin can create one, so it acts as an admin.
 */
export function actingRole(principal: Principal): WorkspaceRole {
  if (principal.userId === undefined) return 'admin';
  return principal.role === 'admin' ? 'admin' : 'member';
}

/** The refusal for a principal that lacks the role a route requires; null when it may go on.
 *  A request without a principal (a route outside authentication) is refused too. */
export function roleRefusal(principal: Principal | undefined, required: RequiredRole | undefined): ApiError | null {
  if (required === undefined) return null;
  if (principal && actingRole(principal) === required) return null;
  return adminRoleRequired();
}

type OnRequest = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** The route's onRequest hooks with the role check appended (the credential check, which
 *  app.ts puts first, has run by then). */
export function withRoleCheck<T>(hooks: T | T[] | undefined, required: RequiredRole): T[] {
  const check: OnRequest = (request, _reply, done) => done(roleRefusal(request.principal as Principal | undefined, required) ?? undefined);
  const own = hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
  return [...own, check as T];
}

/** The 403 body of a refused role, as an OpenAPI component. */
export const AdminRoleRequiredError = Type.Object(
  {
    error: Type.Literal(ADMIN_ROLE_REQUIRED, { description: 'Always admin_role_required' }),
    message: Type.String({ description: 'What went wrong, for a person' }),
  },
  { $id: 'AdminRoleRequiredError', title: 'AdminRoleRequiredError', additionalProperties: true },
);

/** A route's responses with its role refusal documented under 403 (first: the serializer takes
 *  the first shape a body matches, and this one is the strictest). */
export function withRoleResponses(response: Record<string, TSchema>, required: RequiredRole | undefined): Record<string, TSchema> {
  if (required === undefined) return response;
  const refusal = Type.Ref(AdminRoleRequiredError.$id!);
  const existing = response['403'];
  return { ...response, 403: Type.Union([refusal, ...(existing ? (existing.anyOf ?? [existing]) : [])]) };
}
