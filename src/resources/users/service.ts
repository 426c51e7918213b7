// People of a workspace: users (an email and a password), memberships with a role, and
// invitations — one-time links that let a person set a password and join a workspace. The
// first start's set-up link is an invitation without an address: its holder names it.
import { randomBytes } from 'node:crypto';
import type { Db, Executor } from '../../platform/db/database.ts';
import { dialectOf, isUniqueViolation } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { hashSecret } from '../../platform/http/auth.ts';
import { ApiError, messageError, plainError } from '../../platform/http/errors.ts';
import { enqueueJob } from '../../platform/jobs.ts';
import { NOTIFY_JOB, type NotifyPayload } from '../notifications/service.ts';
import { getWorkspace } from '../workspaces/service.ts';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import type {} from './tables.ts';

import { WORKSPACE_ROLES as ROLES, type WorkspaceRole as Role } from '../../platform/http/roles.ts';
export { ROLES, type Role };
const INVITATION_MS = 7 * 24 * 3600 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalEmail(email: string): string {
  const value = email.trim().toLowerCase();
  if (!EMAIL.test(value) || value.length > 320) throw plainError(400, `"${email}" is not an email address`);
  return value;
}

export function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw plainError(400, 'role must be admin or member');
  return role as Role;
}

/** The link a person opens to accept an invitation: the token stays in the fragment, out of logs. */
export const invitationUrl = (publicUrl: string, token: string) => `${publicUrl}/dashboard/accept#${token}`;

export async function findUserByEmail(db: Executor, email: string) {
  return db.selectFrom('users').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
}

/** The user with this address, created (without a password) when there is none. */
async function userFor(tx: Executor, email: string) {
  const existing = await findUserByEmail(tx, email);
  if (existing) return existing;
  const now = nowIso();
  const row = { id: newId('usr'), email, password_hash: null, created_at: now, updated_at: now };
  await tx.insertInto('users').values(row).execute();
  return row;
}

export async function addMembership(tx: Executor, userId: string, workspaceId: string, role: Role): Promise<void> {
  const existing = await tx
    .selectFrom('memberships')
    .select('role')
    .where('user_id', '=', userId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (existing) {
    // Joining again never lowers a role.
    if (existing.role !== 'admin' && role === 'admin') {
      await tx.updateTable('memberships').set({ role }).where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute();
    }
    return;
  }
  await tx.insertInto('memberships').values({ user_id: userId, workspace_id: workspaceId, role, created_at: nowIso() }).execute();
}

export interface Membership {
  workspace_id: string;
  workspace_name: string;
  role: Role;
}

export async function membershipsOf(db: Executor, userId: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['memberships.workspace_id', 'workspaces.name as workspace_name', 'memberships.role'])
    .where('memberships.user_id', '=', userId)
    .orderBy('workspaces.name')
    .execute();
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}

