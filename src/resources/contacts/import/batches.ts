// The rows of an import file cut into batches (pure, no database): each row read and checked
// (rows.ts), bad rows listed with their reasons, good rows gathered until a batch is full or
// an address repeats (a second row for the same address goes into the next batch, where it
// finds the contact the first one made: the same outcome as when the rows are far apart).
// Runs in the import's worker thread (parse-worker.ts).
import type { FieldDefinitions } from '../../custom-fields/service.ts';
import { ColumnMap, hasEmailColumn, readRow, type ImportRow } from './rows.ts';
import { ImportFileError, type ImportFormat, type SourceRow } from './sources.ts';

/** A batch is cut at this many characters of row data too, whatever its row count: rows of
 *  up to a megabyte each must not make a batch of thousands of them (the parsing thread, the
 *  writing thread and the database each hold a batch or two at a time). */
export const BATCH_CHARS = 4_000_000;

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

export async function* batchesOf(
  source: AsyncIterable<SourceRow>,
  format: ImportFormat,
  definitions: FieldDefinitions,
  batchRows: number,
): AsyncGenerator<ParsedBatch> {
  const columns = new ColumnMap();
  let checkedHeader = format === 'json';
  let rows: ImportRow[] = [];
  let skipped: SkippedRow[] = [];
  let inBatch = new Set<string>();
  let rowsSeen = 0;
  let lastRow = 0;
  let chars = 0;
  const cut = (): ParsedBatch => {
    const batch = { rows, skipped, rowsSeen, lastRow };
    chars = 0;
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
    const size =
      read.value.email.length +
      (read.value.first_name?.length ?? 0) +
      (read.value.last_name?.length ?? 0) +
      read.value.custom_fields.length;
    if (inBatch.has(read.value.email) || rows.length + skipped.length >= batchRows || (rows.length > 0 && chars + size > BATCH_CHARS))
      yield cut();
    chars += size;
    rowsSeen++;
    rows.push(read.value);
    inBatch.add(read.value.email);
    lastRow = item.row;
  }
  yield cut();
}
