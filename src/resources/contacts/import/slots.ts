// How many imports run at once in this process: one per workspace, two in all. Each import
// has a parsing thread with a heap of its own and a writer holding a batch or two, so the
// server's memory for imports is bounded by the second number whatever clients send. An
// import beyond either limit is refused before its file is read, with 429 and a retry-after
// (the status the API answers for every limit a client may retry after), not queued: a
// queued upload would hold its connection and its unread bytes for as long as it waits.
import { ApiError } from '../../../platform/http/errors.ts';

export const IMPORTS_PER_WORKSPACE = 1;
export const IMPORTS_PER_PROCESS = 2;
const RETRY_AFTER_SECONDS = 10;

const byWorkspace = new Map<string, number>();
let running = 0;

function refusal(message: string, limit: number, current: number): ApiError {
  return new ApiError(
    429,
    { error: 'Too many imports', message, limit, current, retry_after: RETRY_AFTER_SECONDS },
    { 'retry-after': String(RETRY_AFTER_SECONDS) },
  );
}

/** Takes a place for one import of `workspaceId`, or throws the 429; call the returned
 *  function once the import has ended, however it ended. */
export function takeImportSlot(workspaceId: string): () => void {
  const own = byWorkspace.get(workspaceId) ?? 0;
  if (own >= IMPORTS_PER_WORKSPACE) {
    throw refusal(
      `An import into this workspace is already running; a workspace runs ${IMPORTS_PER_WORKSPACE} at a time. Retry when it has finished.`,
      IMPORTS_PER_WORKSPACE,
      own,
    );
  }
  if (running >= IMPORTS_PER_PROCESS) {
    throw refusal(`The server is running ${running} imports, as many as it runs at once. Retry in a moment.`, IMPORTS_PER_PROCESS, running);
  }
  byWorkspace.set(workspaceId, own + 1);
  running++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    running--;
    const left = (byWorkspace.get(workspaceId) ?? 1) - 1;
    if (left > 0) byWorkspace.set(workspaceId, left);
    else byWorkspace.delete(workspaceId);
  };
}
