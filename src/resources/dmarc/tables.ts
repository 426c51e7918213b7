// Table types of the DMARC reports resource (migration 0016_dmarc_reports).
import type { Generated } from 'kysely';

export type ReportType = 'aggregate' | 'forensic';
export type ReportStatus = 'pending' | 'processed' | 'failed' | 'duplicate';
export type ReportSource = 'email' | 'upload';

export interface DmarcReportsTable {
  id: string; // dmr_
  workspace_id: string;
  domain_id: string;
  type: ReportType;
  status: ReportStatus;
  source: ReportSource;
  org_name: string | null; // reporting organization, once read
  reporter_email: string | null;
  extra_contact_info: string | null;
  external_id: string | null; // the reporter's own report id (aggregate) or the report's Message-ID (forensic)
  period_start: string | null; // aggregate: date_range begin; forensic: arrival of the failing message
  period_end: string | null;
  policy: string | null; // JSON: policy_published
  detail: string | null; // JSON: forensic fields, or aggregate metadata errors
  record_count: number;
  message_count: number;
  pass_count: number; // messages that passed DMARC
  filename: string | null;
  payload: string | null; // base64 of the file or message, until it is read
  failure_reason: string | null;
  duplicate_of: string | null; // the processed report this one repeats
  processed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DmarcRecordsTable {
  id: Generated<number>;
  report_id: string;
  domain_id: string;
  org_name: string;
  period_start: string;
  position: number;
  source_ip: string;
  message_count: number;
  disposition: string;
  dkim: string; // policy_evaluated: pass | fail
  spf: string;
  dmarc: string; // pass when dkim or spf passed aligned
  header_from: string;
  envelope_from: string | null;
  envelope_to: string | null;
  reasons: string; // JSON
  dkim_results: string; // JSON
  spf_results: string; // JSON
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    dmarc_reports: DmarcReportsTable;
    dmarc_records: DmarcRecordsTable;
  }
}
