// The rows of an import file cut into batches (pure, no database): each row read and checked
// (rows.ts), bad rows listed with their reasons, good rows gathered until a batch is full or
// an address repeats (a second row for the same address goes into the next batch, where it
// finds the contact the first one made: the same outcome as when the rows are far apart).
// Runs in the import's worker thread (parse-worker.ts).
import type { FieldDefinitions } from '../../custom-fields/values.ts';
import { ColumnMap, hasEmailColumn, readRow, type ImportRow } from './rows.ts';
import { ImportFileError, type ImportFormat, type SourceRow } from './sources.ts';

export const NO_EMAIL_COLUMN = 'The CSV header has no email column (name one "email")';

export interface SkippedRow {
  row: number;
  email: string | null;
  reason: string;
}

export interface ParsedBatch {
  rows: ImportRow[];
  /** Rows of the file skipped since the previous batch, in file order. */
  skipped: SkippedRow[];
  /** Rows of the file read so far (the header aside). */
  rowsSeen: number;
  /** The file's row number of the last row this batch covers. */
  lastRow: number;
}

export async function* batchesOf(source: AsyncIterable<SourceRow>, format: ImportFormat, definitions: FieldDefinitions, batchRows: number): AsyncGenerator<ParsedBatch> {
  const columns = new ColumnMap();
  let checkedHeader = format === 'json';
  let rows: ImportRow[] = [];
  let skipped: SkippedRow[] = [];
  let inBatch = new Set<string>();
  let rowsSeen = 0;
  let lastRow = 0;
  const cut = (): ParsedBatch => {
    const batch = { rows, skipped, rowsSeen, lastRow };
    rows = [];
    skipped = [];
    inBatch = new Set();
    return batch;
  };
  for await (const item of source) {
    if (!checkedHeader) {
      checkedHeader = true;
      if (item.values && !hasEmailColumn(columns, Object.keys(item.values))) {
        throw new ImportFileError(NO_EMAIL_COLUMN, 1);
      }
    }
    const read = readRow(item, columns, definitions);
    if (!read.ok) {
      if (skipped.length + rows.length >= batchRows) yield cut();
      rowsSeen++;
      skipped.push({ row: read.row, email: read.email, reason: read.reason });
      lastRow = item.row;
      continue;
    }
    if (inBatch.has(read.value.email) || rows.length + skipped.length >= batchRows) yield cut();
    rowsSeen++;
    rows.push(read.value);
    inBatch.add(read.value.email);
    lastRow = item.row;
  }
  yield cut();
}
