// CSV cells for every export the service writes, safe to open in a spreadsheet. A text cell a
// spreadsheet would read as a formula (one starting with = + - @ or their full-width forms,
// possibly after spaces, or with a tab or a line break: contact names and custom fields come
// from public subscribe forms)
// is neutralised as OWASP's CSV injection guidance says
// (https://owasp.org/www-community/attacks/CSV_Injection): a single quote before it, and the
// cell quoted. A cell that starts with a single quote gets one more, so the import, which
// takes one off (restoreNeutralised), reads every exported value back exactly. Numbers and
// booleans are written as they are: a numeric literal such as -5 is a number to a
// spreadsheet, never a formula, and a number field must import back as a number.
// Cells holding a semicolon are quoted too: spreadsheets in locales whose list separator is
// ";" split the line there, and text after it would start a cell of its own.

const FORMULA_START = /^(?:[\t\r\n]|\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/;
const NEEDS_QUOTES = /[",;\r\n\t]|^\s|\s$/;

/** Whether a spreadsheet could read `text` as a formula, or it starts with a single quote. */
function needsNeutralising(text: string): boolean {
  return text.startsWith("'") || FORMULA_START.test(text);
}

/** `text` as a spreadsheet shows it as text (unchanged when it is harmless). */
export function neutraliseFormula(text: string): string {
  return needsNeutralising(text) ? `'${text}` : text;
}

/** The value a neutralised cell held (the inverse of neutraliseFormula; other text as it is). */
export function restoreNeutralised(text: string): string {
  return text.startsWith("'") && needsNeutralising(text.slice(1)) ? text.slice(1) : text;
}

/** One CSV cell: null and undefined empty, objects as JSON, text neutralised and quoted when needed. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  const raw = typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : JSON.stringify(value);
  const text = neutraliseFormula(raw);
  return text !== raw || NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV line (CRLF-terminated, as RFC 4180 writes them). */
export function csvLine(cells: readonly unknown[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
