// How Temple reads and prints values (https://emailit.com/docs/templates/temple.md): nested lookup
// by path, truthiness, value-to-text and HTML escaping. Pure functions, no recursion on user data
// beyond a cap.

/** Arrays nested deeper than this print as empty text instead of recursing further. */
const MAX_TEXT_DEPTH = 32;
const INDEX = /^(0|[1-9]\d*)$/;

/** The value at `path` (`['items', '0', 'sku']`), or undefined when any step is missing.
 *  Only own properties are read, so `constructor` or `__proto__` never reach the prototype. */
export function lookup(variables: unknown, path: readonly string[]): unknown {
  let current: unknown = variables;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!INDEX.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/** Postlane's choice: empty string, false, 0, null, missing, empty array and
 *  empty object are false; everything else is true. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '') return false;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'bigint') return value !== 0n;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') {
    for (const key in value) if (Object.hasOwn(value, key)) return true;
    return false;
  }
  return true;
}

/** Numbers and booleans as written, arrays joined with commas, objects as `[object Object]`,
 *  null and undefined as empty text (the JavaScript `String`/`join` conventions). */
export function toText(value: unknown, depth = 0): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    if (depth >= MAX_TEXT_DEPTH) return '';
    let out = '';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += toText(value[i], depth + 1);
    }
    return out;
  }
  if (typeof value === 'object') return '[object Object]';
  return String(value);
}

/** Escapes `& < > " '` (safe in text and in quoted attribute values). */
export function escapeHtml(text: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    let entity: string;
    switch (text.charCodeAt(i)) {
      case 38:
        entity = '&amp;';
        break;
      case 60:
        entity = '&lt;';
        break;
      case 62:
        entity = '&gt;';
        break;
      case 34:
        entity = '&quot;';
        break;
      case 39:
        entity = '&#39;';
        break;
      default:
        continue;
    }
    out += text.slice(last, i) + entity;
    last = i + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}
