// Table types of the domains resource (migration 0002_domains).

export type RecordStatus = 'pending' | 'ok' | 'missing' | 'invalid' | 'error';
export type VerificationStatus = 'verified' | 'pending' | 'pending_review';

export interface DomainsTable {
  id: string;
  workspace_id: string;
  name: string; // lowercase ASCII apex
  verification_status: VerificationStatus;
  verified_at: string | null;
  manual_review_required: number;
  manually_verified_at: string | null;
  dns_checked_at: string | null;
  next_check_at: number; // epoch ms: when the daily re-check is next due
  registered_at: string | null; // registration date from RDAP, once known
  spf_status: RecordStatus;
  spf_error: string | null;
  dkim_status: RecordStatus;
  dkim_error: string | null;
  return_path_status: RecordStatus; // also reported as mx_status / mx_error
  return_path_error: string | null;
  dmarc_status: RecordStatus;
  dmarc_error: string | null;
  tracking_status: RecordStatus;
  tracking_error: string | null;
  inbound_status: RecordStatus;
  inbound_error: string | null;
  tracking_key: string | null;
  inbound_key: string | null;
  track_loads: number;
  track_clicks: number;
  dmarc_reports: number;
  dmarc_address: string; // kept while reports are off, so re-enabling keeps the published record valid
  verification_token: string;
  dkim_selector: string; // DKIM_SELECTOR when the domain was added (its published records use it)
  dkim_public_key: string; // base64 SubjectPublicKeyInfo: the p= of the DKIM record
  dkim_private_key: string; // PKCS#8 PEM sealed with ctx.secrets: never returned or logged
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    domains: DomainsTable;
  }
}
