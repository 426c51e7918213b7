// Table types of the webhooks resource (migration 0005_webhooks).
import type { Generated, Selectable } from 'kysely';

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  name: string;
  url: string;
  all_events: number;
  enabled: number;
  events: string; // JSON string[]
  filter: string | null; // JSON filter
  secret: string; // sealed with ctx.secrets
  last_used_at: string | null;
  failing_since: number | null;
  /** When the owners were told of this run of failures (null since the last success). */
  failure_notified_at: string | null;
  consecutive_failures: number;
  backoff_until: number | null;
  disabled_reason: string | null;
  lock_until: number | null;
  lock_owner: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookOutboxTable {
  id: Generated<number>;
  webhook_id: string;
  event_id: string;
  created_at: string;
}

export type WebhookRequestStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface WebhookRequestsTable {
  id: string;
  webhook_id: string;
  workspace_id: string;
  status: WebhookRequestStatus;
  attempts: number;
  manual: number;
  event_ids: string; // JSON string[]
  event_count: number;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: number | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookRequestAttemptsTable {
  id: Generated<number>;
  request_id: string;
  attempt: number;
  manual: number;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number;
  error: string | null;
  created_at: string;
}

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookRequestRow = Selectable<WebhookRequestsTable>;

declare module '../../platform/db/schema.ts' {
  interface Database {
    webhooks: WebhooksTable;
    webhook_outbox: WebhookOutboxTable;
    webhook_requests: WebhookRequestsTable;
    webhook_request_attempts: WebhookRequestAttemptsTable;
  }
}
