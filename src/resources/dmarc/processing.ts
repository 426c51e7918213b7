// Reading a received report: a `pending` report's payload is parsed (outside any transaction:
// it is the slow part), then ONE transaction makes it `processed` with its records, `duplicate`
// of the report already processed with the same reporter, report id and domain, or `failed`
// with the reason. Only a pending report moves, so running twice (a job retried after its
// lease ran out, an upload's safety-net job) changes nothing the second time.
import type { Db, Executor } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { isoFromMs, nowIso } from '../../platform/clock.ts';
import { parseAggregateXml, decodeXml, type AggregateReport } from '../../mail/dmarc/aggregate.ts';
import { DmarcReportError } from '../../mail/dmarc/errors.ts';
import { parseReportFilename, reportXmlBytes } from '../../mail/dmarc/files.ts';
import { parseForensicReport, type ForensicReport } from '../../mail/dmarc/forensic.ts';
import type { ForensicDetail } from './objects.ts';
import type { DmarcRecordsTable, DmarcReportsTable } from './tables.ts';
import type { Insertable, Selectable, Updateable } from 'kysely';

export const PROCESS_JOB = 'dmarc.process';

type ReportRow = Selectable<DmarcReportsTable>;

/** Rows per INSERT: 18 columns stay far below both engines' parameter limits. */
const RECORD_BATCH = 500;

type Parsed = { type: 'aggregate'; report: AggregateReport } | { type: 'forensic'; report: ForensicReport };

async function parsePayload(row: ReportRow): Promise<Parsed> {
  if (row.payload === null) throw new DmarcReportError('The report content is missing');
  const bytes = Buffer.from(row.payload, 'base64');
  if (row.type === 'forensic') return { type: 'forensic', report: await parseForensicReport(bytes) };
  return { type: 'aggregate', report: parseAggregateXml(decodeXml(await reportXmlBytes(bytes))) };
}

/** A report about `domain` itself or one of its subdomains (their mail falls under its policy). */
function coversDomain(reported: string, domain: string): boolean {
  const name = reported.replace(/\.$/, '');
  return name === domain || name.endsWith(`.${domain}`);
}

const iso = (seconds: number) => isoFromMs(seconds * 1000);

function aggregateColumns(report: AggregateReport): Updateable<DmarcReportsTable> {
  const messages = report.records.reduce((sum, r) => sum + r.count, 0);
  const passed = report.records.reduce((sum, r) => sum + (r.dmarc === 'pass' ? r.count : 0), 0);
  return {
    org_name: report.orgName.slice(0, 255),
    reporter_email: report.email?.slice(0, 255) ?? null,
    extra_contact_info: report.extraContactInfo?.slice(0, 1000) ?? null,
    external_id: report.reportId.slice(0, 255),
    period_start: iso(report.begin),
    period_end: iso(report.end),
    policy: JSON.stringify(report.policy),
    detail: report.errors.length ? JSON.stringify({ errors: report.errors.slice(0, 20) }) : null,
    record_count: report.records.length,
    message_count: messages,
    pass_count: passed,
  };
}

function forensicColumns(report: ForensicReport): Updateable<DmarcReportsTable> {
  const arrival = report.arrivalMs === null ? null : isoFromMs(report.arrivalMs);
  const detail: ForensicDetail = {
    feedback_type: report.feedbackType,
    user_agent: report.userAgent,
    version: report.version,
    auth_failure: report.authFailure,
    delivery_result: report.deliveryResult,
    identity_alignment: report.identityAlignment,
    source_ip: report.sourceIp,
    arrival_date: arrival,
    original_mail_from: report.originalMailFrom,
    original_rcpt_to: report.originalRcptTo,
    original_envelope_id: report.originalEnvelopeId,
    reported_domain: report.reportedDomain,
    reported_uri: report.reportedUri,
    authentication_results: report.authenticationResults,
    dkim_domain: report.dkimDomain,
    dkim_identity: report.dkimIdentity,
    dkim_selector: report.dkimSelector,
    dkim_canonicalized_header: report.dkimCanonicalizedHeader,
    spf_dns: report.spfDns,
    original_message: {
      from: report.original.from,
      to: report.original.to,
      subject: report.original.subject,
      date: report.original.date,
      message_id: report.original.messageId,
    },
    original_headers: report.original.headers,
  };
  return {
    org_name: report.orgName.slice(0, 255),
    reporter_email: report.reporterEmail?.slice(0, 255) ?? null,
    external_id: report.reportId.slice(0, 255),
    period_start: arrival,
    period_end: arrival,
    detail: JSON.stringify(detail),
    // One failing message per forensic report.
    record_count: 0,
    message_count: 1,
    pass_count: 0,
  };
}

