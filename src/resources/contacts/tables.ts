// The contacts table (migration 0011).
export interface ContactsTable {
  id: string; // con_
  workspace_id: string;
  email: string; // lowercase, unique per workspace
  first_name: string | null;
  last_name: string | null;
  custom_fields: string; // JSON object, '{}' when none
  unsubscribed: number; // 1: unsubscribed from all campaigns
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    contacts: ContactsTable;
  }
}
