// People and sign-in for the dashboard. `/auth/*` is the browser's own door (session cookie,
// CSRF token); `/v2/members` and `/v2/invitations` are the workspace's people, managed by its
// admins through the API like every other resource (with a session or a full API key); the
// admin-only routes say so in their config (src/platform/http/roles.ts).
import type { Static } from '@sinclair/typebox';
import type { Resource } from '../../platform/resource.ts';
import { messageError } from '../../platform/http/errors.ts';
import { errorResponses } from '../../platform/http/responses.ts';
import {
  AcceptBody,
  CreatedInvitation,
  DeletedInvitation,
  IdParams,
  InvitationInfo,
  InvitationList,
  InviteBody,
  Member,
  MemberList,
  RemovedMember,
  RoleBody,
  Session,
  SignInBody,
  SignInRefusal,
  SignedOut,
  SwitchBody,
  TokenParams,
} from './schemas.ts';
import {
  acceptInvitation,
  describeInvitation,
  inviteMember,
  listInvitations,
  listMembers,
  membershipOf,
  membershipsOf,
  removeMember,
  revokeInvitation,
  updateMember,
} from './service.ts';
import {
  checkCsrf,
  checkSignIn,
  signInGuard,
  setDeviceCookie,
  clearSessionCookie,
  cookieAuthenticator,
  describeSession,
  openSession,
  requireSession,
} from './sessions.ts';

const authTags = ['Dashboard sign-in'];
const peopleTags = ['Members'];
const publicRoute = { scope: 'public' as const };
type Id = Static<typeof IdParams>;
type Token = Static<typeof TokenParams>;

