// SIGTERM: drain, then exit. Closing a running Postlane stops taking HTTP requests and SMTP
// sessions, lets in-flight requests finish, gives running jobs SHUTDOWN_TIMEOUT_MS to finish
// and hands back the rest (server.ts, JobRunner.stop). This bounds the whole: a close that
// hangs past the bound and a grace period is reported, and the caller exits non-zero.
import type { Logger } from 'pino';

export const DRAIN_GRACE_MS = 5000;

/** Closes `running`; true when it closed within `timeoutMs` plus the grace period. */
export async function drain(running: { close(): Promise<void> }, timeoutMs: number, log: Logger): Promise<boolean> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    running.close().then(
      () => true,
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        return false;
      },
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs + DRAIN_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (closed) log.info({ ms: Date.now() - started }, 'drained and closed');
  else log.error({ ms: Date.now() - started }, 'shutdown did not finish in time');
  return closed;
}
