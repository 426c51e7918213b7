// The config checks every save runs after the structure checks (graph.ts): create (drafts: trigger
// configs and each action's draft checks), update, start and POST /v2/automations/validate (every
// check of every action). Each action's checks are in its module (actions/), each trigger's in
// triggers.ts; problems are collected by field path (`steps.2.config.seconds`).
import type { AutomationContext, ConfigLookups, Graph, Problems } from './graph.ts';
import type { ConfigCheck } from './actions/action.ts';
import { actionOf } from './actions/index.ts';
import { checkTriggerConfig } from './triggers.ts';

export async function checkConfigs(
  context: AutomationContext,
  graph: Graph,
  lookups: ConfigLookups,
  full: boolean,
  problems: Problems,
): Promise<void> {
  for (const [i, step] of graph.steps.entries()) {
    const path = `steps.${i}.config`;
    const add = (field: string, message: string) => {
      (problems[`${path}.${field}`] ??= []).push(message);
    };
    const check: ConfigCheck = { context, key: step.key, lookups, path, problems, add };
    if (step.type === 'trigger') {
      await checkTriggerConfig(step.trigger, step.config, check, full);
      continue;
    }
    const action = actionOf(step.action);
    if (!action) continue; // the structure checks named it
    await action.checkDraft?.(step.config, check);
    if (full) await action.check?.(step.config, check);
  }
}
