// The action table: each action type and its module (config schema, checks, runner). The engine
// runs a step visit by looking its action up here; the catalogue (GET /v2/automations/catalog) and
// the config checks read the same table. The compiler holds it to graph.ts's list of actions.
import type { ActionType } from '../graph.ts';
import type { ActionDefinition } from './action.ts';
import { addToAudience } from './add-to-audience.ts';
import { addToSuppressions } from './add-to-suppressions.ts';
import { callWebhook } from './call-webhook.ts';
import { condition } from './condition.ts';
import { createContact } from './create-contact.ts';
import { editContact } from './edit-contact.ts';
import { end } from './end.ts';
import { experiment } from './experiment.ts';
import { forwardEmail } from './forward-email.ts';
import { removeFromAudience } from './remove-from-audience.ts';
import { removeFromSuppressions } from './remove-from-suppressions.ts';
import { runAutomation } from './run-automation.ts';
import { sendEmail } from './send-email.ts';
import { wait } from './wait.ts';

export const ACTION_TABLE: { readonly [K in ActionType]: ActionDefinition } = {
  send_email: sendEmail,
  forward_email: forwardEmail,
  wait,
  condition,
  experiment,
  call_webhook: callWebhook,
  run_automation: runAutomation,
  end,
  add_to_audience: addToAudience,
  remove_from_audience: removeFromAudience,
  edit_contact: editContact,
  add_to_suppressions: addToSuppressions,
  remove_from_suppressions: removeFromSuppressions,
  create_contact: createContact,
};

/** The module of an action type; undefined for a name that is no action. */
export function actionOf(type: string | null | undefined): ActionDefinition | undefined {
  return type && Object.hasOwn(ACTION_TABLE, type) ? ACTION_TABLE[type as ActionType] : undefined;
}

export { StepFailure, type ActionDefinition, type ConfigCheck, type Finish, type StepRun } from './action.ts';
