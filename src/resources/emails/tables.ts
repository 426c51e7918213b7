// Emails: the `emails` and `email_contents` tables are declared with the intake that writes them
// (src/delivery/tables.ts). Attempts record every delivery try.
import type { Generated } from 'kysely';

export type { EmailContentsTable, EmailsTable } from '../../delivery/tables.ts';

export interface EmailAttemptsTable {
  id: Generated<number>;
  email_id: string;
  attempted_at: string;
  outcome: string; // delivered | temporary | permanent
  mx_host: string | null;
  smtp_code: number | null;
  enhanced_code: string | null;
  response: string | null;
  /** Documented reason of a rejection (null when delivered). */
  reason: string | null;
  /** TLS outcome: dane | mta-sts | tls | opportunistic | none (null for attempts without a session or recorded before TLS outcomes were kept). */
  tls: string | null;
  /** Local source address of the connection (IP pools, migration 0028); null: chosen by the OS. */
  source_address: string | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    email_attempts: EmailAttemptsTable;
  }
}
