// The main thread's side of the import worker (parse-worker.ts): feeds it the file's bytes as
// it asks for them and yields the batches it posts; a file error it meets is thrown here, as
// an ImportFileError, after every batch before it.
import { Worker } from 'node:worker_threads';
import type { FieldDefinitions } from '../../custom-fields/values.ts';
import type { ParsedBatch } from './batches.ts';
import type { FromWorker, ToWorker, WorkerInput } from './parse-worker.ts';
import { ImportFileError, type ImportFormat } from './sources.ts';

const WORKER = new URL('./parse-worker.ts', import.meta.url);
// The worker's heap: a small young generation (parsing makes garbage fast and V8 would let it
// grow to tens of MB), an old generation far above what two batches need.
const LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 256 };

/** `signal` ends the worker at once (the writes failed: nothing more is wanted). */
export async function* parsedBatches(input: AsyncIterable<Buffer | string>, format: ImportFormat, definitions: FieldDefinitions, batchRows: number, signal?: AbortSignal): AsyncGenerator<ParsedBatch> {
  const worker = new Worker(WORKER, {
    workerData: { format, definitions: [...definitions], batchRows } satisfies WorkerInput,
    resourceLimits: LIMITS,
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
  worker.on('error', (error) => {
    failure = error;
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
