// The tables of OAuth apps (migration 0020_oauth_apps).
export interface OAuthClientsTable {
  id: string;
  name: string;
  redirect_uris: string;
  metadata: string;
  created_at: string;
}

export interface OAuthGrantsTable {
  id: string;
  client_id: string;
  client_name: string;
  user_id: string;
  scope: string;
  resource: string;
  workspace_ids: string;
  current_workspace_id: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  grant_id: string;
  redirect_uri: string;
  code_challenge: string;
  expires_at: number;
  used_at: string | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  grant_id: string;
  kind: string;
  expires_at: number;
  used_at: string | null;
  created_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    oauth_clients: OAuthClientsTable;
    oauth_grants: OAuthGrantsTable;
    oauth_codes: OAuthCodesTable;
    oauth_tokens: OAuthTokensTable;
  }
}
