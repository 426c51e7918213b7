// Tables of the delivery engine (migration 0008): tracked links and the opens and clicks they
// received. Delivery attempts live in email_attempts (emails resource).
export interface TrackingLinksTable {
  id: string; // link_…
  /** Unguessable token in the URL (HMAC of the email id and link position). */
  token: string;
  kind: string; // open | click
  email_id: string;
  workspace_id: string;
  /** Original target of a click link, exactly as the browser would follow it; null for the pixel. */
  url: string | null;
  created_at: string;
}

export interface TrackingHitsTable {
  id: string; // load_… | click_…
  workspace_id: string;
  email_id: string;
  link_id: string | null;
  kind: string; // load | click
  ip_address: string | null;
  user_agent: string | null;
  /** 1 when an event was emitted; 0 for a duplicate inside the deduplication window. */
  emitted: number;
  created_at: string;
}

declare module '../../../platform/db/schema.ts' {
  interface Database {
    tracking_links: TrackingLinksTable;
    tracking_hits: TrackingHitsTable;
  }
}
