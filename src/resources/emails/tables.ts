// Emails: one row per recipient (its own id, token, Message-ID and status), sharing one stored
// content row per request. Attempts record every delivery try.
import type { Generated } from 'kysely';

export interface EmailsTable {
  id: string;
  workspace_id: string;
  type: string; // outbound | inbound
  source: string; // api | smtp | forward | retry | inbound
  token: string;
  message_id: string; // <token@domain>
  content_id: string;
  from: string; // as sent, display name included
  from_address: string;
  to: string; // this copy's recipient address
  recipient_kind: string; // to | cc | bcc
  subject: string;
  status: string;
  scheduled_at: string | null;
  api_key_id: string | null;
  sending_domain_id: string | null;
  tag: string | null;
  spam_score: number | null;
  size: number;
  meta: string | null; // JSON object of strings
  track_loads: number;
  track_clicks: number;
  original_id: string | null;
  status_detail: string | null; // last reason (bounce text, failure) shown on reads
  delivered_at: string | null;
  /** Documented reason of the last rejection or bounce (src/mail/bounce-reasons.ts). */
  bounce_reason: string | null;
  /** hard | soft */
  bounce_type: string | null;
  /** W3C traceparent of the acceptance while tracing is on (src/platform/tracing.ts). */
  traceparent: string | null;
  created_at: string;
  updated_at: string;
}

export interface EmailContentsTable {
  id: string;
  workspace_id: string;
  /** JSON: the message as it will be composed (see StoredMessage in content.ts). */
  message: string;
  /** Raw MIME as received (SMTP submissions and inbound mail); null for API sends. */
  raw: string | null;
  size: number;
  created_at: string;
  purged_at: string | null;
}

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
    emails: EmailsTable;
    email_contents: EmailContentsTable;
    email_attempts: EmailAttemptsTable;
  }
}