export async function membershipOf(db: Executor, userId: string, workspaceId: string): Promise<Role | null> {
  const row = await db
    .selectFrom('memberships')
    .select('role')
    .where('user_id', '=', userId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row ? (row.role as Role) : null;
}

function invitationObject(row: {
  id: string;
  email: string | null;
  role: string;
  created_at: string;
  expires_at: number | string;
  accepted_at: string | null;
}) {
  return {
    object: 'invitation' as const,
    id: row.id,
    email: row.email,
    role: row.role as Role,
    created_at: row.created_at,
    expires_at: new Date(Number(row.expires_at)).toISOString(),
    accepted_at: row.accepted_at,
  };
}

async function insertInvitation(tx: Executor, workspaceId: string, email: string | null, role: Role, invitedBy: string | null) {
  const token = randomBytes(24).toString('base64url');
  const row = {
    id: newId('inv'),
    token_hash: hashSecret(token),
    workspace_id: workspaceId,
    email,
    role,
    invited_by: invitedBy,
    created_at: nowIso(),
    expires_at: Math.floor(nowMs()) + INVITATION_MS,
    accepted_at: null,
  };
  await tx.insertInto('invitations').values(row).execute();
  return { row, token };
}

/** The first start's link: whoever opens it names the first admin's address and password. */
export async function createSetupLink(db: Db, workspaceId: string, publicUrl: string): Promise<string> {
  const { token } = await db.transaction().execute((tx) => insertInvitation(tx, workspaceId, null, 'admin', null));
  return invitationUrl(publicUrl, token);
}

/** `postlane user create`: the user and membership now, and a link to set the password. */
export async function createUser(db: Db, input: { email: string; workspaceId: string; role: string }, publicUrl: string) {
  const email = normalEmail(input.email);
  const role = checkRole(input.role);
  return db.transaction().execute(async (tx) => {
    if (!(await getWorkspace(tx, input.workspaceId))) throw plainError(404, `no workspace with id ${input.workspaceId}`);
    const user = await userFor(tx, email);
    await addMembership(tx, user.id, input.workspaceId, role);
    if (user.password_hash) return { user: { id: user.id, email }, role, url: null };
    const { token } = await insertInvitation(tx, input.workspaceId, email, role, null);
    return { user: { id: user.id, email }, role, url: invitationUrl(publicUrl, token) };
  });
}

/** An invitation from the dashboard: stored, and emailed through the delivery path. */
export async function inviteMember(
  db: Db,
  workspaceId: string,
  invitedBy: string | null,
  input: { email: string; role?: string },
  publicUrl: string,
) {
  const email = normalEmail(input.email);
  const role = checkRole(input.role ?? 'member');
  return db.transaction().execute(async (tx) => {
    const workspace = (await getWorkspace(tx, workspaceId))!;
    const member = await tx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('users.id')
      .where('memberships.workspace_id', '=', workspaceId)
      .where('users.email', '=', email)
      .executeTakeFirst();
    if (member) throw messageError(409, 'already_member', `${email} is already a member of this workspace`);
    const { row, token } = await insertInvitation(tx, workspaceId, email, role, invitedBy);
    const url = invitationUrl(publicUrl, token);
    const payload: NotifyPayload = {
      to: email,
      subject: `You are invited to the Postlane workspace "${workspace.name}"`,
      text: `Hello,\n\nyou are invited to join the Postlane workspace "${workspace.name}" as ${role === 'admin' ? 'an admin' : 'a member'}.\n\nOpen this link within 7 days to set your password and sign in:\n\n  ${url}\n`,
    };
    await enqueueJob(tx, NOTIFY_JOB, payload, { maxAttempts: 20 });
    return { ...invitationObject(row), url };
  });
}

export async function listInvitations(db: Db, workspaceId: string) {
  const rows = await db
    .selectFrom('invitations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('accepted_at', 'is', null)
    .where('email', 'is not', null)
    .where('expires_at', '>', Math.floor(nowMs()))
    .orderBy('created_at', 'desc')
    .execute();
  return { data: rows.map(invitationObject) };
}

export async function revokeInvitation(db: Db, workspaceId: string, id: string) {
  const deleted = await db
    .deleteFrom('invitations')
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) throw plainError(404, 'Invitation not found');
  return { object: 'invitation' as const, id, deleted: true as const };
}

export async function listMembers(db: Db, workspaceId: string) {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'memberships.role', 'memberships.created_at', 'users.password_hash'])
    .where('memberships.workspace_id', '=', workspaceId)
    .orderBy('users.email')
    .execute();
  return {
    data: rows.map((r) => ({
      object: 'member' as const,
      id: r.id,
      email: r.email,
      role: r.role as Role,
      active: r.password_hash !== null,
      created_at: r.created_at,
    })),
  };
}

/**
 * The workspace's admins, locked until the transaction ends, so that two changes of admins (two
 * admins demoting or removing each other at once) take turns and the second sees the first: on
 * PostgreSQL with FOR UPDATE, in id order so they never deadlock (a waiting lock re-reads the
 * row, and a row no longer an admin drops out); on SQLite every transaction begins IMMEDIATE,
 * one writer at a time (sqlite-adapter.ts).
 */
async function lockedAdmins(tx: Executor, workspaceId: string): Promise<string[]> {
  let query = tx
    .selectFrom('memberships')
    .select('user_id')
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'admin')
    .orderBy('user_id');
  if (dialectOf(tx) === 'postgres') query = query.forUpdate();
  return (await query.execute()).map((row) => row.user_id);
}

const LAST_ADMIN = 'A workspace keeps at least one admin';

