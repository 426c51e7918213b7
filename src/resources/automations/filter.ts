// Trigger filters and conditions (https://emailit.com/docs/automations.md): `match` all (default)
// or any; rules of `field`, `operator`, `value`. Validated with the webhook filter's rules (the
// same operators and shapes); evaluated as the automations documentation says: greater_than
// and less_than compare numbers (numeric text counts), every other operator compares text
// case-sensitively. A path reaching an array matches when any element does; the negative
// operators (not_equals, not_contains, not_in) are the negation of their positive one.
import { valuesAt, type FilterRule, type WebhookFilter } from '../webhooks/service.ts';

export type AutomationFilter = WebhookFilter;

const asText = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;

function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

function same(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  const x = asText(a);
  const y = asText(b);
  return x !== null && x === y;
}

/** One rule against the values at its field of `object`. */
export function automationRuleMatches(rule: FilterRule, object: unknown): boolean {
  const values = valuesAt(object, rule.field);
  const texts = values.map(asText).filter((v): v is string => v !== null);
  const needle = asText(rule.value) ?? '';
  switch (rule.operator) {
    case 'is_set':
      return values.some((v) => v !== null && v !== '');
    case 'is_not_set':
      return !values.some((v) => v !== null && v !== '');
    case 'equals':
      return values.some((v) => same(v, rule.value));
    case 'not_equals':
      return !values.some((v) => same(v, rule.value));
    case 'contains':
      return texts.some((v) => v.includes(needle));
    case 'not_contains':
      return !texts.some((v) => v.includes(needle));
    case 'starts_with':
      return texts.some((v) => v.startsWith(needle));
    case 'ends_with':
      return texts.some((v) => v.endsWith(needle));
    case 'greater_than':
    case 'less_than': {
      const limit = asNumber(rule.value);
      if (limit === null) return false;
      return values.map(asNumber).some((n) => n !== null && (rule.operator === 'greater_than' ? n > limit : n < limit));
    }
    case 'in':
      return values.some((v) => (rule.value as unknown[]).some((item) => same(v, item)));
    case 'not_in':
      return !values.some((v) => (rule.value as unknown[]).some((item) => same(v, item)));
  }
}

/** The whole filter against one object (a filter without rules passes). */
export function automationFilterMatches(filter: AutomationFilter, object: unknown): boolean {
  if (filter.rules.length === 0) return true;
  return filter.match === 'any'
    ? filter.rules.some((r) => automationRuleMatches(r, object))
    : filter.rules.every((r) => automationRuleMatches(r, object));
}
