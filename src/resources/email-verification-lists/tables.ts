// The email_verification_lists table (migration 0015). The addresses are rows of
// email_verifications with this list's id.
export interface EmailVerificationListsTable {
  id: string;
  workspace_id: string;
  name: string;
  status: string; // processing | completed
  /** JSON: the `stats` object as the API shows it (starting values until the list completes). */
  stats: string;
  valid_emails_count: number;
  unique_emails_count: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    email_verification_lists: EmailVerificationListsTable;
  }
}