async function memberObject(tx: Executor, workspaceId: string, userId: string) {
  const row = await tx
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'memberships.role', 'memberships.created_at', 'users.password_hash'])
    .where('memberships.workspace_id', '=', workspaceId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
  // Removed by another request meanwhile.
  if (!row) throw plainError(404, 'Member not found');
  return {
    object: 'member' as const,
    id: row.id,
    email: row.email,
    role: row.role as Role,
    active: row.password_hash !== null,
    created_at: row.created_at,
  };
}

export async function updateMember(db: Db, workspaceId: string, userId: string, role: string) {
  const next = checkRole(role);
  return db.transaction().execute(async (tx) => {
    // Everything below reads through tx: the outer handle would wait for this very transaction
    // on SQLite (one connection) and miss its change on PostgreSQL.
    const admins = await lockedAdmins(tx, workspaceId);
    const current = admins.includes(userId) ? 'admin' : await membershipOf(tx, userId, workspaceId);
    if (!current) throw plainError(404, 'Member not found');
    if (current === 'admin' && next !== 'admin' && admins.length <= 1) throw plainError(400, LAST_ADMIN);
    if (current !== next)
      await tx
        .updateTable('memberships')
        .set({ role: next })
        .where('user_id', '=', userId)
        .where('workspace_id', '=', workspaceId)
        .execute();
    return memberObject(tx, workspaceId, userId);
  });
}

export async function removeMember(db: Db, workspaceId: string, userId: string) {
  return db.transaction().execute(async (tx) => {
    const admins = await lockedAdmins(tx, workspaceId);
    const current = admins.includes(userId) ? 'admin' : await membershipOf(tx, userId, workspaceId);
    if (!current) throw plainError(404, 'Member not found');
    if (current === 'admin' && admins.length <= 1) throw plainError(400, LAST_ADMIN);
    await tx.deleteFrom('memberships').where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute();
    // Their sessions in this workspace end with the membership.
    await tx.deleteFrom('sessions').where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute();
    return { object: 'member' as const, id: userId, deleted: true as const };
  });
}

async function openInvitation(db: Executor, token: string) {
  const row = await db.selectFrom('invitations').selectAll().where('token_hash', '=', hashSecret(token)).executeTakeFirst();
  if (!row || row.accepted_at !== null || Number(row.expires_at) < nowMs())
    throw plainError(404, 'This invitation link is not valid any more');
  return row;
}

/** What the accept page shows before the person sets a password. */
export async function describeInvitation(db: Db, token: string) {
  const row = await openInvitation(db, token);
  const workspace = (await getWorkspace(db, row.workspace_id))!;
  const user = row.email ? await findUserByEmail(db, row.email) : undefined;
  return { email: row.email, role: row.role as Role, workspace_name: workspace.name, has_password: Boolean(user?.password_hash) };
}

/**
 * Accepts an invitation: a new user sets a password; an existing one proves theirs. Returns the
 * user and the workspace joined (the caller opens a session).
 */
export async function acceptInvitation(db: Db, token: string, input: { email?: string; password: string }) {
  return db.transaction().execute(async (tx) => {
    const invitation = await openInvitation(tx, token);
    const email = invitation.email ?? (input.email ? normalEmail(input.email) : null);
    if (!email) throw plainError(400, 'email is required');
    const existing = await findUserByEmail(tx, email);
    if (existing?.password_hash) {
      if (!(await verifyPassword(input.password, existing.password_hash)))
        throw messageError(401, 'invalid_credentials', 'Wrong password for this account');
    } else {
      const problem = passwordProblem(input.password);
      if (problem) throw plainError(400, problem);
    }
    let user;
    try {
      user = await userFor(tx, email);
    } catch (error) {
      if (isUniqueViolation(error)) throw messageError(409, 'conflict', 'Try again');
      throw error;
    }
    if (!user.password_hash) {
      await tx
        .updateTable('users')
        .set({ password_hash: await hashPassword(input.password), updated_at: nowIso() })
        .where('id', '=', user.id)
        .execute();
    }
    await addMembership(tx, user.id, invitation.workspace_id, invitation.role as Role);
    const claimed = await tx
      .updateTable('invitations')
      .set({ accepted_at: nowIso() })
      .where('id', '=', invitation.id)
      .where('accepted_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) throw new ApiError(404, { error: 'This invitation link is not valid any more' });
    return { userId: user.id, workspaceId: invitation.workspace_id };
  });
}
