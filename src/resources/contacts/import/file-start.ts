// The first bytes of a file checked on the main thread before a worker thread is started for
// it (starting one costs about half a second of CPU): a JSON file that does not open an array,
// or a CSV whose header row is unreadable or names no email column, is refused at once, so a
// client cannot make the server pay for a worker with a file that fails on its first bytes.
// Only what the worker would refuse anyway is refused here, with the same messages.
import { lazyModule } from '../../../platform/lazy-module.ts';
import {
  CSV_OPTIONS,
  MAX_HEADER_BYTES,
  MAX_RECORD_BYTES,
  MAX_COLUMNS,
  checkHeader,
  headerTooLong,
  tooManyColumns,
  ImportFileError,
  NOT_AN_ARRAY,
  type ImportFormat,
} from './sources.ts';
import { ColumnMap, hasEmailColumn } from './rows.ts';
import { NO_EMAIL_COLUMN } from './batches.ts';

// csv-parse loads with the first CSV file checked.
const csvParse = lazyModule<typeof import('csv-parse/sync')>('csv-parse/sync');

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const bytesOf = (chunks: Buffer[]) => chunks.reduce((n, chunk) => n + chunk.length, 0);

/** Finds where the header row ends, chunk by chunk (each byte looked at once): a line end
 *  outside double quotes, after at least one character (empty lines before it are skipped,
 *  as the parser does). Line ends and quotes are single bytes in UTF-8. */
class HeaderScanner {
  private inQuotes = false;
  private lineStart = 0;
  /** Whether the header row has begun (not only empty lines so far). */
  get begun(): boolean {
    return this.length > this.lineStart;
  }
  /** The header row's bytes seen so far. */
  get headerBytes(): number {
    return Math.max(0, this.length - this.lineStart);
  }
  /** Commas outside quotes in the header row so far (its columns less one). */
  separators = 0;
  /** Bytes looked at so far. */
  length = 0;
  /** The header's bytes, BOM aside, once its line end is seen. */
  header: { start: number; end: number } | null = null;

  scan(chunk: Buffer): void {
    for (let i = 0; i < chunk.length && !this.header; i++) {
      const at = this.length + i;
      const c = chunk[i];
      if (at === 0 && c === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
        this.lineStart = 3;
        i += 2;
      } else if (c === 0x22) this.inQuotes = !this.inQuotes;
      else if (c === 0x2c && !this.inQuotes) this.separators++;
      else if (!this.inQuotes && (c === 0x0a || c === 0x0d)) {
        if (at > this.lineStart) this.header = { start: this.lineStart, end: at };
        else this.lineStart = at + 1;
      }
    }
    this.length += chunk.length;
  }
}

/** Throws the ImportFileError the worker would meet in the file's first bytes (`chunks`, the
 *  last one new); false while they are too few to tell. */
function decided(chunks: Buffer[], format: ImportFormat, scanner: HeaderScanner): boolean {
  const chunk = chunks.at(-1)!;
  if (format === 'json') {
    const start = chunks.length === 1 && chunk.subarray(0, 3).equals(BOM) ? 3 : 0;
    for (let i = start; i < chunk.length; i++) {
      if (WS.has(chunk[i])) continue;
      if (chunk[i] !== 0x5b /* [ */) throw new ImportFileError(NOT_AN_ARRAY, 1);
      return true;
    }
    // Whitespace only so far: past a megabyte of it, the worker reads the rest.
    return bytesOf(chunks) > MAX_RECORD_BYTES;
  }
  scanner.scan(chunk);
  if (!scanner.header) {
    if (scanner.separators >= MAX_COLUMNS) throw tooManyColumns();
    if (scanner.begun && scanner.headerBytes > MAX_HEADER_BYTES) throw headerTooLong();
    // Only empty lines so far: past a megabyte of them, the worker reads the rest.
    return !scanner.begun && scanner.length > MAX_RECORD_BYTES;
  }
  let header: string[];
  try {
    [header = []] = csvParse().parse(Buffer.concat(chunks).subarray(scanner.header.start, scanner.header.end), CSV_OPTIONS) as string[][];
  } catch (error) {
    throw new ImportFileError(`The CSV could not be read at row 1: ${(error as Error).message}`, 1);
  }
  checkHeader(header);
  if (!hasEmailColumn(new ColumnMap(), header)) throw new ImportFileError(NO_EMAIL_COLUMN, 1);
  return true;
}

/** `input` read until its start is known to be good (then all of it, from the first byte, is
 *  handed to `then`), or refused with an ImportFileError. A file that ends before that is
 *  handed on whole: the parser has the last word on it. */
export async function* checkedFileStart<T>(
  input: AsyncIterable<Buffer | string>,
  format: ImportFormat,
  then: (input: AsyncIterable<Buffer | string>) => AsyncIterable<T>,
): AsyncGenerator<T> {
  const iterator = input[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let ended = false;
  const scanner = new HeaderScanner();
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        break;
      }
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      if (chunk.length === 0) continue;
      chunks.push(chunk);
      if (decided(chunks, format, scanner)) break;
    }
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  async function* whole() {
    yield* chunks;
    if (ended) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  yield* then(whole());
}
