// `postlane contacts import` itself: the file streamed into runImport on this thread, its rows
// parsed in the import's worker thread (threaded.ts) on the other core. The process first
// replaces itself (process.execve, same pid and stdio) with one started with memory settings
// for a long allocation-heavy run, as the server does (src/main.ts): V8 otherwise grows the
// main thread's young generation to 128 MB under an import's allocation rate, and flags for
// the main thread can only be given before it starts.
import { createReadStream } from 'node:fs';
import type { Db } from '../platform/db/database.ts';
import { ApiError } from '../platform/http/errors.ts';
import { listWorkspaces } from '../resources/workspaces/service.ts';
import { runImport, CLI_BATCH_ROWS, type ImportFormat, type ImportSummary } from '../resources/contacts/import/run.ts';
import { withDatabase } from './workspace.ts';
import { UsageError } from './usage-error.ts';

// A young generation of about 12 MB (3 × the semi-space), and the old generation grown by a
// quarter, not doubled, between full collections; glibc's malloc arenas kept to two.
const IMPORT_V8_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=25'];

/** Restarts the process with IMPORT_V8_FLAGS unless it runs with them (or heap flags of the
 *  operator's own). Returns only when no restart is needed. */
export function restartWithImportMemorySettings(): void {
  const ownFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (
    typeof process.execve !== 'function' ||
    ownFlags.some((flag) => /^--(max-semi-space-size|heap-growing-percent|optimize-for-size)\b/.test(flag))
  )
    return;
  process.execve(process.execPath, [process.execPath, ...IMPORT_V8_FLAGS, ...process.execArgv, ...process.argv.slice(1)], {
    MALLOC_ARENA_MAX: '2',
    ...process.env,
  });
}

export interface ImportJob {
  file: string;
  workspace?: string;
  audience?: string;
  format?: ImportFormat;
}

/** The workspace named by --workspace, or the only one there is. */
export async function workspaceOf(db: Db, given: string | undefined): Promise<string> {
  if (given) return given;
  const all = await listWorkspaces(db);
  if (all.length === 1) return all[0].id;
  throw new UsageError(`--workspace ID is required (${all.length} workspaces exist; see postlane workspace list)`);
}

/** Imports `job.file`; `onProgress` after each committed batch (rows so far, bytes read). */
export async function importFile(job: ImportJob, onProgress: (rows: number, read: number) => void): Promise<ImportSummary> {
  return withDatabase(async (db) => {
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
        onBatch: (s) => onProgress(s.rows, read),
      });
    } catch (error) {
      if (error instanceof ApiError) throw new UsageError(String(error.body.error ?? error.message));
      throw error;
    }
  });
}
