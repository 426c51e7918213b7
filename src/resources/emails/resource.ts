// The delivery workers: the `email.deliver` job handler and the SMTP client it keeps open.
// Each running app's job runner gets its own worker (Resource.jobs).
import type { Resource } from '../../platform/resource.ts';
import { jobHandler, type Job } from '../../platform/jobs.ts';
import { CAMPAIGN_DELIVER_JOB, DELIVER_JOB, DELIVER_LEASE_MS } from './accept.ts';
import { DeliveryWorker } from './delivery/worker.ts';

/** Deliveries running at once per process. Each mostly waits: on the network (a remote MX
 *  answers in 100-300 ms), on the build thread, on the claim that brings the next batch; at 64
 *  the deliver bench's worker sat half idle, its rate capped by in-flight / latency (1,200/s on
 *  loopback against 1,850/s at 256). Postfix runs up to 100 smtp processes. The messages being
 *  built and sent are bounded in bytes by the worker's budget (byte-budget.ts). */
export const DELIVER_CONCURRENCY = 256;
/** Campaign deliveries running at once per process, beside (never instead of) the above: the
 *  same reasoning, a little less, so transactional mail keeps the larger share of the build
 *  thread's queue and of the destinations' connections (the shaper serves it first). */
export const CAMPAIGN_DELIVER_CONCURRENCY = 192;

export const resource: Resource = {
  name: 'delivery',
  jobs(ctx) {
    const worker = new DeliveryWorker(ctx);
    const deliver = (job: Job) => worker.run(job);
    return {
      handlers: [
        jobHandler(DELIVER_JOB, deliver, { concurrency: DELIVER_CONCURRENCY, leaseMs: DELIVER_LEASE_MS }),
        jobHandler(CAMPAIGN_DELIVER_JOB, deliver, { concurrency: CAMPAIGN_DELIVER_CONCURRENCY, leaseMs: DELIVER_LEASE_MS }),
      ],
      // After the job runner has stopped: in-flight deliveries have finished by then.
      close: () => worker.close(),
    };
  },
};
