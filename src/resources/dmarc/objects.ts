// The DMARC report objects of the API: one summary shape for every report in a list, plus the
// aggregate report's policy and records or the forensic report's fields when retrieved.
import type { Selectable } from 'kysely';
import type { DmarcRecordsTable, DmarcReportsTable } from './tables.ts';

/** A report without its payload (the file or message, up to megabytes, kept only until read). */
export type ReportRow = Omit<Selectable<DmarcReportsTable>, 'payload'>;
export const REPORT_COLUMNS = [
  'id',
  'workspace_id',
  'domain_id',
  'type',
  'status',
  'source',
  'org_name',
  'reporter_email',
  'extra_contact_info',
  'external_id',
  'period_start',
  'period_end',
  'policy',
  'detail',
  'record_count',
  'message_count',
  'pass_count',
  'filename',
  'failure_reason',
  'duplicate_of',
  'processed_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof ReportRow>;
export type RecordRow = Selectable<DmarcRecordsTable>;

/** The fields of a forensic report kept in `detail` (snake_case, as the API shows them). */
export interface ForensicDetail {
  feedback_type: string;
  user_agent: string | null;
  version: string | null;
  auth_failure: string | null;
  delivery_result: string | null;
  identity_alignment: string | null;
  source_ip: string | null;
  arrival_date: string | null;
  original_mail_from: string | null;
  original_rcpt_to: string | null;
  original_envelope_id: string | null;
  reported_domain: string;
  reported_uri: string | null;
  authentication_results: string | null;
  dkim_domain: string | null;
  dkim_identity: string | null;
  dkim_selector: string | null;
  dkim_canonicalized_header: string | null;
  spf_dns: string | null;
  original_message: { from: string | null; to: string | null; subject: string | null; date: string | null; message_id: string | null };
  original_headers: string | null;
}

/** part / whole with 4 decimals; null when there is nothing to divide. */
export const ratio = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null);

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function reportSummary(row: ReportRow, domainName: string) {
  const messages = Number(row.message_count);
  const passed = Number(row.pass_count);
  return {
    object: 'dmarc_report' as const,
    id: row.id,
    type: row.type,
    status: row.status,
    domain_id: row.domain_id,
    domain: domainName,
    org_name: row.org_name,
    org_email: row.reporter_email,
    report_id: row.external_id,
    period_start: row.period_start,
    period_end: row.period_end,
    record_count: Number(row.record_count),
    message_count: messages,
    pass_count: passed,
    fail_count: messages - passed,
    pass_rate: ratio(passed, messages),
    source: row.source,
    filename: row.filename,
    failure_reason: row.failure_reason,
    duplicate_of: row.duplicate_of,
    processed_at: row.processed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function recordObject(row: RecordRow) {
  return {
    source_ip: row.source_ip,
    count: Number(row.message_count),
    disposition: row.disposition,
    dkim: row.dkim,
    spf: row.spf,
    dmarc: row.dmarc,
    reasons: parseJson<Array<{ type: string; comment: string | null }>>(row.reasons, []),
    header_from: row.header_from,
    envelope_from: row.envelope_from,
    envelope_to: row.envelope_to,
    auth_results: {
      dkim: parseJson<Array<{ domain: string; selector: string | null; result: string; human_result: string | null }>>(
        row.dkim_results,
        [],
      ),
      spf: parseJson<Array<{ domain: string; scope: string | null; result: string }>>(row.spf_results, []),
    },
  };
}

const NO_POLICY = { domain: null, adkim: null, aspf: null, p: null, sp: null, np: null, pct: null, fo: null };

export function aggregateReportObject(row: ReportRow, domainName: string, records: RecordRow[]) {
  const detail = parseJson<{ errors?: string[] }>(row.detail, {});
  return {
    ...reportSummary(row, domainName),
    extra_contact_info: row.extra_contact_info,
    policy_published: { ...NO_POLICY, ...parseJson<Record<string, unknown>>(row.policy, {}) },
    errors: detail.errors ?? [],
    records: records.map(recordObject),
  };
}

const NO_FORENSIC: ForensicDetail = {
  feedback_type: 'auth-failure',
  user_agent: null,
  version: null,
  auth_failure: null,
  delivery_result: null,
  identity_alignment: null,
  source_ip: null,
  arrival_date: null,
  original_mail_from: null,
  original_rcpt_to: null,
  original_envelope_id: null,
  reported_domain: '',
  reported_uri: null,
  authentication_results: null,
  dkim_domain: null,
  dkim_identity: null,
  dkim_selector: null,
  dkim_canonicalized_header: null,
  spf_dns: null,
  original_message: { from: null, to: null, subject: null, date: null, message_id: null },
  original_headers: null,
};

export function forensicReportObject(row: ReportRow, domainName: string) {
  const detail = parseJson<Partial<ForensicDetail>>(row.detail, {});
  return {
    ...reportSummary(row, domainName),
    ...NO_FORENSIC,
    reported_domain: domainName,
    ...detail,
  };
}
