// The automation graph (https://emailit.com/docs/automations.md): contexts, the trigger and action
// names, and the structure checks every save runs (names valid for the context, unique keys, valid
// connections and branches, every action reachable, one trigger in `event` context, all triggers of
// a context leading to the same first action). The checks of each config are checks.ts's, with
// each action's module (actions/). Problems are collected by field path (`steps.2.config.seconds`).
// The dashboard runs these structure checks too, so this file imports no server module.
import { FilterError, normalizeFilter, type WebhookFilter } from '../../platform/event-filter.ts';

export const CONTEXTS = ['contact', 'email', 'event'] as const;
export type AutomationContext = (typeof CONTEXTS)[number];

export const CONTACT_TRIGGERS = [
  'contact.added_to_audience',
  'contact.removed_from_audience',
  'contact.updated',
  'contact.loaded_email',
  'contact.clicked_in_email',
  'contact.date_anniversary',
  'contact.on_date',
  'contact.visits_url',
  'contact.on_purchase',
  'contact.on_event',
] as const;
export const EMAIL_TRIGGERS = [
  'email.received',
  'email.delivered',
  'email.bounced',
  'email.complained',
  'email.loaded',
  'email.clicked',
  'email.failed',
  'email.suppressed',
  'email.canceled',
] as const;
export const SYSTEM_TRIGGERS = ['system.manual', 'system.schedule'] as const;

/** The emitted events that fire each trigger (triggers absent here are accepted, never fired by events). */
export const TRIGGER_SOURCES: Record<string, string[]> = {
  'contact.added_to_audience': ['subscriber.created', 'subscriber.resubscribed'],
  'contact.removed_from_audience': ['subscriber.deleted'],
  'contact.updated': ['contact.updated'],
  'contact.loaded_email': ['email.loaded'],
  'contact.clicked_in_email': ['email.clicked'],
  ...Object.fromEntries(EMAIL_TRIGGERS.map((t) => [t, [t]])),
};
export const DATE_TRIGGERS = ['contact.date_anniversary', 'contact.on_date'];

const ACTION_CONTEXTS = {
  send_email: CONTEXTS,
  forward_email: ['email', 'event'],
  wait: CONTEXTS,
  condition: CONTEXTS,
  experiment: CONTEXTS,
  call_webhook: CONTEXTS,
  run_automation: CONTEXTS,
  end: CONTEXTS,
  add_to_audience: ['contact'],
  remove_from_audience: ['contact'],
  edit_contact: ['contact'],
  add_to_suppressions: ['email', 'event'],
  remove_from_suppressions: ['email', 'event'],
  create_contact: ['email', 'event'],
} as const satisfies Record<string, readonly AutomationContext[]>;

/** Each action's name; its module (schema, checks, runner) is in actions/, listed by actions/index.ts. */
export type ActionType = keyof typeof ACTION_CONTEXTS;
/** The contexts each action is available in. */
export const ACTIONS: Record<string, readonly AutomationContext[]> = ACTION_CONTEXTS;

export interface Step {
  id: string;
  key: string;
  type: 'trigger' | 'action';
  trigger: string | null;
  action: string | null;
  config: Record<string, any>;
}

export interface Connection {
  from: string;
  to: string;
  branch: string;
}

export interface Settings {
  on_step_failure: 'stop' | 'skip';
  allow_reentry: boolean;
  max_concurrent_runs: number;
  cooldown_seconds: number;
}

export const DEFAULT_SETTINGS: Settings = { on_step_failure: 'stop', allow_reentry: true, max_concurrent_runs: 0, cooldown_seconds: 0 };

export type Problems = Record<string, string[]>;

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

export function isTriggerForContext(trigger: string, context: AutomationContext): boolean {
  if ((SYSTEM_TRIGGERS as readonly string[]).includes(trigger)) return true;
  if (context === 'contact') return (CONTACT_TRIGGERS as readonly string[]).includes(trigger);
  if (context === 'email') return (EMAIL_TRIGGERS as readonly string[]).includes(trigger);
  return /^event\.[A-Za-z0-9_.:-]+$/.test(trigger);
}

function add(problems: Problems, path: string, message: string): void {
  (problems[path] ??= []).push(message);
}

