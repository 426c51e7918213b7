// One imported row as the contact fields it gives (pure). Columns are matched by name, case
// and spacing aside: email (or "email address", "e-mail"), first_name, last_name,
// unsubscribed, custom_fields (a JSON object) and any other column as a custom field of that
// name. The export's own columns (id, audiences, created_at, updated_at) are ignored, so an
// export imports back. An empty cell gives nothing (it never clears a value).
import { normalizeAddress } from '../../../platform/addresses.ts';
// values.ts, not custom-fields/service.ts (a known exception of the walls): rows are checked in
// the parse threads (parse-worker.ts), which must not load the database layer service.ts imports.
import { checkFieldValue, type FieldDefinitions } from '../../custom-fields/index.ts';
import { MAX_COLUMNS, type SourceRow } from './sources.ts';

export interface ImportRow {
  row: number;
  email: string;
  first_name?: string;
  last_name?: string;
  /** true: unsubscribe from all campaigns; an import never sets it back to false. */
  unsubscribe: boolean;
  /** The row's custom fields as JSON object text ('{}' when none): made here, in the parsing
   *  thread, so the writing thread stores it as it is. */
  custom_fields: string;
}

export type RowResult = { ok: true; value: ImportRow } | { ok: false; row: number; email: string | null; reason: string };

const canonical = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
const ALIASES: Record<string, string> = {
  email: 'email',
  email_address: 'email',
  e_mail: 'email',
  first_name: 'first_name',
  firstname: 'first_name',
  last_name: 'last_name',
  lastname: 'last_name',
  unsubscribed: 'unsubscribed',
  custom_fields: 'custom_fields',
};
const IGNORED = new Set(['id', 'audiences', 'created_at', 'updated_at', 'object']);

/** Maps a row's column names once per distinct header (CSV headers repeat on every row). */
export class ColumnMap {
  private cache = new Map<string, { key: string; role: string }[]>();

  roles(names: string[]): { key: string; role: string }[] {
    const signature = names.join('\u0000');
    let mapped = this.cache.get(signature);
    if (!mapped) {
      mapped = names.map((key) => {
        const name = canonical(key);
        return { key, role: ALIASES[name] ?? (IGNORED.has(name) ? 'ignore' : 'field') };
      });
      if (this.cache.size > 100) this.cache.clear();
      this.cache.set(signature, mapped);
    }
    return mapped;
  }
}

function asText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const text = String(value).trim();
  return text === '' ? undefined : text;
}

// A skipped row's listing quotes at most this much of what it held: an import keeps up to a
// thousand of them, and a cell may hold a megabyte.
const QUOTED_CHARS = 320;
const quoted = (text: string | undefined | null) =>
  text == null ? null : text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;

const TRUE = new Set(['true', '1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n', '']);

export function readRow(source: SourceRow, columns: ColumnMap, definitions: FieldDefinitions): RowResult {
  const values = source.values;
  if (!values) return { ok: false, row: source.row, email: null, reason: source.problem ?? 'unreadable row' };
  const out: ImportRow = { row: source.row, email: '', unsubscribe: false, custom_fields: '{}' };
  let rawEmail: string | undefined;
  const fields: Array<[string, unknown]> = [];
  for (const { key, role } of columns.roles(Object.keys(values))) {
    const value = values[key];
    switch (role) {
      case 'email':
        rawEmail = asText(value);
        break;
      case 'first_name':
      case 'last_name': {
        const text = asText(value);
        if (text !== undefined) out[role] = text.slice(0, 255);
        break;
      }
      case 'unsubscribed': {
        const text = typeof value === 'boolean' ? String(value) : (asText(value) ?? '').toLowerCase();
        if (TRUE.has(text)) out.unsubscribe = true;
        else if (!FALSE.has(text))
          return {
            ok: false,
            row: source.row,
            email: quoted(rawEmail),
            reason: `unsubscribed must be true or false, got "${quoted(String(value))}"`,
          };
        break;
      }
      case 'custom_fields': {
        let object = value;
        if (typeof value === 'string') {
          if (value.trim() === '') break;
          try {
            object = JSON.parse(value);
          } catch {
            return { ok: false, row: source.row, email: quoted(rawEmail), reason: 'custom_fields is not a JSON object' };
          }
        }
        if (object === null || typeof object !== 'object' || Array.isArray(object))
          return { ok: false, row: source.row, email: quoted(rawEmail), reason: 'custom_fields is not a JSON object' };
        fields.push(...Object.entries(object as Record<string, unknown>));
        break;
      }
      case 'field':
        if (value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '')) fields.push([key.trim(), value]);
        break;
    }
  }
  if (rawEmail === undefined) return { ok: false, row: source.row, email: null, reason: 'no email address' };
  const email = normalizeAddress(rawEmail);
  if (email === null) return { ok: false, row: source.row, email: quoted(rawEmail), reason: 'invalid email address' };
  out.email = email;
  if (fields.length === 0) return { ok: true, value: out };
  if (fields.length > MAX_COLUMNS)
    return {
      ok: false,
      row: source.row,
      email,
      reason: `${fields.length.toLocaleString('en-US')} custom fields; a contact takes at most ${MAX_COLUMNS.toLocaleString('en-US')} from one row`,
    };
  const customFields: Record<string, unknown> = {};
  for (const [key, value] of fields) {
    const checked = checkFieldValue(definitions.get(key), key, typeof value === 'string' ? value.trim() : value);
    if ('error' in checked) return { ok: false, row: source.row, email, reason: checked.error };
    customFields[key] = checked.value;
  }
  out.custom_fields = JSON.stringify(customFields);
  return { ok: true, value: out };
}

/** True when a header names an email column. */
export function hasEmailColumn(columns: ColumnMap, names: string[]): boolean {
  return columns.roles(names).some((c) => c.role === 'email');
}
