// How reports arrive. By mail: a domain with `dmarc_reports` on publishes `rua` and `ruf`
// addresses `dmarc-<random>@MAIL_HOSTNAME`, the inbound MX accepts mail for exactly those,
// and each report in a message is stored `pending` with a job that reads it, in the
// transaction that accepts the message (the 250 is sent after it commits). By upload: the
// same, read at once, so the response shows the outcome.
import type { AppContext } from '../../platform/context.ts';
import { type Db, type Executor, isForeignKeyViolation } from '../../platform/db/database.ts';
import { nowIso, nowMs } from '../../platform/clock.ts';
import { newId } from '../../platform/ids.ts';
import { enqueueJob } from '../../platform/jobs.ts';
import { messageError, plainError } from '../../platform/http/errors.ts';
import { MAX_REPORT_FILE_BYTES } from '../../mail/dmarc/files.ts';
import { looksLikeMessage, reportsInMessage, type FoundReport } from '../../mail/dmarc/message.ts';
import { PROCESS_JOB, processReport } from './processing.ts';
import { collectingDomain } from './access.ts';
import { NOT_FOUND as DOMAIN_NOT_FOUND } from '../domains/service.ts';
import { findReport, reportObject } from './service.ts';
import type { ReportSource } from './tables.ts';
import { transact } from '../../platform/db/transact.ts';

/** An upload is read at once; its job only runs if the process died before that. */
const UPLOAD_SAFETY_NET_MS = 5 * 60 * 1000;

export interface ReportMailbox {
  domainId: string;
  workspaceId: string;
}

/** The domain whose report address this is, if it collects reports now (Pro and up, switched
 *  on); null for any other address, so the MX refuses it. */
export async function findReportMailbox(db: Executor, address: string, mailHostname: string): Promise<ReportMailbox | null> {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== mailHostname.toLowerCase()) return null;
  const local = address.slice(0, at).toLowerCase();
  if (!/^dmarc-[0-9a-f]{16}$/.test(local)) return null;
  const row = await db
    .selectFrom('domains')
    .innerJoin('workspaces', 'workspaces.id', 'domains.workspace_id')
    .select(['domains.id', 'domains.workspace_id'])
    .where('domains.dmarc_address', '=', `${local}@${mailHostname.toLowerCase()}`)
    .where('domains.dmarc_reports', '=', 1)
    .where('workspaces.plan', '<>', 'payg')
    .executeTakeFirst();
  return row ? { domainId: row.id, workspaceId: row.workspace_id } : null;
}

interface NewReport {
  type: FoundReport['type'];
  filename: string | null;
  content: Buffer | null;
  failure: string | null;
}

async function insertReports(
  tx: Executor,
  mailbox: ReportMailbox,
  source: ReportSource,
  reports: NewReport[],
  jobDelayMs = 0,
): Promise<string[]> {
  const now = nowIso();
  const ids: string[] = [];
  for (const report of reports) {
    const id = newId('dmr');
    const tooLarge = report.content !== null && report.content.length > MAX_REPORT_FILE_BYTES;
    const failure = report.failure ?? (tooLarge ? `The report file is larger than ${MAX_REPORT_FILE_BYTES / (1024 * 1024)} MB` : null);
    await tx
      .insertInto('dmarc_reports')
      .values({
        id,
        workspace_id: mailbox.workspaceId,
        domain_id: mailbox.domainId,
        type: report.type,
        status: failure ? 'failed' : 'pending',
        source,
        org_name: null,
        reporter_email: null,
        extra_contact_info: null,
        external_id: null,
        period_start: null,
        period_end: null,
        policy: null,
        detail: null,
        record_count: 0,
        message_count: 0,
        pass_count: 0,
        filename: report.filename,
        payload: failure || !report.content ? null : report.content.toString('base64'),
        failure_reason: failure,
        duplicate_of: null,
        processed_at: failure ? now : null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    if (!failure) await enqueueJob(tx, PROCESS_JOB, { reportId: id }, { runAt: nowMs() + jobDelayMs });
    ids.push(id);
  }
  return ids;
}

/** Stores the reports of a message that arrived at the mailbox; a message without one is
 *  kept as a `failed` report saying so (the domain's owner can see what the reporter sent). */
export async function receiveReportMail(db: Db, mailbox: ReportMailbox, raw: Buffer): Promise<string[]> {
  const { reports, problem } = await reportsInMessage(raw);
  const rows: NewReport[] = problem
    ? [{ type: 'aggregate', filename: null, content: null, failure: problem }]
    : reports.map((r) => ({ type: r.type, filename: r.filename, content: r.content, failure: null }));
  return transact(db, (tx) => insertReports(tx, mailbox, 'email', rows));
}

export interface UploadInput {
  content: string;
  filename?: string | null;
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

/** What an upload holds: one aggregate file (XML, gzip, zip), or a report mail (.eml) with one report. */
async function uploadedReport(bytes: Buffer, filename: string | null): Promise<NewReport> {
  if (!looksLikeMessage(bytes)) return { type: 'aggregate', filename, content: bytes, failure: null };
  const { reports, problem } = await reportsInMessage(bytes);
  if (problem) throw plainError(400, problem);
  if (reports.length > 1) throw plainError(400, `The message holds ${reports.length} report files; upload them one at a time`);
  return { type: reports[0].type, filename: reports[0].filename ?? filename, content: reports[0].content, failure: null };
}

/** POST /domains/{id}/dmarc/reports: stores the file, reads it now and returns the report. */
export async function uploadReport(ctx: AppContext, workspaceId: string, idOrName: string, input: UploadInput) {
  const domain = await collectingDomain(ctx.db, workspaceId, idOrName);
  const text = input.content.trim();
  if (text === '' || !BASE64.test(text)) throw plainError(400, 'content must be the report file in base64');
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0) throw plainError(400, 'content must be the report file in base64');
  if (bytes.length > MAX_REPORT_FILE_BYTES) {
    throw messageError(413, 'Report too large', `A report file may be at most ${MAX_REPORT_FILE_BYTES / (1024 * 1024)} MB`);
  }
  const report = await uploadedReport(bytes, input.filename?.trim().slice(0, 255) || null);
  const mailbox = { domainId: domain.id, workspaceId };
  let id: string;
  try {
    // Checked again in the transaction: the domain may have been deleted or switched off while the file was read.
    [id] = await transact(ctx.db, async (tx) => {
      await collectingDomain(tx, workspaceId, domain.id);
      return insertReports(tx, mailbox, 'upload', [report], UPLOAD_SAFETY_NET_MS);
    });
  } catch (error) {
    // Deleted between that check and the insert (PostgreSQL): the same answer as a domain never there.
    if (isForeignKeyViolation(error)) throw plainError(404, DOMAIN_NOT_FOUND);
    throw error;
  }
  await processReport(ctx.db, id);
  return reportObject(ctx.db, domain, await findReport(ctx.db, workspaceId, domain, id));
}
