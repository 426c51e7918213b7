// Audiences, their subscribers (a contact's membership) and pending double opt-in
// confirmations (migration 0011).
export interface AudiencesTable {
  id: string; // aud_
  workspace_id: string;
  name: string; // unique per workspace
  legacy_id: string; // 16 letters and digits: the audience's id in the v1 API
  token: string; // public token of the hosted subscribe link and POST /v1/audiences/subscribe/:token
  visibility: string; // private | public
  public_name: string | null;
  public_description: string | null;
  double_opt_in: string | null; // JSON DoubleOptInSettings
  confirmation_email: string | null; // JSON ConfirmationEmailSettings
  unengaged: string | null; // JSON { exclude, days }
  subscriber_count: number; // memberships (subscribed or not), kept with every change
  created_at: string;
  updated_at: string;
}

export interface SubscribersTable {
  id: string; // sub_
  workspace_id: string;
  audience_id: string;
  contact_id: string;
  subscribed: number; // 0/1
  subscribed_at: string | null;
  unsubscribed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SubscriptionConfirmationsTable {
  id: string; // subc_
  workspace_id: string;
  audience_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  custom_fields: string | null; // JSON object; null: leave the contact's as they are
  email_id: string | null;
  confirmed_at: string | null;
  expires_at: string;
  created_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    audiences: AudiencesTable;
    subscribers: SubscribersTable;
    subscription_confirmations: SubscriptionConfirmationsTable;
  }
}
