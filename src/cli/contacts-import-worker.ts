// `postlane contacts import` runs here, in a worker thread with a small young generation:
// V8 otherwise grows the main thread's new space to 128 MB under an import's allocation rate
// (flags for the main thread can only be given before it starts), and the process's memory
// with it. The main thread draws the progress this thread posts and prints the summary.
import { parentPort, workerData } from 'node:worker_threads';
import { createReadStream } from 'node:fs';
import type { Db } from '../platform/db/database.ts';
import { ApiError } from '../platform/http/errors.ts';
import { listWorkspaces } from '../resources/workspaces/service.ts';
import { runImport, CLI_BATCH_ROWS, type ImportFormat, type ImportSummary } from '../resources/contacts/import/run.ts';
import { withDatabase } from './workspace.ts';

export interface ImportJob {
  file: string;
  workspace?: string;
  audience?: string;
  format?: ImportFormat;
}
export type FromImport =
  | { type: 'progress'; rows: number; read: number }
  | { type: 'result'; summary: ImportSummary }
  | { type: 'usage'; message: string }
  | { type: 'failed'; message: string };

async function workspaceOf(db: Db, given: string | undefined): Promise<string> {
  if (given) return given;
  const all = await listWorkspaces(db);
  if (all.length === 1) return all[0].id;
  throw new Usage(`--workspace ID is required (${all.length} workspaces exist; see postlane workspace list)`);
}

class Usage extends Error {}

const job = workerData as ImportJob;
const post = (message: FromImport) => parentPort!.postMessage(message);
try {
  const summary = await withDatabase(async (db) => {
    const workspaceId = await workspaceOf(db, job.workspace);
    let read = 0;
    // Bytes counted as the import pulls them (a 'data' listener would start the flow early).
    async function* counted() {
      for await (const chunk of createReadStream(job.file, { highWaterMark: 256 * 1024 })) {
        read += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    }
    try {
      return await runImport(db, workspaceId, counted(), {
        audience: job.audience,
        format: job.format,
        typeHint: job.file,
        batchRows: CLI_BATCH_ROWS,
        parseInThread: true, // already off the main thread
        onBatch: (s) => post({ type: 'progress', rows: s.rows, read }),
      });
    } catch (error) {
      if (error instanceof ApiError) throw new Usage(String(error.body.error ?? error.message));
      throw error;
    }
  });
  post({ type: 'result', summary });
} catch (error) {
  post(error instanceof Usage ? { type: 'usage', message: error.message } : { type: 'failed', message: (error as Error).stack ?? String(error) });
}
