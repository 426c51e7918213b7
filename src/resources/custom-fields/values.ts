// Custom field values checked against the workspace's definitions (pure: the API, imports and
// automations share it). Declared fields get their type's value (a date is `YYYY-MM-DD`, a
// number a finite number, a boolean true/false; text from CSV files is converted when it reads
// unambiguously); undeclared keys are stored as given. null clears a value.
export const FIELD_TYPES = ['text', 'number', 'date', 'boolean'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldDefinition {
  key: string;
  type: FieldType;
}

export type FieldDefinitions = ReadonlyMap<string, FieldDefinition>;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD. */
export function isIsoDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The value to store for `key`, or a message saying why it cannot be stored. */
export function checkFieldValue(
  definition: FieldDefinition | undefined,
  key: string,
  value: unknown,
): { value: unknown } | { error: string } {
  if (value === null || definition === undefined) return { value };
  switch (definition.type) {
    case 'date': {
      const text = typeof value === 'string' ? value.trim() : value;
      if (typeof text === 'string' && isIsoDate(text)) return { value: text };
      return { error: `Invalid value for custom field "${key}": a date must be written YYYY-MM-DD` };
    }
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value.trim()) : value;
      if (typeof n === 'number' && Number.isFinite(n)) return { value: n };
      return { error: `Invalid value for custom field "${key}": expected a number` };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { value };
      const text = typeof value === 'string' ? value.trim().toLowerCase() : String(value);
      if (['true', '1', 'yes'].includes(text)) return { value: true };
      if (['false', '0', 'no'].includes(text)) return { value: false };
      return { error: `Invalid value for custom field "${key}": expected true or false` };
    }
    case 'text': {
      if (typeof value === 'string') return { value };
      if (typeof value === 'number' || typeof value === 'boolean') return { value: String(value) };
      return { error: `Invalid value for custom field "${key}": expected text` };
    }
  }
}

/** Every value of `values` checked; the first problem found, or the values to store. */
export function checkFieldValues(
  definitions: FieldDefinitions,
  values: Record<string, unknown>,
): { values: Record<string, unknown> } | { error: string } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const checked = checkFieldValue(definitions.get(key), key, value);
    if ('error' in checked) return checked;
    out[key] = checked.value;
  }
  return { values: out };
}
