// Composing and DKIM-signing (an RSA signature per message) are the CPU-heavy part of a
// delivery: a few worker threads do them so the main thread stays free for the database, the
// SMTP connections and the API. A message that cannot be built is a BuildError (the email
// fails); a worker that dies is a plain error (the job is retried).
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { build as esbuild } from 'esbuild';
import { withOpenedKey, type SendingDomain } from '../../domains/service.ts';
import type { EmailRow } from '../objects.ts';
import type { BuildEmail, BuildSecrets, OutgoingMessage } from './message.ts';
import type { Personalization } from './personalize.ts';
import { MAX_CONTEXTS, type BuildContext } from './build-context.ts';

export interface BuildTask {
  id: number;
  email: BuildEmail;
  /** The stored content as JSON (parsed in the worker too). */
  storedJson: string;
  /** Which signing context (domain with its key, secrets) the message is built with. */
  contextId: number;
  /** That context, the first time this thread gets a task with it. */
  context?: BuildContext;
  personal: Personalization | null;
  /** While tracing is on: the delivery's span, which the thread's build span is a child of. */
  traceparent?: string;
}

/** The build as a span, timed by the thread (epoch ms) and exported by the main thread: the
 *  threads load no tracing SDK. */
export interface BuildSpan {
  traceparent: string;
  startMs: number;
  endMs: number;
}

export type BuiltMessage = OutgoingMessage & { span?: BuildSpan };

export interface BuildResult {
  id: number;
  error?: string;
  /** The error is the pool's, not the message's: a plain Error (the job is retried), not a BuildError. */
  retryable?: boolean;
  envelopeFrom?: string;
  raw?: ArrayBuffer;
  tracked?: OutgoingMessage['tracked'];
  span?: BuildSpan;
}

export class BuildError extends Error {}

/** Young generation of each build thread (MB). Left to V8, it grew to 128 MB per thread under
 *  a campaign's steady stream of messages, most of it garbage waiting for a scavenge; a
 *  message's objects live for one build (the thread builds two at a time), so a small one
 *  costs little more collection time. */
const BUILD_THREAD_YOUNG_MB = 8;

/** Build threads: each is a V8 isolate of its own (about 30 MB of RSS under a campaign's load),
 *  so one core is left to the main thread rather than given a second isolate (on 2 cores, two
 *  threads cost 34 MB more at the campaign bench's peak for no measurable gain in its rate).
 *  POSTLANE_BUILD_THREADS overrides. */
const BUILD_THREADS = Number(process.env.POSTLANE_BUILD_THREADS ?? 0) || Math.max(1, Math.min(4, availableParallelism() - 1));

const WORKER_FILE = new URL('./build-worker.ts', import.meta.url);
let workerSource: Promise<string | null> | null = null;

/** The worker and the dozen modules it imports, bundled once into plain JavaScript. A thread
 *  that imports .ts files loads Node's type-stripping compiler (WebAssembly) into its own heap:
 *  about 19 MB of RSS per build thread, for a few hundred lines of code. If esbuild cannot
 *  bundle, the threads import the .ts file as before. */
function bundledWorker(): Promise<string | null> {
  workerSource ??= esbuild({
    entryPoints: [WORKER_FILE.pathname],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    write: false,
    logLevel: 'silent',
  }).then(
    (result) => result.outputFiles[0].text,
    () => null,
  );
  return workerSource;
}

interface Pending {
  resolve(message: BuiltMessage): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Context ids this thread has been sent (and keeps), oldest first. */
  contexts: Set<number>;
  /** Tasks of this turn of the event loop, posted together (one wake-up of the thread per batch). */
  outbox: BuildTask[];
}

export class BuildPool {
  private readonly slots: Slot[] = [];
  private readonly size: number;
  private nextId = 1;
  private closed = false;
  // A domain (with its DKIM key) and the secrets go to each thread once per domain object, not
  // with every message: cloning them was a good part of posting a task.
  private readonly contextIds = new WeakMap<SendingDomain, number>();
  private nextContextId = 1;

  constructor(size = BUILD_THREADS) {
    this.size = size;
  }

  /** Copies only what a build reads of the row to the thread (structured cloning costs per field). */
  async build(
    email: EmailRow,
    storedJson: string,
    domain: SendingDomain,
    secrets: BuildSecrets,
    personal: Personalization | null = null,
    traceparent?: string,
  ): Promise<BuiltMessage> {
    const source = await bundledWorker();
    if (this.closed) throw new Error('the build pool is closed');
    const slot = this.leastBusy(source);
    const id = this.nextId++;
    let contextId = this.contextIds.get(domain);
    if (contextId === undefined) this.contextIds.set(domain, (contextId = this.nextContextId++));
    let context: BuildContext | undefined;
    if (!slot.contexts.has(contextId)) {
      context = { domain: withOpenedKey(domain), verpSecret: secrets.verpSecret, trackingSecret: secrets.trackingSecret };
      if (slot.contexts.size >= MAX_CONTEXTS) slot.contexts.delete(slot.contexts.values().next().value!);
      slot.contexts.add(contextId);
    }
    return new Promise<BuiltMessage>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.ref();
      const { id: emailId, from, subject, message_id, created_at, scheduled_at, track_loads, track_clicks, content_id } = email;
      const buildEmail: BuildEmail = {
        id: emailId,
        from,
        subject,
        message_id,
        created_at,
        scheduled_at,
        track_loads,
        track_clicks,
        content_id,
      };
      const task: BuildTask = { id, email: buildEmail, storedJson, contextId, context, personal };
      if (traceparent) task.traceparent = traceparent;
      slot.outbox.push(task);
      if (slot.outbox.length === 1) {
        setImmediate(() => {
          const tasks = slot.outbox.splice(0);
          if (tasks.length > 0 && this.slots.includes(slot)) slot.worker.postMessage(tasks);
        });
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private leastBusy(source: string | null): Slot {
    if (this.slots.length < this.size && this.slots.every((slot) => slot.pending.size > 0)) return this.spawn(source);
    return this.slots.reduce((best, slot) => (slot.pending.size < best.pending.size ? slot : best));
  }

  private spawn(source: string | null): Slot {
    const resourceLimits = { maxYoungGenerationSizeMb: BUILD_THREAD_YOUNG_MB };
    const worker = source === null ? new Worker(WORKER_FILE, { resourceLimits }) : new Worker(source, { eval: true, resourceLimits });
    const slot: Slot = { worker, pending: new Map(), contexts: new Set(), outbox: [] };
    worker.on('message', (results: BuildResult[]) => {
      for (const result of results) {
        const pending = slot.pending.get(result.id);
        if (!pending) continue;
        slot.pending.delete(result.id);
        if (result.error !== undefined) pending.reject(result.retryable ? new Error(result.error) : new BuildError(result.error));
        else
          pending.resolve({
            envelopeFrom: result.envelopeFrom!,
            raw: Buffer.from(result.raw!),
            tracked: result.tracked ?? null,
            span: result.span,
          });
      }
      if (slot.pending.size === 0) worker.unref();
    });
    const lost = (reason: string) => {
      const index = this.slots.indexOf(slot);
      if (index !== -1) this.slots.splice(index, 1);
      for (const pending of slot.pending.values()) pending.reject(new Error(reason));
      slot.pending.clear();
      slot.outbox.length = 0;
    };
    worker.on('error', (error) => lost(`message build worker failed: ${error.message}`));
    worker.on('exit', (code) => lost(`message build worker exited (${code})`));
    worker.unref();
    this.slots.push(slot);
    return slot;
  }
}
