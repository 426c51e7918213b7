// Background WAL checkpoints for a server's SQLite database.
//
// In WAL mode a commit only appends pages to the -wal file; now and then a checkpoint copies
// them back into the database file and fsyncs both. By default SQLite checkpoints inside the
// commit that crosses 1,000 pages: under a steady write load every few hundred commits, one
// stalls for the length of two fsyncs, and small transactions rewrite hot pages so often that
// these checkpoints were a third of all commit time. Here a worker thread with its own
// connection checkpoints every CHECKPOINT_EVERY_MS instead (PASSIVE: it never blocks a reader
// or the writer), so the event loop never waits on an fsync. The server's connection keeps a
// much larger automatic threshold as a safety net, should this thread fall behind or die.
// Durability is unchanged: a commit is in the WAL either way.
import { Worker } from 'node:worker_threads';

export const CHECKPOINT_EVERY_MS = 250;
/** wal_autocheckpoint of the server's connection while the background thread runs (pages). */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000;

const THREAD = `
const { workerData, parentPort } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 1000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try { checkpoint.get(); } catch (error) { parentPort.postMessage(String(error && error.message)); }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); try { checkpoint.get(); } catch {} db.close(); process.exit(0); });
`;

export interface Checkpointer {
  /** Runs a last checkpoint and closes the thread's connection. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, onError: (message: string) => void = () => {}): Checkpointer {
  // A young generation of 1 MB: the thread allocates next to nothing, yet an isolate's default
  // one grows to several MB of resident garbage between scavenges.
  const worker = new Worker(THREAD, {
    eval: true,
    workerData: { path, everyMs: CHECKPOINT_EVERY_MS },
    resourceLimits: { maxYoungGenerationSizeMb: 1 },
  });
  worker.on('message', onError);
  worker.on('error', (error) => onError(error.message));
  worker.unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (worker.threadId === -1) return resolve();
        worker.once('exit', () => resolve());
        // Unref'd while it runs, so it never keeps a process alive; while stopping it must, or a
        // shutting-down server's event loop empties before the exit and close() never returns.
        worker.ref();
        worker.postMessage('stop');
      }),
  };
}
