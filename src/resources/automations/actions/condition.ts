// condition: a filter over the run's contact, email, payload or meta; the run goes on by the yes
// or the no edge. It only reads, so it is decided in the transaction that reaches it.
import { Type } from '@sinclair/typebox';
import { normalizeFilter, type WebhookFilter } from '../../webhooks/service.ts';
import { automationRuleMatches } from '../filter.ts';
import { checkFilter } from '../graph.ts';
import { SCOPE_ROOTS, withPlaceholders, type Scope } from '../run-context.ts';
import type { ActionDefinition, Finish } from './action.ts';
import { FilterSchema } from './fields.ts';

/** A condition's filter: bare fields against the contact (contact context) or the email, else the payload's object. */
function conditionMatches(filter: WebhookFilter, scope: Scope, context: string): boolean {
  // In the event context bare fields name the payload's object (or the payload itself: `object.x`).
  const fallback =
    context === 'contact' ? scope.contact : context === 'email' ? scope.email : { ...scope.payload, ...(scope.payload?.object ?? {}) };
  const test = (rule: WebhookFilter['rules'][number]) => {
    const [head, ...rest] = rule.field.split('.');
    if ((SCOPE_ROOTS as readonly string[]).includes(head) && rest.length > 0)
      return automationRuleMatches({ ...rule, field: rest.join('.') }, (scope as any)[head]);
    return automationRuleMatches(rule, fallback);
  };
  if (filter.rules.length === 0) return true;
  return filter.match === 'any' ? filter.rules.some(test) : filter.rules.every(test);
}

function decide(step: { config: Record<string, any> }, scope: Scope, context: string): Finish {
  const filter = normalizeFilter(step.config.filter);
  const matched = conditionMatches(
    { ...filter, rules: filter.rules.map((r) => ({ ...r, value: withPlaceholders(r.value, scope) })) },
    scope,
    context,
  );
  return {
    status: 'completed',
    outcome: matched ? 'matched' : 'not_matched',
    data: { result: matched ? 'yes' : 'no' },
    branches: [matched ? 'yes' : 'no'],
  };
}

export const condition: ActionDefinition = {
  title: 'Condition',
  description:
    "Goes on by the yes edge when the filter matches, else by the no edge. Bare fields name the contact (contact context), the email (email context) or the payload's object (event context); contact., email., payload. and meta. choose explicitly.",
  config: Type.Object({ filter: FilterSchema }),
  branching: 'yes_no',

  check(c, { path, problems }) {
    checkFilter(c.filter, `${path}.filter`, problems, true);
  },

  instant: { applies: () => true, readsScope: true, decide },

  async run({ step, scope, automation, finish }) {
    return finish(decide(step, scope, automation.context));
  },
};
