// Worker thread of the build pool: composes and DKIM-signs messages off the main thread.
// Tasks arrive in batches; results of one turn of this thread's event loop go back together.
import { parentPort } from 'node:worker_threads';
import { buildOutgoingMessage, type BuildSecrets } from './message.ts';
import type { SendingDomain } from '../../domains/service.ts';
import type { BuildResult, BuildTask } from './build-pool.ts';
import { MAX_CONTEXTS } from './build-context.ts';
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

/** Not the message's fault: the job is tried again (the pool and this thread disagree). */
class MissingContext extends Error {}

// Signing contexts by id, kept in the order they came (the pool drops the same oldest ones).
const contexts = new Map<number, { domain: SendingDomain; secrets: BuildSecrets }>();

function contextOf(task: BuildTask) {
  if (task.context) {
    if (contexts.size >= MAX_CONTEXTS) contexts.delete(contexts.keys().next().value!);
    const { domain, verpSecret, trackingSecret } = task.context;
    contexts.set(task.contextId, { domain, secrets: { verpSecret: Buffer.from(verpSecret), trackingSecret: Buffer.from(trackingSecret) } });
  }
  const context = contexts.get(task.contextId);
  if (!context) throw new MissingContext(`unknown build context ${task.contextId}`);
  return context;
}

async function build(task: BuildTask): Promise<void> {
  try {
    const { domain, secrets } = contextOf(task);
    const built = await buildOutgoingMessage(task.email, JSON.parse(task.storedJson) as StoredMessage, domain, secrets, task.personal);
    const raw = built.raw.buffer.slice(built.raw.byteOffset, built.raw.byteOffset + built.raw.byteLength) as ArrayBuffer;
    reply({ id: task.id, envelopeFrom: built.envelopeFrom, raw, tracked: built.tracked }, raw);
  } catch (error) {
    reply({ id: task.id, error: error instanceof Error ? error.message : String(error), retryable: error instanceof MissingContext });
  }
}

parentPort!.on('message', (tasks: BuildTask[]) => {
  for (const task of tasks) void build(task);
});
