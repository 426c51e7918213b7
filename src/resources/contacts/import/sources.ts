// Import files as streams of rows, never held whole in memory: CSV (csv-parse; the first
// record is the header) and JSON (an array of objects, read by a small scanner of our own:
// the JSON libraries on the registry here either parse whole documents or pull in
// tokenizer frameworks, while an array of flat objects needs only bracket counting).
import { pipeline, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { lazyModule } from '../../../platform/lazy-module.ts';
import { restoreNeutralised } from '../../../platform/csv.ts';

// csv-parse loads with the first CSV file read.
const csvParse = lazyModule<typeof import('csv-parse')>('csv-parse');

export type ImportFormat = 'csv' | 'json';

/** One row of the file: its number (CSV: the header is row 1; JSON: the first element is 1)
 *  and its values by column name, or why it could not be read. */
export interface SourceRow {
  row: number;
  values: Record<string, unknown> | null;
  problem?: string;
}

export class ImportFileError extends Error {
  /** The row being read when the file turned out to be unreadable. */
  readonly row: number;
  constructor(message: string, row: number) {
    super(message);
    this.row = row;
  }
}

/** The format a file is in: by its declared type or name, else by its first character. */
export function formatOf(contentTypeOrName: string | undefined, firstChunk?: Buffer | string): ImportFormat {
  const hint = (contentTypeOrName ?? '').toLowerCase();
  if (/json/.test(hint)) return 'json';
  if (/csv|comma-separated/.test(hint)) return 'csv';
  const start =
    firstChunk === undefined
      ? ''
      : String(firstChunk)
          .replace(/^\uFEFF/, '')
          .trimStart();
  return start.startsWith('[') ? 'json' : 'csv';
}

// The shape of a file an import reads, bounded so that its memory is whatever the file's
// size: a row of the file (a CSV record, a JSON element) at most 1 MB, a CSV header at most
// 128 KB and 1,000 columns (email, names, unsubscribed and one per custom field; the same
// number of fields in a JSON element). A file beyond them fails with a message saying which.
export const MAX_RECORD_BYTES = 1_000_000;
export const MAX_HEADER_BYTES = 128 * 1024;
export const MAX_COLUMNS = 1000;
export const CSV_OPTIONS = { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, max_record_size: MAX_RECORD_BYTES };
export const NOT_AN_ARRAY = 'A JSON import must be an array of objects';

export async function* csvRows(input: Readable): AsyncGenerator<SourceRow> {
  // pipeline, not pipe: an error of the input (a stalled or broken upload) ends the parser
  // with it instead of leaving it waiting, or going unheard.
  const parser = csvParse().parse(CSV_OPTIONS);
  pipeline(input, parser, () => {});
  let header: string[] | null = null;
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      row++;
      if (!header) {
        checkHeader(record);
        header = record.map(restoreNeutralised);
        continue;
      }
      // Cells an export neutralised against spreadsheet formulas read back as they were.
      const values: Record<string, unknown> = {};
      for (let i = 0; i < header.length && i < record.length; i++) values[header[i]] = restoreNeutralised(record[i]);
      yield { row, values };
    }
  } catch (error) {
    input.destroy();
    if (error instanceof ImportFileError) throw error;
    // csv-parse says where it stopped: the record (from 1, the header included) and the line.
    const { records, lines } = error as { records?: number; lines?: number };
    const at = typeof records === 'number' ? records + 1 : row + 1;
    throw new ImportFileError(
      `The CSV could not be read at row ${at}${typeof lines === 'number' ? ` (line ${lines})` : ''}: ${(error as Error).message}`,
      at,
    );
  }
  if (!header) throw new ImportFileError('The file is empty: a CSV import needs a header row naming its columns (at least email)', 1);
}

