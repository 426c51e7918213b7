// The import's worker thread: reads the file's bytes (pulled from the main thread chunk by
// chunk), parses and checks the rows and posts them in batches, at most one ahead of the
// batch being written. Parsing allocates most of an import's short-lived objects; here they
// live in a heap of their own with a small young generation (resourceLimits), so the
// process's memory stays flat whatever the file's size, and parsing runs beside the writes.
import { parentPort, workerData } from 'node:worker_threads';
import { Readable } from 'node:stream';
import type { FieldDefinition } from '../../custom-fields/service.ts';
import { batchesOf } from './batches.ts';
import { csvRows, ImportFileError, jsonRows, type ImportFormat } from './sources.ts';

export interface WorkerInput {
  format: ImportFormat;
  definitions: Array<[string, FieldDefinition]>;
  batchRows: number;
}
export type ToWorker = { type: 'chunk'; data: Uint8Array } | { type: 'end' } | { type: 'ack' };
export type FromWorker =
  | { type: 'pull' }
  | { type: 'batch'; batch: import('./batches.ts').ParsedBatch }
  | { type: 'done' }
  | { type: 'error'; message: string; fileError: boolean };

const MAX_AHEAD = 1;
const port = parentPort!;
const input = workerData as WorkerInput;

let onInput: ((message: ToWorker) => void) | null = null;
let onAck: (() => void) | null = null;
let ahead = 0;
port.on('message', (message: ToWorker) => {
  if (message.type === 'ack') {
    ahead--;
    onAck?.();
  } else onInput?.(message);
});

async function* bytes(): AsyncGenerator<Buffer> {
  for (;;) {
    const message = await new Promise<ToWorker>((resolve) => {
      onInput = resolve;
      port.postMessage({ type: 'pull' } satisfies FromWorker);
    });
    onInput = null;
    if (message.type !== 'chunk') return;
    yield Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength);
  }
}

try {
  const source = input.format === 'json' ? jsonRows(bytes()) : csvRows(Readable.from(bytes()));
  for await (const batch of batchesOf(source, input.format, new Map(input.definitions), input.batchRows)) {
    while (ahead >= MAX_AHEAD) await new Promise<void>((resolve) => (onAck = resolve));
    onAck = null;
    ahead++;
    port.postMessage({ type: 'batch', batch } satisfies FromWorker);
  }
  port.postMessage({ type: 'done' } satisfies FromWorker);
} catch (error) {
  port.postMessage({ type: 'error', message: (error as Error).message, fileError: error instanceof ImportFileError } satisfies FromWorker);
}
port.unref();
