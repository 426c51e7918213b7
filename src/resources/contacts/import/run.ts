// One entry point for the API and the CLI: a byte stream in, the import summary out. The API
// parses in a worker thread (the server's event loop only writes); the CLI's import already runs
// on its process's main thread (src/cli/contacts-import.ts) and parses in a worker too. A file
// that fails on its first bytes is refused before a worker is started (file-start.ts).
import type { Db } from '../../../platform/db/database.ts';
import { fieldDefinitions } from '../../custom-fields/service.ts';
import { BATCH_ROWS, importContacts, prepareImport, type ImportSummary } from './engine.ts';
import { Readable } from 'node:stream';
import { csvRows, formatOf, jsonRows, type ImportFormat } from './sources.ts';
import { batchesOf } from './batches.ts';
import { parsedBatches } from './threaded.ts';
import { checkedFileStart } from './file-start.ts';

export { BATCH_ROWS, CLI_BATCH_ROWS, type ImportSummary } from './engine.ts';
export { ImportFileError, type ImportFormat } from './sources.ts';

export interface RunImportOptions {
  audience?: string | null;
  /** csv or json; else from `typeHint` (content type or file name), else the first byte. */
  format?: ImportFormat;
  typeHint?: string;
  /** Rows per transaction (default BATCH_ROWS). */
  batchRows?: number;
  /** Parse on this thread instead of a worker (a caller that is itself a worker thread). */
  parseInThread?: boolean;
  onBatch?: (summary: Readonly<ImportSummary>) => void;
}

/** Imports the file `input` carries. 404 (thrown) for an unknown audience, before reading. */
export async function runImport(db: Db, workspaceId: string, input: AsyncIterable<Buffer | string>, options: RunImportOptions = {}): Promise<ImportSummary> {
  const target = await prepareImport(db, workspaceId, options.audience);
  const iterator = input[Symbol.asyncIterator]();
  const first = await iterator.next();
  const format = options.format ?? formatOf(options.typeHint && !/octet-stream|text\/plain/.test(options.typeHint) ? options.typeHint : undefined, first.done ? '' : first.value);
  async function* rest() {
    if (!first.done) yield first.value;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const definitions = await fieldDefinitions(db, workspaceId);
  const batchRows = Math.max(1, options.batchRows ?? BATCH_ROWS);
  const stop = new AbortController();
  const batches = options.parseInThread
    ? batchesOf(format === 'json' ? jsonRows(rest()) : csvRows(Readable.from(rest())), format, definitions, batchRows)
    : checkedFileStart(rest(), format, (checked) => parsedBatches(checked, format, definitions, batchRows, stop.signal));
  return importContacts(db, target, batches, { format, onBatch: options.onBatch, onFailure: () => stop.abort() });
}