function recordRows(row: ReportRow, report: AggregateReport, columns: Updateable<DmarcReportsTable>): Insertable<DmarcRecordsTable>[] {
  return report.records.map((record, position) => ({
    report_id: row.id,
    domain_id: row.domain_id,
    org_name: columns.org_name as string,
    period_start: columns.period_start as string,
    position,
    source_ip: record.sourceIp,
    message_count: record.count,
    disposition: record.disposition,
    dkim: record.dkim,
    spf: record.spf,
    dmarc: record.dmarc,
    header_from: record.headerFrom.slice(0, 255),
    envelope_from: record.envelopeFrom?.slice(0, 255) ?? null,
    envelope_to: record.envelopeTo?.slice(0, 255) ?? null,
    reasons: JSON.stringify(record.reasons),
    dkim_results: JSON.stringify(record.dkimResults),
    spf_results: JSON.stringify(record.spfResults),
  }));
}

/** Moves the report out of `pending` (false when it was not pending any more). */
async function settle(tx: Executor, id: string, changes: Updateable<DmarcReportsTable>): Promise<boolean> {
  const now = nowIso();
  const result = await tx
    .updateTable('dmarc_reports')
    .set({ ...changes, payload: null, processed_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

async function storeParsed(db: Db, row: ReportRow, parsed: Parsed): Promise<void> {
  const columns = parsed.type === 'aggregate' ? aggregateColumns(parsed.report) : forensicColumns(parsed.report);
  await db.transaction().execute(async (tx) => {
    const original = await tx
      .selectFrom('dmarc_reports')
      .select('id')
      .where('domain_id', '=', row.domain_id)
      .where('type', '=', row.type)
      .where('org_name', '=', columns.org_name as string)
      .where('external_id', '=', columns.external_id as string)
      .where('status', '=', 'processed')
      .executeTakeFirst();
    if (original) {
      // A copy keeps what identifies it, not the counts: breakdowns count the original only.
      await settle(tx, row.id, {
        ...columns,
        status: 'duplicate',
        duplicate_of: original.id,
        record_count: 0,
        message_count: 0,
        pass_count: 0,
      });
      return;
    }
    // The status moves first: a second runner waits on this row, then finds it settled.
    if (!(await settle(tx, row.id, { ...columns, status: 'processed' }))) return;
    if (parsed.type !== 'aggregate') return;
    const rows = recordRows(row, parsed.report, columns);
    for (let i = 0; i < rows.length; i += RECORD_BATCH)
      await tx
        .insertInto('dmarc_records')
        .values(rows.slice(i, i + RECORD_BATCH))
        .execute();
  });
}

/** A report that cannot be read; its file name still says who sent it and for when. */
async function fail(db: Executor, row: ReportRow, reason: string): Promise<void> {
  const named = parseReportFilename(row.filename);
  const fromName = named ? { org_name: named.receiver, period_start: iso(named.begin), period_end: iso(named.end) } : {};
  await settle(db, row.id, { ...fromName, status: 'failed', failure_reason: reason.slice(0, 1000) });
}

/** Reads and stores one pending report; a report that cannot be read becomes `failed`. */
export async function processReport(db: Db, reportId: string): Promise<void> {
  const row = await db.selectFrom('dmarc_reports').selectAll().where('id', '=', reportId).executeTakeFirst();
  if (!row || row.status !== 'pending') return;
  const domain = await db.selectFrom('domains').select('name').where('id', '=', row.domain_id).executeTakeFirst();
  if (!domain) return;
  let parsed: Parsed;
  try {
    parsed = await parsePayload(row);
  } catch (error) {
    if (error instanceof DmarcReportError) return fail(db, row, error.message);
    throw error; // not the report's fault: the job tries again
  }
  const reported = parsed.type === 'aggregate' ? parsed.report.policy.domain : parsed.report.reportedDomain;
  if (!coversDomain(reported, domain.name)) {
    return fail(db, row, `The report is about ${reported.slice(0, 253)}, not ${domain.name} or one of its subdomains`);
  }
  try {
    await storeParsed(db, row, parsed);
  } catch (error) {
    // The same report was processed at this very moment by another worker: now it is a duplicate.
    if (!isUniqueViolation(error)) throw error;
    await storeParsed(db, row, parsed);
  }
}
