// Workspace event definitions (https://emailit.com/docs/api-reference/workspace-events/) and
// the checks product events meet before they are recorded: a `w:` event's properties against
// its definition (https://emailit.com/docs/events/workspace-events/), a `c:` event's against
// the size bounds of custom events (https://emailit.com/docs/api-reference/events/send/).
// Pure rules, no database: service.ts and definitions-service.ts apply them.

export const PROPERTY_TYPES = ['string', 'number', 'boolean', 'date'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export interface PropertyDefinition {
  name: string;
  type: PropertyType;
  required: boolean;
  title: string | null;
  description: string | null;
}

export const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const EVENT_TYPE = /^([wc]):([A-Za-z0-9][A-Za-z0-9._-]{0,99})$/;
export const PROPERTY_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const MAX_PROPERTIES = 50;
export const CUSTOM_PROPERTIES_MAX_BYTES = 32 * 1024;
export const CUSTOM_PROPERTIES_MAX_DEPTH = 8;

/** Event types a plan may use (definitions and custom types together); 0: none. */
export const PLAN_EVENT_TYPES: Record<string, number> = { payg: 0, pro: 100, business: 1000, custom: Number.POSITIVE_INFINITY };

export type EventScope = 'system' | 'workspace' | 'custom';

/** An event type's scope, read from its prefix. */
export function scopeOf(type: string): EventScope {
  return type.startsWith('w:') ? 'workspace' : type.startsWith('c:') ? 'custom' : 'system';
}

/** Problems by field path (`errors` of the 400 `Validation failed` body). */
export type Problems = Record<string, string[]>;

export function addProblem(problems: Problems, path: string, message: string): void {
  (problems[path] ??= []).push(message);
}

/** A definition's name as given (the `w:` prefix is removed), or null when it is not valid. */
export function definitionName(input: string): string | null {
  const name = input.startsWith('w:') ? input.slice(2) : input;
  return EVENT_NAME.test(name) ? name : null;
}

/** Checks the `properties` of a definition and returns them in stored form. */
export function checkPropertyDefinitions(input: unknown, problems: Problems): PropertyDefinition[] {
  if (input === undefined) return [];
  if (!Array.isArray(input)) {
    addProblem(problems, 'properties', 'The properties must be an array.');
    return [];
  }
  if (input.length > MAX_PROPERTIES) addProblem(problems, 'properties', `A definition has at most ${MAX_PROPERTIES} properties.`);
  const seen = new Set<string>();
  const out: PropertyDefinition[] = [];
  input.forEach((raw: any, i) => {
    const path = `properties.${i}`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      return addProblem(problems, path, 'Each property must be an object.');
    const name = typeof raw.name === 'string' ? raw.name : '';
    if (!PROPERTY_NAME.test(name))
      addProblem(problems, `${path}.name`, 'The name has 1 to 64 letters, digits, - or _, and starts with a letter or digit (no dots).');
    else if (seen.has(name)) addProblem(problems, `${path}.name`, `The property "${name}" is defined twice.`);
    seen.add(name);
    if (!(PROPERTY_TYPES as readonly unknown[]).includes(raw.type))
      addProblem(problems, `${path}.type`, `The type must be one of ${PROPERTY_TYPES.join(', ')}.`);
    if (raw.required !== undefined && typeof raw.required !== 'boolean')
      addProblem(problems, `${path}.required`, 'required must be true or false.');
    const text = (key: 'title' | 'description', max: number) => {
      const value = raw[key];
      if (value === undefined || value === null) return null;
      if (typeof value !== 'string' || value.length > max) {
        addProblem(problems, `${path}.${key}`, `The ${key} is a string of up to ${max} characters.`);
        return null;
      }
      return value;
    };
    out.push({ name, type: raw.type, required: raw.required === true, title: text('title', 120), description: text('description', 1000) });
  });
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An ISO 8601 date or date-time as UTC ISO; null when it is none. */
export function isoDate(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return null;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

const typeName = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * A `w:` event's properties checked against its definition: only declared properties, each
 * of its type; required ones present; null empties an optional one; dates stored as UTC ISO.
 * Returns the properties to store (problems under `${at}.<name>`).
 */
export function checkWorkspaceProperties(
  type: string,
  definition: PropertyDefinition[],
  properties: Record<string, unknown>,
  at: string,
  problems: Problems,
): Record<string, unknown> {
  const byName = new Map(definition.map((p) => [p.name, p]));
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(properties)) {
    const declared = byName.get(name);
    if (!declared) {
      const known = definition.length > 0 ? `it declares ${definition.map((p) => p.name).join(', ')}` : 'it declares no properties';
      addProblem(problems, `${at}.${name}`, `The property "${name}" is not part of ${type} (${known}).`);
      continue;
    }
    if (value === null) {
      if (declared.required) addProblem(problems, `${at}.${name}`, `The property "${name}" of ${type} is required and may not be null.`);
      else out[name] = null;
      continue;
    }
    const wrong = () =>
      addProblem(
        problems,
        `${at}.${name}`,
        `The property "${name}" of ${type} must be a ${declared.type}${declared.type === 'date' ? ' (ISO 8601)' : ''}, got ${typeName(value)}.`,
      );
    switch (declared.type) {
      case 'string':
        if (typeof value === 'string') out[name] = value;
        else wrong();
        break;
      case 'number':
        if (typeof value === 'number' && Number.isFinite(value)) out[name] = value;
        else wrong();
        break;
      case 'boolean':
        if (typeof value === 'boolean') out[name] = value;
        else wrong();
        break;
      case 'date': {
        const iso = typeof value === 'string' ? isoDate(value) : null;
        if (iso) out[name] = iso;
        else wrong();
        break;
      }
    }
  }
  for (const declared of definition) {
    if (declared.required && !(declared.name in properties))
      addProblem(problems, `${at}.${declared.name}`, `The property "${declared.name}" of ${type} is required.`);
  }
  return out;
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > CUSTOM_PROPERTIES_MAX_DEPTH + 1 || value === null || typeof value !== 'object') return depth;
  let deepest = depth + 1;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, depth + 1));
  return deepest;
}

/** A `c:` event's properties: any JSON object within the size and depth bounds. */
export function checkCustomProperties(properties: Record<string, unknown>, at: string, problems: Problems): Record<string, unknown> {
  if (!isPlainObject(properties)) {
    addProblem(problems, at, 'The properties must be a JSON object.');
    return {};
  }
  if (Buffer.byteLength(JSON.stringify(properties)) > CUSTOM_PROPERTIES_MAX_BYTES)
    addProblem(problems, at, `The properties of a custom event take at most ${CUSTOM_PROPERTIES_MAX_BYTES / 1024} KB of JSON.`);
  else if (depthOf(properties) > CUSTOM_PROPERTIES_MAX_DEPTH)
    addProblem(problems, at, `The properties of a custom event are at most ${CUSTOM_PROPERTIES_MAX_DEPTH} levels deep.`);
  return properties;
}
