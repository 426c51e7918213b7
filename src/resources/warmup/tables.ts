// Tables of warm-up (migration 0027, docs/delivery.md "Warm-up").
export interface DeliveryWarmupsTable {
  id: string; // wu_…
  kind: 'domain' | 'address';
  /** The sending domain name or the source IP address. */
  subject: string;
  /** Schedule name (DELIVERY_WARMUP, or default). */
  schedule: string;
  /** UTC day (YYYY-MM-DD) that is day 1. */
  started_on: string;
  created_at: string;
}

export interface DeliveryWarmupSendsTable {
  warmup_id: string;
  email_id: string;
  /** Provider or MX host (src/mail/shaping.ts). */
  destination: string;
  /** UTC day counted in (reserved, sent) or deferred on. */
  day: string;
  priority: 'transactional' | 'bulk';
  state: 'reserved' | 'sent' | 'deferred';
  retry_at: number | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    delivery_warmups: DeliveryWarmupsTable;
    delivery_warmup_sends: DeliveryWarmupSendsTable;
  }
}
