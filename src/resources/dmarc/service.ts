// Reading a domain's DMARC reports (https://emailit.com/docs/api-reference/dmarc.md): the list of
// every report (aggregate and forensic) with its parameters and filters, one report, the forensic
// list and one forensic report. Lists page with `limit` and `offset`
// (https://emailit.com/docs/api-reference/pagination/) and say `meta` {total, limit, offset};
// newest first unless sorted.
import type { Db } from '../../platform/db/database.ts';
import { plainError } from '../../platform/http/errors.ts';
import { applyListQuery, countRows, type ListSpec, type Query } from '../../platform/http/lists.ts';
import { reportDomain, type ReportDomain } from './access.ts';
import { aggregateReportObject, forensicReportObject, REPORT_COLUMNS, reportSummary, type ReportRow } from './objects.ts';
import { periodBounds, periodCondition } from './period.ts';

export const REPORT_NOT_FOUND = 'DMARC report not found';
export const REPORT_TYPES = ['aggregate', 'forensic'] as const;
export const REPORT_STATUSES = ['pending', 'processed', 'failed', 'duplicate'] as const;

const listSpec: ListSpec = {
  fields: {
    type: { type: 'enum', values: REPORT_TYPES },
    status: { type: 'enum', values: REPORT_STATUSES },
    source: { type: 'enum', values: ['email', 'upload'] },
    org_name: { type: 'string' },
    org_email: { type: 'string', column: 'reporter_email' },
    report_id: { type: 'string', column: 'external_id' },
    filename: { type: 'string' },
    failure_reason: { type: 'string' },
    period_start: { type: 'date' },
    period_end: { type: 'date' },
    processed_at: { type: 'date' },
    created_at: { type: 'date' },
    record_count: { type: 'number' },
    message_count: { type: 'number' },
    pass_count: { type: 'number' },
  },
  sortConvention: 'order-direction',
  defaultSortColumn: 'created_at',
};

/** A single query value (a repeated parameter counts once). */
export const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** `limit` and `offset` as validated by the route's schema. */
export function paging(query: Query, defaultLimit: number): { limit: number; offset: number } {
  return { limit: Number(one(query.limit) ?? defaultLimit), offset: Number(one(query.offset) ?? 0) };
}

function reportsQuery(db: Db, workspaceId: string, domain: ReportDomain, query: Query) {
  const bounds = periodBounds({ from: one(query.from), to: one(query.to) });
  const [type, status, orgName] = [one(query.type), one(query.status), one(query.org_name)];
  let qb = db.selectFrom('dmarc_reports').select(REPORT_COLUMNS).where('workspace_id', '=', workspaceId).where('domain_id', '=', domain.id);
  if (type) qb = qb.where('type', '=', type as ReportRow['type']);
  if (status) qb = qb.where('status', '=', status as ReportRow['status']);
  if (orgName) qb = qb.where('org_name', '=', orgName);
  if (bounds.start || bounds.end) qb = qb.where((eb) => periodCondition(eb, 'period_start', bounds));
  return qb;
}

async function page<T>(db: Db, workspaceId: string, domain: ReportDomain, query: Query, toItem: (row: ReportRow) => T) {
  const { limit, offset } = paging(query, 25);
  const base = reportsQuery(db, workspaceId, domain, query);
  const [rows, total] = await Promise.all([
    applyListQuery(base, query, listSpec).limit(limit).offset(offset).execute(),
    countRows(applyListQuery(base, query, listSpec)),
  ]);
  return { data: rows.map(toItem), meta: { total, limit, offset } };
}

/** GET /domains/{id}/dmarc/reports */
export async function listReports(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const domain = await reportDomain(db, workspaceId, idOrName);
  return page(db, workspaceId, domain, query, (row) => reportSummary(row, domain.name));
}

/** GET /domains/{id}/dmarc/forensic: forensic reports only, with their fields. */
export async function listForensicReports(db: Db, workspaceId: string, idOrName: string, query: Query) {
  const domain = await reportDomain(db, workspaceId, idOrName);
  return page(db, workspaceId, domain, { ...query, type: 'forensic' }, (row) => forensicReportObject(row, domain.name));
}

export async function findReport(db: Db, workspaceId: string, domain: ReportDomain, reportId: string): Promise<ReportRow> {
  const row = await db
    .selectFrom('dmarc_reports')
    .select(REPORT_COLUMNS)
    .where('id', '=', reportId)
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domain.id)
    .executeTakeFirst();
  if (!row) throw plainError(404, REPORT_NOT_FOUND);
  return row;
}

/** A report as retrieved: an aggregate report with its records, or a forensic report. */
export async function reportObject(db: Db, domain: ReportDomain, row: ReportRow) {
  if (row.type === 'forensic') return forensicReportObject(row, domain.name);
  const records = await db.selectFrom('dmarc_records').selectAll().where('report_id', '=', row.id).orderBy('position').execute();
  return aggregateReportObject(row, domain.name, records);
}

/** GET /domains/{id}/dmarc/reports/{report_id}: any report of the list. */
export async function getReport(db: Db, workspaceId: string, idOrName: string, reportId: string) {
  const domain = await reportDomain(db, workspaceId, idOrName);
  return reportObject(db, domain, await findReport(db, workspaceId, domain, reportId));
}

/** GET /domains/{id}/dmarc/forensic/{report_id}: a forensic report only. */
export async function getForensicReport(db: Db, workspaceId: string, idOrName: string, reportId: string) {
  const domain = await reportDomain(db, workspaceId, idOrName);
  const row = await findReport(db, workspaceId, domain, reportId);
  if (row.type !== 'forensic') throw plainError(404, REPORT_NOT_FOUND);
  return forensicReportObject(row, domain.name);
}
