// Runs in a worker thread: checking and compiling a 2 MB document takes seconds of CPU,
// which must not stall the HTTP server's event loop.
import { parentPort } from 'node:worker_threads';
import { renderTemple } from '../../templating/temple.ts';
import { analyzeMjml, renderMjml } from './validate.ts';
import type { MjmlJob } from './pool.ts';

async function answer(job: MjmlJob & { id: number }): Promise<void> {
  try {
    const result = job.compile ? await renderMjml(job.source) : { ...analyzeMjml(job.source), html: null };
    const rendered = job.variables !== undefined && result.html !== null ? renderTemple(result.html, job.variables, { html: true }) : null;
    // The compiler input is not needed by the caller; do not copy it back.
    parentPort!.postMessage({ id: job.id, result: { ...result, input: null, rendered_html: rendered } });
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: (error as Error).message });
  }
}

// Each job answers for itself, its failure included, so nothing waits on the handler.
parentPort!.on('message', (job: MjmlJob & { id: number }) => void answer(job));
