// The tables of users, memberships, sessions and invitations (migration 0017).
export interface UsersTable {
  id: string;
  email: string; // lowercase
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  user_id: string;
  workspace_id: string;
  role: string; // admin | member
  created_at: string;
}

export interface SessionsTable {
  id_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: number;
}

export interface InvitationsTable {
  id: string;
  token_hash: string;
  workspace_id: string;
  email: string | null;
  role: string;
  invited_by: string | null;
  created_at: string;
  expires_at: number;
  accepted_at: string | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    users: UsersTable;
    memberships: MembershipsTable;
    sessions: SessionsTable;
    invitations: InvitationsTable;
  }
}
