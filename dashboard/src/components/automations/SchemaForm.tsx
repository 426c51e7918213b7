// A step's config as a form drawn from its JSON Schema (the catalogue's): text and number inputs,
// enums and constants as selects, booleans as checkboxes, arrays of strings one per line, and a
// small JSON field for anything else (filters, variants, unions). Each field has its label and
// shows the problems found at its path.
import { useState } from 'preact/hooks';

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  description?: string;
};

type Kind =
  | { kind: 'text' }
  | { kind: 'number'; integer: boolean }
  | { kind: 'select'; options: string[] }
  | { kind: 'boolean' }
  | { kind: 'lines' }
  | { kind: 'json' };

/** Which input fits a property's schema. */
export function kindOf(schema: JsonSchema): Kind {
  if (schema.const !== undefined && typeof schema.const === 'string') return { kind: 'select', options: [schema.const] };
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string'))
    return { kind: 'select', options: schema.enum as string[] };
  if (Array.isArray(schema.anyOf) && schema.anyOf.length > 0 && schema.anyOf.every((s) => typeof s.const === 'string'))
    return { kind: 'select', options: schema.anyOf.map((s) => s.const as string) };
  if (schema.type === 'string') return { kind: 'text' };
  if (schema.type === 'integer' || schema.type === 'number') return { kind: 'number', integer: schema.type === 'integer' };
  if (schema.type === 'boolean') return { kind: 'boolean' };
  if (schema.type === 'array' && schema.items?.type === 'string') return { kind: 'lines' };
  return { kind: 'json' };
}

/** The config a new step starts with: constants, defaults, and 0 for a required number. */
export function initialConfig(schema: JsonSchema): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (prop.const !== undefined) config[name] = prop.const;
    else if (prop.default !== undefined) config[name] = prop.default;
    else if (required.has(name) && (prop.type === 'integer' || prop.type === 'number')) config[name] = prop.minimum ?? 0;
  }
  return config;
}

const words = (name: string) => name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

function JsonField({
  id,
  value,
  onChange,
  invalid,
  describedBy,
}: {
  id: string;
  value: unknown;
  onChange: (v: unknown) => void;
  invalid: boolean;
  describedBy: string;
}) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2));
  const [bad, setBad] = useState<string | null>(null);
  return (
    <>
      <textarea
        id={id}
        class="code builder-json"
        rows={4}
        spellcheck={false}
        aria-invalid={invalid || bad !== null}
        aria-describedby={describedBy}
        value={text}
        onInput={(e) => {
          const next = (e.target as HTMLTextAreaElement).value;
          setText(next);
          if (next.trim() === '') {
            setBad(null);
            return onChange(undefined);
          }
          try {
            onChange(JSON.parse(next));
            setBad(null);
          } catch {
            setBad('Not valid JSON yet.');
          }
        }}
      />
      {bad ? <span class="field-error">{bad}</span> : null}
    </>
  );
}

export function SchemaForm({
  schema,
  value,
  onChange,
  errors,
  idPrefix,
}: {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange: (next: Record<string, unknown>) => void;
  /** Problems by config field name. */
  errors: Record<string, string[]>;
  /** Makes the field ids unique on the page. */
  idPrefix: string;
}) {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const set = (name: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined || v === '') delete next[name];
    else next[name] = v;
    onChange(next);
  };
  if (properties.length === 0) return <p class="muted small-text">Nothing to configure.</p>;
  return (
    <div class="builder-form">
      {properties.map(([name, prop]) => {
        const id = `${idPrefix}-${name}`;
        const kind = kindOf(prop);
        const problems = errors[name] ?? [];
        const describedBy = [prop.description ? `${id}-hint` : '', problems.length ? `${id}-error` : ''].filter(Boolean).join(' ');
        const current = value[name];
        const common = {
          id,
          'aria-invalid': problems.length > 0,
          'aria-describedby': describedBy || undefined,
          required: required.has(name),
        };
        let input;
        if (kind.kind === 'select') {
          input = (
            <select
              {...common}
              value={typeof current === 'string' ? current : ''}
              onChange={(e) => set(name, (e.target as HTMLSelectElement).value)}
            >
              {required.has(name) && typeof current === 'string' ? null : <option value="">(none)</option>}
              {kind.options.map((o) => (
                <option value={o}>{o}</option>
              ))}
            </select>
          );
        } else if (kind.kind === 'number') {
          input = (
            <input
              {...common}
              type="number"
              step={kind.integer ? 1 : 'any'}
              min={prop.minimum}
              max={prop.maximum}
              value={typeof current === 'number' ? String(current) : ''}
              onInput={(e) => {
                const text = (e.target as HTMLInputElement).value;
                set(name, text === '' ? undefined : Number(text));
              }}
            />
          );
        } else if (kind.kind === 'boolean') {
          input = (
            <input
              {...common}
              required={false}
              type="checkbox"
              checked={current === true}
              onChange={(e) => set(name, (e.target as HTMLInputElement).checked)}
            />
          );
        } else if (kind.kind === 'lines') {
          input = (
            <textarea
              {...common}
              rows={3}
              value={Array.isArray(current) ? current.join('\n') : ''}
              onInput={(e) => {
                const lines = (e.target as HTMLTextAreaElement).value
                  .split('\n')
                  .map((l) => l.trim())
                  .filter(Boolean);
                set(name, lines.length ? lines : undefined);
              }}
            />
          );
        } else if (kind.kind === 'text') {
          input = (
            <input
              {...common}
              type="text"
              value={typeof current === 'string' ? current : ''}
              onInput={(e) => set(name, (e.target as HTMLInputElement).value)}
            />
          );
        } else {
          input = (
            <JsonField id={id} value={current} onChange={(v) => set(name, v)} invalid={problems.length > 0} describedBy={describedBy} />
          );
        }
        return (
          <div class={`field${kind.kind === 'boolean' ? ' inline' : ''}`} data-field={name}>
            <label for={id} class="label">
              {words(name)}
              {required.has(name) ? ' (required)' : ''}
              {kind.kind === 'lines' ? ' (one per line)' : kind.kind === 'json' ? ' (JSON)' : ''}
            </label>
            {input}
            {prop.description ? (
              <span class="hint" id={`${id}-hint`}>
                {prop.description}
              </span>
            ) : null}
            {problems.length ? (
              <span class="field-error" id={`${id}-error`}>
                {problems.join(' ')}
              </span>
            ) : null}
          </div>
        );
      })}
    </div>
  );
}