export const resource: Resource = {
  name: 'users',
  public(app, ctx) {
    const guard = signInGuard(ctx);
    const sessionBody = async (userId: string, workspaceId: string, reply: Parameters<typeof openSession>[1]) => {
      return describeSession(ctx.db, await openSession(ctx, reply, userId, workspaceId), ctx.config);
    };

    app.post(
      '/auth/sign-in',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: 'Sign in to the dashboard (sets the session cookie)',
          body: SignInBody,
          response: { 200: Session, 429: SignInRefusal, ...errorResponses({ 401: 'errorMessage', 403: 'framework' }) },
        },
      },
      async (request, reply) => {
        checkCsrf(request, null); // no sign-in from another site's form
        const { email, password, proof } = request.body as Static<typeof SignInBody>;
        const userId = await checkSignIn(ctx.db, guard, { ip: request.ip, cookieHeader: request.headers.cookie, email, password, proof });
        const [first] = await membershipsOf(ctx.db, userId);
        if (!first) throw messageError(403, 'no_workspace', 'This account belongs to no workspace');
        const body = await sessionBody(userId, first.workspace_id, reply);
        setDeviceCookie(ctx, reply, guard, userId);
        return body;
      },
    );

    app.get(
      '/auth/session',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: 'Who is signed in, their workspaces and the CSRF token',
          response: { 200: Session, ...errorResponses({ 401: 'framework' }) },
        },
      },
      async (request) => describeSession(ctx.db, await requireSession(ctx, request), ctx.config),
    );

    app.post(
      '/auth/workspace',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: "Switch the session to another of the user's workspaces",
          body: SwitchBody,
          response: { 200: Session, ...errorResponses({ 401: 'framework', 403: 'framework', 404: 'error' }) },
        },
      },
      async (request) => {
        const session = await requireSession(ctx, request);
        const { workspace_id } = request.body as Static<typeof SwitchBody>;
        if (!(await membershipOf(ctx.db, session.user_id, workspace_id))) throw messageError(404, 'not_found', 'Workspace not found');
        await ctx.db.updateTable('sessions').set({ workspace_id }).where('id_hash', '=', session.id_hash).execute();
        return describeSession(ctx.db, { ...session, workspace_id }, ctx.config);
      },
    );

    app.post(
      '/auth/sign-out',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: 'End this session',
          response: { 200: SignedOut, ...errorResponses({ 401: 'framework', 403: 'framework' }) },
        },
      },
      async (request, reply) => {
        const session = await requireSession(ctx, request);
        await ctx.db.deleteFrom('sessions').where('id_hash', '=', session.id_hash).execute();
        clearSessionCookie(ctx, reply);
        return { signed_out: true as const, sessions: 1 };
      },
    );

    app.post(
      '/auth/sign-out-everywhere',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: 'End every session of the signed-in user',
          response: { 200: SignedOut, ...errorResponses({ 401: 'framework', 403: 'framework' }) },
        },
      },
      async (request, reply) => {
        const session = await requireSession(ctx, request);
        const result = await ctx.db.deleteFrom('sessions').where('user_id', '=', session.user_id).executeTakeFirst();
        clearSessionCookie(ctx, reply);
        return { signed_out: true as const, sessions: Number(result.numDeletedRows) };
      },
    );

    app.get(
      '/auth/invitations/:token',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: 'What an invitation link offers',
          params: TokenParams,
          response: { 200: InvitationInfo, ...errorResponses({ 404: 'error' }) },
        },
      },
      async (request) => describeInvitation(ctx.db, (request.params as Token).token),
    );

    app.post(
      '/auth/invitations/:token/accept',
      {
        config: publicRoute,
        schema: {
          tags: authTags,
          summary: 'Accept an invitation (set the password) and sign in',
          params: TokenParams,
          body: AcceptBody,
          response: {
            200: Session,
            ...errorResponses({ 400: 'error', 401: 'errorMessage', 403: 'framework', 404: 'error', 409: 'errorMessage' }),
          },
        },
      },
      async (request, reply) => {
        checkCsrf(request, null);
        const { userId, workspaceId } = await acceptInvitation(
          ctx.db,
          (request.params as Token).token,
          request.body as Static<typeof AcceptBody>,
        );
        return sessionBody(userId, workspaceId, reply);
      },
    );
  },

  v2(app, ctx) {
    ctx.auth.cookieAuthenticator = cookieAuthenticator(ctx);
    // Everyone in the workspace sees who belongs to it; only its admins change that.
    const admin = { role: 'admin' as const };

    app.get(
      '/members',
      { schema: { tags: peopleTags, summary: "The workspace's members", response: { 200: MemberList } } },
      async (request) => listMembers(ctx.db, request.principal.workspaceId),
    );
    app.post(
      '/members/:id',
      {
        config: admin,
        schema: {
          tags: peopleTags,
          summary: "Change a member's role (admins only)",
          params: IdParams,
          body: RoleBody,
          response: { 200: Member, ...errorResponses({ 400: 'error', 404: 'error' }) },
        },
      },
      async (request) =>
        updateMember(ctx.db, request.principal.workspaceId, (request.params as Id).id, (request.body as Static<typeof RoleBody>).role),
    );
    app.delete(
      '/members/:id',
      {
        config: admin,
        schema: {
          tags: peopleTags,
          summary: 'Remove a member from the workspace (admins only)',
          params: IdParams,
          response: { 200: RemovedMember, ...errorResponses({ 400: 'error', 404: 'error' }) },
        },
      },
      async (request) => removeMember(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
    app.get(
      '/invitations',
      { config: admin, schema: { tags: peopleTags, summary: 'Pending invitations (admins only)', response: { 200: InvitationList } } },
      async (request) => listInvitations(ctx.db, request.principal.workspaceId),
    );
    app.post(
      '/invitations',
      {
        config: admin,
        schema: {
          tags: peopleTags,
          summary: 'Invite someone by email (admins only)',
          body: InviteBody,
          response: { 201: CreatedInvitation, ...errorResponses({ 400: 'error', 409: 'errorMessage' }) },
        },
      },
      async (request, reply) => {
        const invitation = await inviteMember(
          ctx.db,
          request.principal.workspaceId,
          request.principal.userId ?? null,
          request.body as Static<typeof InviteBody>,
          ctx.config.publicUrl,
        );
        return reply.code(201).send(invitation);
      },
    );
    app.delete(
      '/invitations/:id',
      {
        config: admin,
        schema: {
          tags: peopleTags,
          summary: 'Revoke an invitation (admins only)',
          params: IdParams,
          response: { 200: DeletedInvitation, ...errorResponses({ 404: 'error' }) },
        },
      },
      async (request) => revokeInvitation(ctx.db, request.principal.workspaceId, (request.params as Id).id),
    );
  },
};
