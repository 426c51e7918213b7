// Table types. Each resource adds its own tables to `Database` by module augmentation
// (`declare module '../../platform/db/schema.ts' { interface Database { … } }`) in its own
// tables.ts, so that resources never edit one shared file.
//
// Storage conventions, the same on SQLite and PostgreSQL so that queries are portable:
// timestamps are ISO 8601 text with microseconds (they sort as strings), booleans are 0/1
// integers, JSON is text, epoch milliseconds are bigint (parsed to number).
import type { Generated } from 'kysely';

export interface WorkspacesTable {
  id: string;
  name: string;
  plan: string;
  credits: number;
  verified: number;
  members: string; // JSON array of lowercase addresses
  features: string; // JSON array of feature names
  send_rate: number;
  daily_limit: number;
  /** When credits were first bought (`--add-credits`); null: never. */
  first_credit_purchase_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  scope: string;
  type: string;
  sending_domain_id: string | null;
  key_hash: string;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  type: string;
  data: string; // JSON: the object as it was when the event happened
  created_at: string;
}

export interface JobsTable {
  id: Generated<number>;
  type: string;
  /** Unique among the live (not dead) jobs of its type (migration 0029). */
  key: string | null;
  payload: string;
  run_at: number;
  /** A keyed enqueue while the job ran: when it is due again once it finishes. */
  rerun_at: number | null;
  attempts: number;
  max_attempts: number;
  locked_until: number | null;
  locked_by: string | null;
  last_error: string | null;
  dead_at: string | null;
  created_at: string;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  jobs: JobsTable;
}
