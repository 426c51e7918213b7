// Request and response bodies of sign-in, sessions, members and invitations.
import { Type } from '@sinclair/typebox';
import { nullable } from '../../platform/http/responses.ts';

const text = (description: string) => Type.String({ description });
const RoleField = Type.Union([Type.Literal('admin'), Type.Literal('member')], {
  description: "admin: also manages the workspace's people (members, invitations) and API keys; member: everything else",
});

const ChallengeObject = Type.Object(
  {
    parameters: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'ALTCHA v2 challenge parameters (algorithm, nonce, salt, cost, keyPrefix, expiresAt, …), as given',
      },
    ),
    signature: Type.Optional(text('Its signature, as given')),
  },
  { description: 'A proof-of-work challenge (ALTCHA v2)' },
);

export const SignInBody = Type.Object({
  email: Type.String({ maxLength: 320, description: 'Account email' }),
  password: Type.String({ maxLength: 1000, description: 'Password' }),
  proof: Type.Optional(
    Type.Object(
      {
        challenge: ChallengeObject,
        solution: Type.Object(
          {
            counter: Type.Integer({ minimum: 0, description: 'The counter found' }),
            derivedKey: Type.String({ maxLength: 1024, description: 'The key derived for it, hex' }),
          },
          { description: 'What the solver found' },
        ),
      },
      {
        description:
          "The solved challenge of a 429 challenge_required: needed by browsers without this account's device cookie once the account has had too many failed sign-ins",
      },
    ),
  ),
});

export const SignInRefusal = Type.Object(
  {
    error: Type.Union([Type.Literal('too_many_attempts'), Type.Literal('challenge_required')], {
      description: 'too_many_attempts: wait retry_after seconds; challenge_required: solve challenge and send it as proof',
    }),
    message: text('What to do, for a person'),
    retry_after: Type.Optional(Type.Integer({ description: 'Seconds to wait (also the retry-after header)' })),
    challenge: Type.Optional(ChallengeObject),
  },
  { title: 'SignInRefusal' },
);
export const SwitchBody = Type.Object({ workspace_id: Type.String({ description: "wsp_ id of one of the user's workspaces" }) });
export const AcceptBody = Type.Object({
  email: Type.Optional(
    Type.String({ maxLength: 320, description: "The address to sign in with (only for the first start's link, which names none)" }),
  ),
  password: Type.String({ maxLength: 1000, description: "A new password (at least 10 characters), or an existing user's own" }),
});
export const InviteBody = Type.Object({
  email: Type.String({ maxLength: 320, description: 'Whom to invite' }),
  role: Type.Optional(RoleField),
});
export const RoleBody = Type.Object({ role: RoleField });
export const TokenParams = Type.Object({ token: Type.String({ maxLength: 100, description: 'The token from the invitation link' }) });
export const IdParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'usr_ or inv_ id' }) });

const WorkspaceRef = Type.Object({ id: text('wsp_ id'), name: text('Workspace name'), role: RoleField }, { title: 'SessionWorkspace' });

const LocalSetting = Type.Object(
  {
    variable: Type.Union([Type.Literal('PUBLIC_URL'), Type.Literal('MAIL_HOSTNAME')], { description: 'The environment variable' }),
    value: text('Its value now'),
    advice: text('What to set it to instead'),
  },
  { title: 'LocalSetting' },
);

/** Postlane addition: the server's public names, so the dashboard can warn while they are local. */
const ServerSetup = Type.Object(
  {
    public_url: text('PUBLIC_URL: the base of the API and of links in mail'),
    mail_hostname: text('MAIL_HOSTNAME: the EHLO name and the host the DNS records point at'),
    local_settings: Type.Array(LocalSetting, {
      description:
        'Settings that name this machine only (localhost, *.local, *.test, 127.x, a name without a dot…); empty when all are public',
    }),
    local_record_hosts: Type.Array(text('A host name'), {
      description: "Hosts the domains' DNS records point at that only this machine resolves",
    }),
  },
  { title: 'ServerSetup', description: 'Postlane addition: how this server is reachable' },
);

export const Session = Type.Object(
  {
    object: Type.Literal('session', { description: 'Always session' }),
    user: Type.Object({ id: text('usr_ id'), email: text('Account email') }, { description: 'Who is signed in' }),
    workspace: nullable(
      Type.Object(
        { id: text('wsp_ id'), name: text('Workspace name'), role: RoleField },
        { description: 'The workspace the session works in' },
      ),
    ),
    workspaces: Type.Array(WorkspaceRef, { description: 'Every workspace the user belongs to' }),
    csrf_token: text('Send it back in X-CSRF-Token with every request that changes something'),
    server: ServerSetup,
  },
  { title: 'Session' },
);

export const SignedOut = Type.Object(
  { signed_out: Type.Literal(true, { description: 'Always true' }), sessions: Type.Integer({ description: 'Sessions ended' }) },
  { title: 'SignedOut' },
);

export const InvitationInfo = Type.Object(
  {
    email: nullable(text("The invited address; null for the first start's link (the holder names it)")),
    role: RoleField,
    workspace_name: text('The workspace joined'),
    has_password: Type.Boolean({ description: 'The address already has an account: accept with its password' }),
  },
  { title: 'InvitationInfo' },
);

export const Invitation = Type.Object(
  {
    object: Type.Literal('invitation', { description: 'Always invitation' }),
    id: text('inv_ id'),
    email: nullable(text('Invited address')),
    role: RoleField,
    created_at: text('When it was sent'),
    expires_at: text('When the link stops working'),
    accepted_at: nullable(text('When it was accepted')),
  },
  { title: 'Invitation' },
);
export const CreatedInvitation = Type.Object(
  { ...Invitation.properties, url: text('The link (also emailed), shown once') },
  { title: 'CreatedInvitation' },
);
export const InvitationList = Type.Object(
  { data: Type.Array(Invitation, { description: 'Pending invitations, newest first' }) },
  { title: 'InvitationList' },
);
export const DeletedInvitation = Type.Object(
  {
    object: Type.Literal('invitation', { description: 'Always invitation' }),
    id: text('inv_ id'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'DeletedInvitation' },
);

export const Member = Type.Object(
  {
    object: Type.Literal('member', { description: 'Always member' }),
    id: text('usr_ id'),
    email: text('Account email'),
    role: RoleField,
    active: Type.Boolean({ description: 'The user has set a password' }),
    created_at: text('When they joined'),
  },
  { title: 'Member' },
);
export const MemberList = Type.Object({ data: Type.Array(Member, { description: 'Members, by email' }) }, { title: 'MemberList' });
export const RemovedMember = Type.Object(
  {
    object: Type.Literal('member', { description: 'Always member' }),
    id: text('usr_ id'),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { title: 'RemovedMember' },
);
