// The suppressions table (migration 0003).
export interface SuppressionsTable {
  id: string;
  workspace_id: string;
  email: string; // lowercase
  type: string; // recipient | bounce | complaint | unsubscribe
  reason: string | null;
  keep_until: string | null; // ISO 8601 with microseconds; null = permanent
  source: string; // api | automatic
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    suppressions: SuppressionsTable;
  }
}
