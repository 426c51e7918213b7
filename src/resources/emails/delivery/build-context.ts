// What a build thread signs with: the sending domain (its DKIM key) and the service's secrets.
// Sent to each thread once per domain object (see build-pool.ts), not with every message.
import type { SendingDomain } from '../../domains/service.ts';

export interface BuildContext {
  domain: SendingDomain;
  verpSecret: Uint8Array;
  trackingSecret: Uint8Array;
}

/** Contexts a thread keeps; the pool and the thread drop the oldest at this size, in the same order. */
export const MAX_CONTEXTS = 256;
