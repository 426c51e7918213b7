// A list's results as a file (XLSX; CSV too), one row per address in the order given. The
// workbook is written by exceljs (loaded on first export: it takes a second to load, which
// every process start would otherwise pay); its cells are typed values, text never a formula.
// The CSV by the shared writer (src/platform/csv.ts), which neutralises cells a spreadsheet
// would run as formulas (an address may legally start with = + - or @).
import { csvLine } from '../../platform/csv.ts';
import type { VerificationRow } from '../email-verifications/service.ts';
import { verificationObject } from '../email-verifications/service.ts';

type Cell = string | number | boolean | null;

const CHECKS = [
  'valid_syntax',
  'disposable',
  'role_account',
  'free_email',
  'gibberish',
  'has_mx_records',
  'smtp_connect',
  'deliverable',
  'catch_all',
  'inbox_full',
  'disabled',
] as const;

export const EXPORT_COLUMNS = [
  'email',
  'status',
  'result',
  'score',
  'risk',
  ...CHECKS,
  'domain_age',
  'did_you_mean',
  'mx_record',
  'mailbox_check',
  'smtp_reply',
  'verified_at',
] as const;

/** One export row: the verification flattened to the columns above (null: empty cell). */
export function exportRow(row: VerificationRow): Cell[] {
  const v = verificationObject(row);
  const checks = (v.checks ?? {}) as Record<string, boolean | number | null>;
  return [
    v.email,
    v.status,
    v.result,
    v.score,
    v.risk,
    ...CHECKS.map((name) => (checks[name] ?? null) as Cell),
    (checks.domain_age ?? null) as Cell,
    v.did_you_mean,
    v.mx_records[0]?.exchange ?? null,
    v.mailbox_check?.outcome ?? null,
    v.mailbox_check?.message || null,
    v.status === 'pending' ? null : v.updated_at,
  ];
}

export async function exportWorkbook(pages: AsyncIterable<VerificationRow[]>, format: 'xlsx' | 'csv'): Promise<Buffer> {
  if (format === 'csv') {
    const lines = [csvLine(EXPORT_COLUMNS)];
    for await (const rows of pages) for (const row of rows) lines.push(csvLine(exportRow(row)));
    return Buffer.from(lines.join(''));
  }
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'Postlane';
  const sheet = workbook.addWorksheet('Results');
  sheet.addRow([...EXPORT_COLUMNS]);
  sheet.getRow(1).font = { bold: true };
  sheet.views = [{ state: 'frozen', ySplit: 1 }];
  for await (const rows of pages) {
    for (const row of rows) sheet.addRow(exportRow(row));
  }
  return Buffer.from((await workbook.xlsx.writeBuffer()) as ArrayBuffer);
}
