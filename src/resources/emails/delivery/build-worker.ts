// Worker thread of the build pool: composes and DKIM-signs messages off the main thread.
// Tasks arrive in batches; results of one turn of this thread's event loop go back together.
import { parentPort } from 'node:worker_threads';
import { buildOutgoingMessage } from './message.ts';
import type { BuildResult, BuildTask } from './build-pool.ts';
import type { StoredMessage } from '../content.ts';

let results: BuildResult[] = [];
let transfer: ArrayBuffer[] = [];

function reply(result: BuildResult, raw?: ArrayBuffer): void {
  results.push(result);
  if (raw) transfer.push(raw);
  if (results.length === 1) {
    setImmediate(() => {
      const batch = results;
      const buffers = transfer;
      results = [];
      transfer = [];
      parentPort!.postMessage(batch, buffers);
    });
  }
}

async function build(task: BuildTask): Promise<void> {
  try {
    const secrets = { verpSecret: Buffer.from(task.verpSecret), trackingSecret: Buffer.from(task.trackingSecret) };
    const built = await buildOutgoingMessage(task.email, JSON.parse(task.storedJson) as StoredMessage, task.domain, secrets, task.personal);
    const raw = built.raw.buffer.slice(built.raw.byteOffset, built.raw.byteOffset + built.raw.byteLength) as ArrayBuffer;
    reply({ id: task.id, envelopeFrom: built.envelopeFrom, raw, tracked: built.tracked }, raw);
  } catch (error) {
    reply({ id: task.id, error: error instanceof Error ? error.message : String(error) });
  }
}

parentPort!.on('message', (tasks: BuildTask[]) => {
  for (const task of tasks) void build(task);
});
