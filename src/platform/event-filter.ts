// The event filter language of webhooks and automations: in platform/ because both features use
// it and the dashboard bundles it (the automation builder checks as you draw).
// Webhook payload filters (https://emailit.com/docs/api-reference/webhooks.md): `match` all
// (default) or any, and up to 25 rules of `field` (a dotted path into the event object; a leading
// `payload.` is ignored), `operator` and `value`. Pure logic: validated on save, evaluated at
// fan-out.
//
// Typing: text operators (contains, not_contains, starts_with, ends_with) match string values
// only; greater_than and less_than match numbers only; equals/not_equals compare scalars;
// in/not_in take an array. String comparisons are case-insensitive (as the list filters).
// When a path reaches an array (`audiences.id`, `to` as a list), a positive rule matches when
// any element does; a negative rule (not_equals, not_contains, not_in) is the negation of its
// positive rule, so it also matches a field that is not set.

export const FILTER_OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'greater_than',
  'less_than',
  'is_set',
  'is_not_set',
  'in',
  'not_in',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export const MAX_FILTER_RULES = 25;

export interface FilterRule {
  field: string;
  operator: FilterOperator;
  value?: unknown;
}

export interface WebhookFilter {
  match: 'all' | 'any';
  rules: FilterRule[];
}

export class FilterError extends Error {}

const TEXT_OPERATORS = new Set<FilterOperator>(['contains', 'not_contains', 'starts_with', 'ends_with']);
const NUMBER_OPERATORS = new Set<FilterOperator>(['greater_than', 'less_than']);
const LIST_OPERATORS = new Set<FilterOperator>(['in', 'not_in']);
const PRESENCE_OPERATORS = new Set<FilterOperator>(['is_set', 'is_not_set']);

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The path segments of a rule's field, `payload.` prefix dropped. */
export function fieldPath(field: string): string[] {
  const trimmed = field.trim().replace(/^payload\./, '');
  return trimmed.split('.');
}

/** Checks a filter given on create or update and returns it in stored form. */
export function normalizeFilter(input: {
  match?: string;
  rules: Array<{ field: string; operator: string; value?: unknown }>;
}): WebhookFilter {
  const match = input.match ?? 'all';
  if (match !== 'all' && match !== 'any') throw new FilterError('filter.match must be "all" or "any"');
  if (!Array.isArray(input.rules)) throw new FilterError('filter.rules must be an array');
  if (input.rules.length > MAX_FILTER_RULES) throw new FilterError(`filter.rules may hold at most ${MAX_FILTER_RULES} rules`);
  const rules = input.rules.map((rule, i): FilterRule => {
    const where = `filter.rules[${i}]`;
    const field = typeof rule.field === 'string' ? rule.field.trim() : '';
    if (field === '' || field.length > 255) throw new FilterError(`${where}.field must be a dotted path of 1 to 255 characters`);
    if (fieldPath(field).some((segment) => segment === '')) throw new FilterError(`${where}.field "${field}" is not a valid dotted path`);
    const operator = rule.operator as FilterOperator;
    if (!FILTER_OPERATORS.includes(operator)) throw new FilterError(`${where}.operator must be one of ${FILTER_OPERATORS.join(', ')}`);
    if (PRESENCE_OPERATORS.has(operator)) return { field, operator };
    const value = rule.value;
    if (value === undefined) throw new FilterError(`${where}.value is required for ${operator}`);
    if (TEXT_OPERATORS.has(operator) && typeof value !== 'string') throw new FilterError(`${where}.value must be a string for ${operator}`);
    if (NUMBER_OPERATORS.has(operator) && (typeof value !== 'number' || !Number.isFinite(value))) {
      throw new FilterError(`${where}.value must be a number for ${operator}`);
    }
    if (LIST_OPERATORS.has(operator) && (!Array.isArray(value) || !value.every(isScalar))) {
      throw new FilterError(`${where}.value must be an array of strings, numbers or booleans for ${operator}`);
    }
    if ((operator === 'equals' || operator === 'not_equals') && !isScalar(value)) {
      throw new FilterError(`${where}.value must be a string, number, boolean or null for ${operator}`);
    }
    return { field, operator, value };
  });
  return { match, rules };
}

/** Every value the path reaches (arrays on the way fan out; numeric segments index them). */
export function valuesAt(object: unknown, field: string): unknown[] {
  let current: unknown[] = [object];
  for (const segment of fieldPath(field)) {
    const next: unknown[] = [];
    for (const value of current) {
      if (Array.isArray(value)) {
        if (/^\d+$/.test(segment)) next.push(value[Number(segment)]);
        else
          for (const item of value)
            if (item && typeof item === 'object' && !Array.isArray(item)) next.push((item as Record<string, unknown>)[segment]);
      } else if (value && typeof value === 'object') {
        next.push((value as Record<string, unknown>)[segment]);
      }
    }
    current = next.filter((v) => v !== undefined);
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

function lower(value: string): string {
  return value.toLowerCase();
}

function sameScalar(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return lower(a) === lower(b);
  if (a === b) return true;
  // a meta value "42" equals 42, "true" equals true
  if (
    (typeof a === 'string' && (typeof b === 'number' || typeof b === 'boolean')) ||
    (typeof b === 'string' && (typeof a === 'number' || typeof a === 'boolean'))
  ) {
    return lower(String(a)) === lower(String(b));
  }
  return false;
}

function textTest(operator: FilterOperator, value: string, needle: string): boolean {
  const v = lower(value);
  const n = lower(needle);
  if (operator === 'starts_with') return v.startsWith(n);
  if (operator === 'ends_with') return v.endsWith(n);
  return v.includes(n);
}

export function ruleMatches(rule: FilterRule, object: unknown): boolean {
  const values = valuesAt(object, rule.field);
  const present = values.filter((v) => v !== null);
  switch (rule.operator) {
    case 'is_set':
      return present.length > 0;
    case 'is_not_set':
      return present.length === 0;
    case 'equals':
      return values.some((v) => sameScalar(v, rule.value));
    case 'not_equals':
      return !values.some((v) => sameScalar(v, rule.value));
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      return values.some((v) => typeof v === 'string' && textTest(rule.operator, v, rule.value as string));
    case 'not_contains':
      return !values.some((v) => typeof v === 'string' && textTest('contains', v, rule.value as string));
    case 'greater_than':
      return values.some((v) => typeof v === 'number' && v > (rule.value as number));
    case 'less_than':
      return values.some((v) => typeof v === 'number' && v < (rule.value as number));
    case 'in':
      return values.some((v) => (rule.value as unknown[]).some((item) => sameScalar(v, item)));
    case 'not_in':
      return !values.some((v) => (rule.value as unknown[]).some((item) => sameScalar(v, item)));
  }
}

/** True when the event object passes the filter (a filter without rules passes everything). */
export function matchesFilter(filter: WebhookFilter, object: unknown): boolean {
  if (filter.rules.length === 0) return true;
  return filter.match === 'any' ? filter.rules.some((r) => ruleMatches(r, object)) : filter.rules.every((r) => ruleMatches(r, object));
}
