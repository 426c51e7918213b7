// Tables of the sending limits, credits and idempotency building blocks (migration 0006).
// Counters are rows incremented with one upsert each, so concurrent writers (several server
// processes on one PostgreSQL, or two connections to one SQLite file) never lose an update.

/** Units sent per workspace in one 10 ms slot: the per-second sliding window sums the last 100. */
export interface SendWindowCountsTable {
  workspace_id: string;
  bucket: number; // epoch ms of the slot's start (a multiple of 10)
  units: number;
}

/** Units sent per workspace per UTC calendar day. */
export interface SendDailyCountsTable {
  workspace_id: string;
  day: string; // YYYY-MM-DD (UTC)
  units: number;
}

/** Forwards per workspace in one-second slots: the hourly sliding window sums the last 3,600. */
export interface ForwardCountsTable {
  workspace_id: string;
  bucket: number; // epoch ms of the slot's start (a multiple of 1000)
  units: number;
}

/** One Idempotency-Key of a workspace: held by a running request, or its stored response. */
export interface IdempotencyKeysTable {
  workspace_id: string;
  key: string;
  state: string; // 'pending' (a request holds the lock) | 'completed' (response stored)
  token: string; // identifies the holder; only it may complete or release the key
  response_status: number | null;
  response_body: string | null; // JSON
  created_at: string;
  completed_at: string | null;
  expires_at: number; // epoch ms: end of the lock (pending) or of the replay window (completed)
}

declare module './schema.ts' {
  interface Database {
    send_window_counts: SendWindowCountsTable;
    send_daily_counts: SendDailyCountsTable;
    forward_counts: ForwardCountsTable;
    idempotency_keys: IdempotencyKeysTable;
  }
}
