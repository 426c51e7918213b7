// One entry point for the API and the CLI: a byte stream in, the import summary out. The API
// parses in a worker thread (the server's event loop only writes); the CLI's import already runs
// on its process's main thread (src/cli/contacts-import.ts) and parses in a worker too. A file
// that fails on its first bytes is refused before a worker is started (file-start.ts). An
// import takes a place first (slots.ts: one per workspace, two per process) and gives it back
// when it ends; its parsing thread's heap is capped (threaded.ts).
import type { Db } from '../../../platform/db/database.ts';
import { fieldDefinitions } from '../../custom-fields/service.ts';
import { BATCH_ROWS, importContacts, prepareImport, type ImportSummary, type ImportTarget } from './engine.ts';
import { Readable } from 'node:stream';
import { csvRows, formatOf, ImportFileError, jsonRows, type ImportFormat } from './sources.ts';
import { batchesOf } from './batches.ts';
import { parsedBatches } from './threaded.ts';
import { checkedFileStart } from './file-start.ts';
import { takeImportSlot } from './slots.ts';

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
  /** The parsing thread's heap ceiling in MB (default WORKER_HEAP_MB). */
  workerHeapMb?: number;
  /** The import fails when the file sends nothing for this long (default 60 s): a stalled
   *  upload must not keep its place (slots.ts) for ever. */
  idleTimeoutMs?: number;
  onBatch?: (summary: Readonly<ImportSummary>) => void;
}

/** Imports the file `input` carries. Thrown before a byte is read: 404 for an unknown
 *  audience, 429 when the workspace or the process runs as many imports as it may. */
export async function runImport(
  db: Db,
  workspaceId: string,
  input: AsyncIterable<Buffer | string>,
  options: RunImportOptions = {},
): Promise<ImportSummary> {
  const target = await prepareImport(db, workspaceId, options.audience);
  const release = takeImportSlot(workspaceId);
  try {
    return await importWithin(db, target, withIdleTimeout(input, options.idleTimeoutMs ?? IDLE_TIMEOUT_MS), options);
  } finally {
    release();
  }
}

const IDLE_TIMEOUT_MS = 60_000;

/** `input`, failing with an ImportFileError when a chunk takes longer than `ms` to come (the
 *  stream is left as it is: the caller drains or closes it). */
async function* withIdleTimeout<T>(input: AsyncIterable<T>, ms: number): AsyncGenerator<T> {
  const iterator = input[Symbol.asyncIterator]();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ImportFileError(`The file stopped arriving: nothing came for ${Math.round(ms / 1000)} s`, 0)),
        ms,
      );
    });
    try {
      const next = await Promise.race([iterator.next(), stalled]);
      if (next.done) return;
      yield next.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

async function importWithin(
  db: Db,
  target: ImportTarget,
  input: AsyncIterable<Buffer | string>,
  options: RunImportOptions,
): Promise<ImportSummary> {
  const iterator = input[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer | string>;
  try {
    first = await iterator.next();
  } catch (error) {
    if (!(error instanceof ImportFileError)) throw error;
    // Reported as every file error is: in the summary of an import that failed.
    return importContacts(
      db,
      target,
      (async function* () {
        throw error;
      })(),
      { format: options.format ?? 'csv' },
    );
  }
  const format =
    options.format ??
    formatOf(
      options.typeHint && !/octet-stream|text\/plain/.test(options.typeHint) ? options.typeHint : undefined,
      first.done ? '' : first.value,
    );
  async function* rest() {
    if (!first.done) yield first.value;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const definitions = await fieldDefinitions(db, target.workspaceId);
  const batchRows = Math.max(1, options.batchRows ?? BATCH_ROWS);
  const stop = new AbortController();
  const batches = options.parseInThread
    ? batchesOf(format === 'json' ? jsonRows(rest()) : csvRows(Readable.from(rest())), format, definitions, batchRows)
    : checkedFileStart(rest(), format, (checked) =>
        parsedBatches(checked, format, definitions, batchRows, { signal: stop.signal, heapMb: options.workerHeapMb }),
      );
  return importContacts(db, target, batches, { format, onBatch: options.onBatch, onFailure: () => stop.abort() });
}
