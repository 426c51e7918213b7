// Tables of queue administration and traffic shaping (migration 0018, docs/delivery.md).
export interface DeliveryHoldsTable {
  id: string; // hold_…
  /** null: every workspace (set by the operator CLI only). */
  workspace_id: string | null;
  /** Provider (gmail, microsoft…) or MX host; null: any destination. */
  destination: string | null;
  /** Recipient domain; null: any. */
  domain: string | null;
  reason: string | null;
  created_at: string;
}

export interface DeliveryDestinationsTable {
  destination: string;
  /** JSON of DestinationState (src/mail/shaping.ts). */
  state: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    delivery_holds: DeliveryHoldsTable;
    delivery_destinations: DeliveryDestinationsTable;
  }
}

/** The IP pool a workspace's mail leaves from (migration 0028, docs/delivery.md "IP pools"). */
export interface DeliveryPoolAssignmentsTable {
  id: string; // `${workspace_id ?? '*'}|${kind}`
  /** null: every workspace without an assignment of its own (operator CLI only). */
  workspace_id: string | null;
  kind: string; // all | transactional | bulk
  pool: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    delivery_pool_assignments: DeliveryPoolAssignmentsTable;
  }
}
