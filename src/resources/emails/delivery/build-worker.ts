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

/** Epoch milliseconds, finer than Date.now(), on the same clock as the main thread's spans. */
const epochMs = () => performance.timeOrigin + performance.now();

async function build(task: BuildTask): Promise<void> {
  const startMs = task.traceparent ? epochMs() : 0;
  try {
    const { domain, secrets } = contextOf(task);
    const built = await buildOutgoingMessage(task.email, JSON.parse(task.storedJson) as StoredMessage, domain, secrets, task.personal);
    const raw = built.raw.buffer.slice(built.raw.byteOffset, built.raw.byteOffset + built.raw.byteLength) as ArrayBuffer;
    const result: BuildResult = { id: task.id, envelopeFrom: built.envelopeFrom, raw, tracked: built.tracked };
    if (task.traceparent) result.span = { traceparent: task.traceparent, startMs, endMs: epochMs() };
    reply(result, raw);
  } catch (error) {
    reply({ id: task.id, error: error instanceof Error ? error.message : String(error), retryable: error instanceof MissingContext });
  }
}

// Builds run a few at a time, in arrival order: a batch can hold a few hundred messages (the
// deliveries in flight), and starting them all at once kept every one's objects alive until
// the last finished (30 MB more RSS at the deliver bench's peak) and sent no result back
// before the whole batch was done. Two lanes: while one waits for its RSA signature on the
// thread pool or on the composer's streams, the other composes. Four (four signatures on the
// pool at once) starved the main thread on 2 cores: end to end fell to 392-409 msg/s.
const LANES = 2;
const queue: BuildTask[] = [];
let active = 0;

async function lane(): Promise<void> {
  active++;
  while (queue.length > 0) await build(queue.shift()!);
  active--;
}

parentPort!.on('message', (tasks: BuildTask[]) => {
  queue.push(...tasks);
  while (active < LANES && queue.length > 0) void lane();
});