/** Settings merged over the defaults, problems recorded under `settings.*`. */
export function checkSettings(input: unknown, base: Settings, problems: Problems): Settings {
  const out = { ...base };
  if (input === undefined || input === null) return out;
  if (!isObject(input)) {
    add(problems, 'settings', 'The settings must be an object.');
    return out;
  }
  if (input.on_step_failure !== undefined) {
    if (input.on_step_failure === 'stop' || input.on_step_failure === 'skip') out.on_step_failure = input.on_step_failure;
    else add(problems, 'settings.on_step_failure', 'The on_step_failure must be stop or skip.');
  }
  if (input.allow_reentry !== undefined) {
    if (typeof input.allow_reentry === 'boolean') out.allow_reentry = input.allow_reentry;
    else add(problems, 'settings.allow_reentry', 'The allow_reentry must be a boolean.');
  }
  for (const key of ['max_concurrent_runs', 'cooldown_seconds'] as const) {
    if (input[key] === undefined) continue;
    if (Number.isInteger(input[key]) && input[key] >= 0 && input[key] <= 2_147_483_647) out[key] = input[key];
    else add(problems, `settings.${key}`, `The ${key} must be a whole number of at least 0.`);
  }
  return out;
}

export interface GraphInput {
  steps: unknown;
  connections: unknown;
}

export interface Graph {
  steps: Omit<Step, 'id'>[];
  connections: Connection[];
}

