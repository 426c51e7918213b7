// The main thread's side of the import worker (parse-worker.ts): feeds it the file's bytes as
// it asks for them and yields the batches it posts; a file error it meets is thrown here, as
// an ImportFileError, after every batch before it.
import { Worker } from 'node:worker_threads';
import type { FieldDefinitions } from '../../custom-fields/service.ts';
import type { ParsedBatch } from './batches.ts';
import type { FromWorker, ToWorker, WorkerInput } from './parse-worker.ts';
import { ImportFileError, type ImportFormat } from './sources.ts';

const WORKER = new URL('./parse-worker.ts', import.meta.url);
/** The worker's old generation: well above what the file's bounded shape needs (a row of at
 *  most 1 MB, batches of at most BATCH_CHARS, one ahead), and the ceiling of what an import
 *  can take whatever the file: a shape nobody foresaw fails the import, not the process. */
export const WORKER_HEAP_MB = 64;
// A small young generation: parsing makes garbage fast and V8 would let it grow to tens of MB.
const YOUNG_GENERATION_MB = 8;

export interface ParseThreadOptions {
  /** Ends the worker at once (the writes failed: nothing more is wanted). */
  signal?: AbortSignal;
  /** The old generation's ceiling in MB (default WORKER_HEAP_MB). */
  heapMb?: number;
}

export async function* parsedBatches(
  input: AsyncIterable<Buffer | string>,
  format: ImportFormat,
  definitions: FieldDefinitions,
  batchRows: number,
  options: ParseThreadOptions = {},
): AsyncGenerator<ParsedBatch> {
  const { signal } = options;
  const heapMb = options.heapMb ?? WORKER_HEAP_MB;
  const worker = new Worker(WORKER, {
    workerData: { format, definitions: [...definitions], batchRows } satisfies WorkerInput,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: heapMb },
    stdout: false,
    stderr: false,
  });
  const send = (message: ToWorker, transfer?: ArrayBuffer[]) => worker.postMessage(message, transfer);
  const iterator = input[Symbol.asyncIterator]();
  const queue: FromWorker[] = [];
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  const pump = async () => {
    try {
      const next = await iterator.next();
      if (next.done) return send({ type: 'end' });
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      // A copy the worker owns (transferred, not cloned again): chunks of a stream may share
      // a pooled buffer that must not be detached.
      const data = new Uint8Array(chunk);
      send({ type: 'chunk', data }, [data.buffer as ArrayBuffer]);
    } catch (error) {
      failure = error as Error;
      wake?.();
    }
  };
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'pull') void pump();
    else {
      queue.push(message);
      wake?.();
    }
  });
  worker.on('error', (error: Error & { code?: string }) => {
    failure =
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? new ImportFileError(
            `Reading the file took more than the ${heapMb} MB of memory an import may use; split it into smaller files or leave out columns it does not need`,
            0,
          )
        : error;
    wake?.();
  });
  worker.on('exit', (code) => {
    if (code !== 0 && !failure) failure = new Error(`the import's reader stopped (exit code ${code})`);
    wake?.();
  });
  signal?.addEventListener('abort', () => {
    failure ??= new Error('the import stopped');
    void worker.terminate();
    wake?.();
  });
  try {
    for (;;) {
      while (queue.length === 0 && !failure) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      const message = queue.shift();
      if (!message) throw failure!;
      if (message.type === 'done') return;
      if (message.type === 'error') {
        if (message.fileError) throw new ImportFileError(message.message, 0);
        throw new Error(message.message);
      }
      if (message.type === 'batch') {
        send({ type: 'ack' });
        yield message.batch;
      }
    }
  } finally {
    await worker.terminate();
    await iterator.return?.();
  }
}
