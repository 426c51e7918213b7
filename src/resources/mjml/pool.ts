// A small pool of worker threads for MJML checks and compiles. Jobs queue for a free worker;
// one that runs too long is terminated (its worker replaced) and reported as a diagnostic.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { MjmlRender } from './validate.ts';

export interface MjmlJob {
  source: unknown;
  /** Compile to HTML when the document is valid (else only check it). */
  compile: boolean;
  /** When given, the compiled HTML is also rendered with these variables (Temple). */
  variables?: Record<string, unknown>;
}

export interface MjmlOutcome extends MjmlRender {
  rendered_html: string | null;
}

const POOL_SIZE = Math.max(1, Math.min(2, availableParallelism()));
const JOB_TIMEOUT_MS = 60_000;

interface Job extends MjmlJob {
  id: number;
  resolve(result: MjmlOutcome): void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

const slots: Slot[] = [];
const queue: Job[] = [];
let nextId = 1;

const failed = (code: string, message: string): MjmlOutcome => ({
  valid: false,
  format: null,
  diagnostics: [{ severity: 'error', code, message }],
  input: null,
  html: null,
  rendered_html: null,
});

function spawn(): Slot {
  const worker = new Worker(new URL('./worker.ts', import.meta.url));
  const slot: Slot = { worker, job: null, timer: null };
  worker.on('message', (message: { id: number; result?: MjmlOutcome; error?: string }) => {
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    finish(slot, message.result ?? failed('mjml.compile-failed', `MJML could not process the document: ${message.error}`));
  });
  const lost = (reason: string) => {
    const index = slots.indexOf(slot);
    if (index !== -1) slots.splice(index, 1);
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.job) slot.job.resolve(failed('mjml.compile-failed', reason));
    slot.job = null;
    pump();
  };
  worker.on('error', (error) => lost(`MJML could not process the document: ${error.message}`));
  worker.on('exit', () => lost('MJML stopped while processing the document'));
  worker.unref(); // after the listeners (adding one refs the port again): an idle worker never keeps a process alive
  slots.push(slot);
  return slot;
}

function finish(slot: Slot, result: MjmlOutcome) {
  if (slot.timer) clearTimeout(slot.timer);
  const job = slot.job!;
  slot.job = null;
  slot.timer = null;
  slot.worker.unref();
  job.resolve(result);
  pump();
}

function pump() {
  while (queue.length > 0) {
    const slot = slots.find((s) => s.job === null) ?? (slots.length < POOL_SIZE ? spawn() : null);
    if (!slot) return;
    const job = queue.shift()!;
    slot.job = job;
    slot.timer = setTimeout(() => {
      slots.splice(slots.indexOf(slot), 1); // out of service before anything else can pick it
      slot.job = null;
      job.resolve(failed('mjml.compile-timeout', `MJML did not finish within ${JOB_TIMEOUT_MS / 1000} seconds`));
      void slot.worker.terminate();
      pump();
    }, JOB_TIMEOUT_MS);
    slot.timer.unref();
    slot.worker.ref(); // busy: the caller awaits it
    try {
      slot.worker.postMessage({ id: job.id, source: job.source, compile: job.compile, variables: job.variables });
    } catch (error) {
      // Values the structured clone cannot copy (nested too deeply): the job fails, the worker stays.
      finish(slot, failed('document.unrecognized', `The document could not be processed: ${(error as Error).message}`));
    }
  }
}

/** Checks a source (and compiles and renders it, as asked) off the main thread. */
export function processMjml(job: MjmlJob): Promise<MjmlOutcome> {
  return new Promise((resolve) => {
    queue.push({ ...job, id: nextId++, resolve });
    pump();
  });
}

/** Starts the workers ahead of the first request (loading mjml takes a moment). */
export function warmUpMjml(): void {
  while (slots.length < POOL_SIZE) spawn();
}