/** Structure checks (creation): returns the normalized graph; problems by field path. */
export function checkGraph(context: AutomationContext, input: GraphInput, problems: Problems): Graph {
  const steps: Omit<Step, 'id'>[] = [];
  const connections: Connection[] = [];
  if (!Array.isArray(input.steps) || input.steps.length === 0) {
    add(problems, 'steps', 'The steps field is required and must be a non-empty array.');
  } else if (input.steps.length > 200) {
    add(problems, 'steps', 'An automation may have at most 200 steps.');
  } else {
    const seen = new Set<string>();
    input.steps.forEach((raw: unknown, i: number) => {
      const path = `steps.${i}`;
      if (!isObject(raw)) return add(problems, path, 'Each step must be an object.');
      const key = raw.key;
      if (!nonEmpty(key) || key.length > 100) add(problems, `${path}.key`, 'The key is required (a string of up to 100 characters).');
      else if (seen.has(key)) add(problems, `${path}.key`, `The key "${key}" is used by another step.`);
      else seen.add(key);
      const config = raw.config === undefined || raw.config === null ? {} : raw.config;
      if (!isObject(config)) add(problems, `${path}.config`, 'The config must be an object.');
      if (raw.type === 'trigger') {
        if (!nonEmpty(raw.trigger)) add(problems, `${path}.trigger`, 'The trigger is required for a trigger step.');
        else if (!isTriggerForContext(raw.trigger, context))
          add(problems, `${path}.trigger`, `The trigger "${raw.trigger}" is not valid in the ${context} context.`);
      } else if (raw.type === 'action') {
        if (!nonEmpty(raw.action)) add(problems, `${path}.action`, 'The action is required for an action step.');
        else if (!Object.hasOwn(ACTIONS, raw.action)) add(problems, `${path}.action`, `The action "${raw.action}" does not exist.`);
        else if (!ACTIONS[raw.action].includes(context))
          add(problems, `${path}.action`, `The action "${raw.action}" is not available in the ${context} context.`);
      } else {
        add(problems, `${path}.type`, 'The type must be trigger or action.');
      }
      steps.push({
        key: typeof key === 'string' ? key : '',
        type: raw.type === 'trigger' ? 'trigger' : 'action',
        trigger: raw.type === 'trigger' && typeof raw.trigger === 'string' ? raw.trigger : null,
        action: raw.type === 'action' && typeof raw.action === 'string' ? raw.action : null,
        config: isObject(config) ? config : {},
      });
    });
  }
  const byKey = new Map(steps.map((s) => [s.key, s]));
  const triggers = steps.filter((s) => s.type === 'trigger');
  if (Array.isArray(input.steps) && input.steps.length > 0) {
    if (triggers.length === 0) add(problems, 'steps', 'At least one trigger step is required.');
    if (context === 'event' && triggers.length > 1) add(problems, 'steps', 'An event automation has exactly one trigger.');
  }

  if (!Array.isArray(input.connections)) {
    add(problems, 'connections', 'The connections field is required and must be an array ([] allowed).');
  } else {
    const seenEdges = new Set<string>();
    input.connections.forEach((raw: unknown, i: number) => {
      const path = `connections.${i}`;
      if (!isObject(raw)) return add(problems, path, 'Each connection must be an object.');
      const from = byKey.get(raw.from);
      const to = byKey.get(raw.to);
      if (!nonEmpty(raw.from) || !from) add(problems, `${path}.from`, 'The from must be the key of a step.');
      if (!nonEmpty(raw.to) || !to) add(problems, `${path}.to`, 'The to must be the key of a step.');
      else if (to.type === 'trigger') add(problems, `${path}.to`, 'A connection cannot lead to a trigger.');
      if (from && to && from.key === to.key) add(problems, `${path}.to`, 'A step cannot connect to itself.');
      let branch = raw.branch === undefined || raw.branch === null ? 'default' : raw.branch;
      if (typeof branch !== 'string') {
        add(problems, `${path}.branch`, 'The branch must be a string.');
        branch = 'default';
      } else if (from) {
        if (from.action === 'condition') {
          if (branch !== 'yes' && branch !== 'no') add(problems, `${path}.branch`, 'A condition connects by the yes or no branch.');
        } else if (from.action === 'experiment') {
          const variants = Array.isArray(from.config.variants) ? from.config.variants.map((v: any) => v?.key) : [];
          if (branch !== 'default' && !variants.includes(branch))
            add(problems, `${path}.branch`, `The branch "${branch}" is not a variant of the experiment (or default).`);
        } else if (from.action === 'end') {
          add(problems, `${path}.from`, 'An end step has no outgoing connections.');
        } else if (branch !== 'default') {
          add(problems, `${path}.branch`, 'Only condition and experiment steps have branches other than default.');
        }
      }
      const edge = `${raw.from}\u0000${raw.to}\u0000${branch}`;
      if (seenEdges.has(edge)) add(problems, path, 'This connection is given twice.');
      seenEdges.add(edge);
      if (from && to) connections.push({ from: from.key, to: to.key, branch: branch as string });
    });
  }

  // Triggers: each leads to one first action, the same for all (contact and email contexts).
  const firsts = new Set<string>();
  triggers.forEach((trigger) => {
    const out = connections.filter((c) => c.from === trigger.key);
    const index = steps.indexOf(trigger);
    if (out.length !== 1 && steps.some((s) => s.type === 'action'))
      add(problems, `steps.${index}`, `The trigger "${trigger.key}" must be connected to exactly one first action.`);
    for (const c of out) firsts.add(c.to);
  });
  if (firsts.size > 1) add(problems, 'connections', 'All triggers must be connected to the same first action.');

  // Reachability from the triggers.
  const reached = new Set<string>(triggers.map((t) => t.key));
  const queue = [...reached];
  while (queue.length) {
    const key = queue.shift()!;
    for (const c of connections) if (c.from === key && !reached.has(c.to)) reached.add(c.to), queue.push(c.to);
  }
  steps.forEach((step, i) => {
    if (step.type === 'action' && step.key && !reached.has(step.key))
      add(problems, `steps.${i}`, `The action "${step.key}" cannot be reached from a trigger.`);
  });
  // No loops: a run walks the graph forward (a loop without a wait would never end).
  const state = new Map<string, number>();
  const visit = (key: string): boolean => {
    if (state.get(key) === 1) return true;
    if (state.get(key) === 2) return false;
    state.set(key, 1);
    const looped = connections.some((c) => c.from === key && visit(c.to));
    state.set(key, 2);
    return looped;
  };
  if (steps.some((s) => visit(s.key))) add(problems, 'connections', 'The connections form a loop.');
  return { steps, connections };
}

/** A filter given in a config, checked; null with a problem when invalid. */
export function checkFilter(value: unknown, path: string, problems: Problems, required: boolean): WebhookFilter | null {
  if (value === undefined || value === null) {
    if (required) add(problems, path, 'The filter is required.');
    return null;
  }
  if (!isObject(value) || !Array.isArray(value.rules)) {
    add(problems, path, 'The filter must be an object with rules (and match all or any).');
    return null;
  }
  try {
    return normalizeFilter(value as never);
  } catch (error) {
    if (error instanceof FilterError) {
      add(problems, path, error.message);
      return null;
    }
    throw error;
  }
}

/** Lookups config checks need (the service answers them from the database). */
export interface ConfigLookups {
  /** The template's `from` when it exists (undefined: no such template; null: it has none). */
  templateFrom(idOrAlias: string): Promise<string | null | undefined>;
  audienceExists(id: string): Promise<boolean>;
  automationExists(id: string): Promise<boolean>;
  /** null when fine, else the problem with the address's domain. */
  fromProblem(from: string): Promise<string | null>;
  /** null when a request may be sent to this http(s) URL now, else why not (the webhooks' URL guard). */
  urlProblem(url: string): Promise<string | null>;
}
