// A list's results as a file (addendum §15.2: XLSX; CSV too), one row per address in the order
// given, written by exceljs (loaded on first export: it takes a second to load, which every
// process start would otherwise pay).
import type { VerificationRow } from '../email-verifications/service.ts';
import { verificationObject } from '../email-verifications/service.ts';

type Cell = string | number | boolean | null;

const CHECKS = ['valid_syntax', 'disposable', 'role_account', 'free_email', 'gibberish', 'has_mx_records', 'smtp_connect', 'deliverable', 'catch_all', 'inbox_full', 'disabled'] as const;

export const EXPORT_COLUMNS = [
  'email', 'status', 'result', 'score', 'risk', ...CHECKS, 'domain_age', 'did_you_mean', 'mx_record', 'mailbox_check', 'smtp_reply', 'verified_at',
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
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'Postlane';
  const sheet = workbook.addWorksheet('Results');
  sheet.addRow([...EXPORT_COLUMNS]);
  sheet.getRow(1).font = { bold: true };
  sheet.views = [{ state: 'frozen', ySplit: 1 }];
  for await (const rows of pages) {
    for (const row of rows) sheet.addRow(format === 'csv' ? exportRow(row).map(csvSafe) : exportRow(row));
  }
  const data = format === 'xlsx' ? await workbook.xlsx.writeBuffer() : await workbook.csv.writeBuffer();
  return Buffer.from(data as ArrayBuffer);
}

// A spreadsheet opening the CSV would run a cell starting with = + - @ as a formula (an
// address may legally start with one): such text gets a leading apostrophe. XLSX cells are
// typed as text, so the workbook needs no such care.
function csvSafe(cell: Cell): Cell {
  return typeof cell === 'string' && /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}
