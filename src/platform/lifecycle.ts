// Where a running Postlane is in its life, for readiness (GET /readyz) and a clean SIGTERM:
// which of its parts run, and whether it is draining (taking no new requests or SMTP
// sessions while in-flight work finishes or is handed back to the queue).
import type { AppContext } from './context.ts';

export interface LifecycleState {
  /** The job runner of the worker role: null when this process has no worker role. */
  workers: 'starting' | 'running' | 'stopped' | null;
  draining: boolean;
}

const states = new WeakMap<AppContext, LifecycleState>();

export function lifecycleOf(ctx: AppContext): LifecycleState {
  let state = states.get(ctx);
  if (!state) states.set(ctx, (state = { workers: null, draining: false }));
  return state;
}

export function setWorkers(ctx: AppContext, workers: LifecycleState['workers']): void {
  lifecycleOf(ctx).workers = workers;
}

export function startDraining(ctx: AppContext): void {
  lifecycleOf(ctx).draining = true;
}

export const isDraining = (ctx: AppContext) => lifecycleOf(ctx).draining;

/** smtp-server's onConnect: a draining server greets new sessions with 421 and closes them. */
export function refuseWhileDraining(ctx: AppContext) {
  return (_session: unknown, callback: (error?: Error | null) => void) => {
    if (!isDraining(ctx)) return callback();
    const error = new Error(`${ctx.config.mailHostname} shutting down, try again later`) as Error & { responseCode: number };
    error.responseCode = 421;
    callback(error);
  };
}
