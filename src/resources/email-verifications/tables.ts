// The email_verifications table (migration 0015): single verifications and the addresses of
// verification lists (list_id, position), one row per address checked.
export interface EmailVerificationsTable {
  id: string;
  workspace_id: string;
  /** The list it belongs to; null for a single verification. */
  list_id: string | null;
  /** Its place in the list as given (0-based); null for a single verification. */
  position: number | null;
  email: string;
  mode: string; // fast | full
  status: string; // pending | completed | failed
  score: number | null;
  risk: string | null;
  result: string | null;
  /** 1 when the domain accepted a random address too (list stats count these). */
  catch_all: number | null;
  /** JSON: checks, address, did_you_mean, mx_records, mailbox_check; null while pending. */
  details: string | null;
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    email_verifications: EmailVerificationsTable;
  }
}