/** Refuses a header row beyond MAX_HEADER_BYTES or MAX_COLUMNS (`cells`: the parsed row). */
export function checkHeader(cells: string[]): void {
  if (cells.length > MAX_COLUMNS) throw tooManyColumns(cells.length);
  const bytes = cells.reduce((n, cell) => n + Buffer.byteLength(cell) + 1, 0);
  if (bytes > MAX_HEADER_BYTES) throw headerTooLong();
}

/** `columns`: how many the header has, when it was read to its end. */
export const tooManyColumns = (columns?: number) =>
  new ImportFileError(
    `The CSV header has ${columns === undefined ? 'more than ' : ''}${(columns ?? MAX_COLUMNS).toLocaleString('en-US')} columns; an import takes at most ${MAX_COLUMNS.toLocaleString('en-US')} (email, names, unsubscribed and one per custom field)`,
    1,
  );

export const headerTooLong = () =>
  new ImportFileError(
    `The CSV could not be read at row 1: its header row is longer than ${MAX_HEADER_BYTES.toLocaleString('en-US')} bytes`,
    1,
  );

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The elements of a top-level JSON array, each parsed on its own. */
export async function* jsonRows(input: AsyncIterable<Buffer | string>): AsyncGenerator<SourceRow> {
  let started = false;
  let ended = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let element: string[] = [];
  let elementStart = -1;
  let row = 0;
  const finish = (text: string): SourceRow => {
    row++;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ImportFileError(`Element ${row} of the JSON array is not valid JSON`, row);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { row, values: null, problem: 'not an object' };
    const fields = Object.keys(value).length;
    if (fields > MAX_COLUMNS)
      return {
        row,
        values: null,
        problem: `has ${fields.toLocaleString('en-US')} fields; at most ${MAX_COLUMNS.toLocaleString('en-US')} are taken`,
      };
    return { row, values: value as Record<string, unknown> };
  };
  // A character split between two chunks is joined before scanning.
  const decoder = new StringDecoder('utf8');
  let pendingLength = 0;
  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    // Inside an element when the last chunk ended: it continues from this chunk's start.
    elementStart = element.length > 0 ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (ended) {
        if (!WS.has(c)) throw new ImportFileError('Unexpected text after the end of the JSON array', row + 1);
        continue;
      }
      if (!started) {
        if (c === 0xfeff || WS.has(c)) continue;
        if (c !== 0x5b /* [ */) throw new ImportFileError(NOT_AN_ARRAY, 1);
        started = true;
        depth = 1;
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (c === 0x22) {
        if (depth === 1 && elementStart < 0) elementStart = i;
        inString = true;
      } else if (c === 0x7b || c === 0x5b) {
        if (depth === 1 && elementStart < 0) elementStart = i;
        depth++;
      } else if (c === 0x7d || c === 0x5d) {
        if (depth === 1) {
          // The closing bracket of the array.
          if (elementStart >= 0) element.push(text.slice(elementStart, i));
          const last = element.join('').trim();
          if (last !== '') yield finish(last);
          element = [];
          elementStart = -1;
          ended = true;
          continue;
        }
        depth--;
      } else if (c === 0x2c /* , */ && depth === 1) {
        if (elementStart >= 0) element.push(text.slice(elementStart, i));
        const value = element.join('').trim();
        if (value === '') throw new ImportFileError(`Element ${row + 1} of the JSON array is empty`, row + 1);
        yield finish(value);
        element = [];
        elementStart = -1;
      } else if (depth === 1 && elementStart < 0 && !WS.has(c)) {
        elementStart = i;
      }
    }
    if (elementStart >= 0) element.push(text.slice(elementStart));
    pendingLength = element.reduce((n, part) => n + part.length, 0);
    if (pendingLength > MAX_RECORD_BYTES) throw new ImportFileError(`Element ${row + 1} of the JSON array is larger than 1 MB`, row + 1);
  }
  if (!started) throw new ImportFileError('The file is empty: a JSON import must be an array of objects', 1);
  if (!ended) throw new ImportFileError('The JSON array is not closed: the file ends early', row + 1);
}
