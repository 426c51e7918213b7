// Worker thread of the build pool: composes and DKIM-signs messages off the main thread.
import { parentPort } from 'node:worker_threads';
import { buildOutgoingMessage } from './message.ts';
import type { BuildTask } from './build-pool.ts';
import type { StoredMessage } from '../resources/emails/content.ts';

parentPort!.on('message', async (task: BuildTask) => {
  try {
    const built = await buildOutgoingMessage(task.email, JSON.parse(task.storedJson) as StoredMessage, task.domain, { verpSecret: Buffer.from(task.verpSecret), trackingSecret: Buffer.from(task.trackingSecret) });
    const raw = built.raw.buffer.slice(built.raw.byteOffset, built.raw.byteOffset + built.raw.byteLength);
    parentPort!.postMessage({ id: task.id, envelopeFrom: built.envelopeFrom, raw, tracked: built.tracked }, [raw as ArrayBuffer]);
  } catch (error) {
    parentPort!.postMessage({ id: task.id, error: error instanceof Error ? error.message : String(error) });
  }
});
