// What a resource folder exports from its routes.ts as `resource`: its routes (v2, legacy v1,
// public pages), the job handlers its workers run, and any long-running listeners.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.ts';
import type { ResourceJobs } from './jobs.ts';

export type Role = 'api' | 'worker' | 'smtp';

export interface Resource {
  name: string;
  v2?: (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;
  v1?: (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;
  /** Routes outside the authenticated API (tracking pixels, hosted pages). */
  public?: (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;
  /** The job handlers (and recurring jobs: recurring-jobs.ts) this resource's workers run,
   *  made for one running app with the worker role and handed to its job runner. */
  jobs?: (ctx: AppContext) => ResourceJobs;
  /** Registers what must react inside other transactions (event subscribers); every role. */
  registerJobs?: (ctx: AppContext) => void;
  /** Starts long-running listeners or schedules for a role; returns how to stop them. */
  start?: (ctx: AppContext, roles: ReadonlySet<Role>) => Promise<(() => Promise<void>) | void>;
}
