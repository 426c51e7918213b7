// Every API resource, registered once. A resource brings its routes (v2, legacy v1, public
// pages) and the job handlers its workers run.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../platform/context.ts';
import { apiKeysResource } from './api-keys/routes.ts';

export interface Resource {
  name: string;
  v2?: (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;
  v1?: (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;
  /** Routes outside the authenticated API (tracking pixels, hosted pages). */
  public?: (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;
  /** Registers the job handlers this resource's workers run. */
  registerJobs?: (ctx: AppContext) => void;
  /** Starts long-running listeners or schedules for a role; returns how to stop them. */
  start?: (ctx: AppContext, roles: ReadonlySet<Role>) => Promise<(() => Promise<void>) | void>;
}

export type Role = 'api' | 'worker' | 'smtp';

export const resources: Resource[] = [
  apiKeysResource,
];
