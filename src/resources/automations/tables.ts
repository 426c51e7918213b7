// The automations tables (migration 0014).
export interface AutomationsTable {
  id: string; // aut_
  workspace_id: string;
  context: string; // contact | email | event
  name: string;
  description: string | null;
  status: string; // draft | running | paused | stopped
  settings: string; // JSON
  steps: string; // JSON: [{id, key, type, trigger, action, config}]
  connections: string; // JSON: [{from, to, branch}]
  running_runs: number; // runs in `running` (max_concurrent_runs is a conditional update of it)
  started_at: string | null; // the last start: events before it never start runs
  last_triggered_at: string | null;
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AutomationTriggersTable {
  workspace_id: string;
  event_type: string; // the emitted event that fires it (subscriber.created, email.bounced, …)
  automation_id: string;
  step_key: string;
}

export interface AutomationRunsTable {
  id: string; // aur_
  workspace_id: string;
  automation_id: string;
  trigger_key: string;
  contact_id: string | null;
  email_id: string | null;
  event_id: string | null;
  event: string;
  payload: string; // JSON
  meta: string; // JSON
  status: string; // running | completed | failed | canceled
  active_subject: string | null;
  pending_steps: number;
  counted: number; // 1 while it holds a place in automations.running_runs
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AutomationRunStepsTable {
  id: string; // ars_
  run_id: string;
  automation_id: string;
  step_key: string;
  step_id: string;
  visit: string;
  status: string; // running | waiting | completed | failed
  outcome: string | null;
  email_id: string | null;
  data: string; // JSON
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AutomationCooldownsTable {
  automation_id: string;
  subject: string;
  last_started_ms: number;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    automations: AutomationsTable;
    automation_triggers: AutomationTriggersTable;
    automation_runs: AutomationRunsTable;
    automation_run_steps: AutomationRunStepsTable;
    automation_cooldowns: AutomationCooldownsTable;
  }
}
