// What an action is: one module per action type under this folder, each with its config's
// schema (what the dashboard builder draws its form from, served by GET /v2/automations/catalog),
// its checks (run when an automation is saved, started or validated) and its runner (what a step
// visit of it does), side by side. The engine (../engine.ts) only claims the visit, looks the
// action up in the table (./index.ts), runs it and records the end it reports.
import type { TObject } from '@sinclair/typebox';
import type { AppContext } from '../../../platform/context.ts';
import type { Executor } from '../../../platform/db/database.ts';
import type { Principal } from '../../../platform/http/auth.ts';
import type { ContactRow } from '../../contacts/service.ts';
import type { AutomationContext, ConfigLookups, Problems, Step } from '../graph.ts';
import type { RunInput, RunRow, RunStepRow, Scope } from '../run-context.ts';
import type { AutomationRow } from '../rows.ts';

/** How a visit ends: its status, outcome (step statistics count it) and data (runs show it). */
export interface Finish {
  status: 'completed' | 'failed';
  outcome: string | null;
  data: Record<string, unknown>;
  /** Branches whose connections are followed; absent: the default edges. */
  branches?: string[];
  emailId?: string | null;
}

/** A step failure the run records (the job is done); any other error is retried by the job. */
export class StepFailure extends Error {}

/** One visit of an action step, as the engine hands it to the action's runner. */
export interface StepRun {
  ctx: AppContext;
  workspaceId: string;
  automation: AutomationRow;
  run: RunRow;
  visit: RunStepRow;
  step: Step;
  /** The step's config with the run's placeholders filled in. */
  config: Record<string, any>;
  scope: Scope;
  /** The run's contact, when it has one that still exists. */
  contact: ContactRow | null;
  /** Records the visit's end and reaches its successors in one transaction of its own; `work`
   *  may write in that transaction (its effect then commits with the visit's end, or not at all). */
  finish(result: Finish | ((tx: Executor) => Promise<Finish>)): Promise<void>;
  /** The same in the caller's transaction (send_email's, which writes the email). */
  finishIn(tx: Executor, result: Finish): Promise<void>;
  /** Keeps the visit waiting and its job due at `resumeAtMs` (unless already ended). */
  holdUntil(resumeAtMs: number, data: Record<string, unknown>): Promise<void>;
  /** Starts a run of another automation (RunSkipped when a setting or the event key stops it). */
  startRun(automation: AutomationRow, input: RunInput): Promise<RunRow>;
}

/** The checks of one step's config; problems go under `steps.N.config.<field>`. */
export interface ConfigCheck {
  context: AutomationContext;
  /** The step's key (some messages name it). */
  key: string;
  lookups: ConfigLookups;
  /** `steps.N.config`. */
  path: string;
  problems: Problems;
  add(field: string, message: string): void;
}

/** Which edges leave a step: `default`; `yes`/`no`; the variant keys then `default`; none. */
export type Branching = 'default' | 'yes_no' | 'variants' | 'none';

export interface ActionDefinition {
  title: string;
  description: string;
  /** The config, as JSON Schema (TypeBox): documentation and the builder's form. The checks
   *  below are what the API enforces, with messages by field path. */
  config: TObject;
  branching: Branching;
  /** Checks run on every save, a draft's too (a draft must not keep what is refused outright). */
  checkDraft?(config: Record<string, any>, check: ConfigCheck): Promise<void>;
  /** Checks run when an automation is updated, started or validated. */
  check?(config: Record<string, any>, check: ConfigCheck): Promise<void> | void;
  /** Steps that only read and decide (no effect outside the run): when `applies`, decided
   *  inside the transaction that reaches them instead of by a job of their own. */
  instant?: {
    applies(config: Record<string, any>): boolean;
    /** Whether `decide` reads the contact or email (the scope is loaded only then). */
    readsScope: boolean;
    decide(step: Step, scope: Scope, context: string): Finish;
  };
  run(step: StepRun): Promise<void>;
}

export const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
export const hasPlaceholder = (v: string) => v.includes('{{');

/** The principal an automation sends and forwards as (the workspace, full scope). */
export const automationPrincipal = (workspaceId: string): Principal => ({
  keyId: '',
  keyHash: '',
  workspaceId,
  scope: 'full',
  sendingDomainId: null,
});
