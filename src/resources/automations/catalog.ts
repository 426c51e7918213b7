// The catalogue the dashboard's automation builder draws its forms from
// (GET /v2/automations/catalog): every trigger and action with its title, description, contexts
// and config schema, read from the trigger and action tables.
import { ACTIONS, CONTEXTS } from './graph.ts';
import { ACTION_TABLE } from './actions/index.ts';
import { TRIGGER_TABLE } from './triggers.ts';

/** A TypeBox schema as plain JSON Schema (without TypeBox's symbol keys). */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

let built: ReturnType<typeof build> | null = null;

function build() {
  return {
    contexts: [...CONTEXTS],
    triggers: Object.entries(TRIGGER_TABLE).map(([name, t]) => ({
      name,
      title: t.title,
      description: t.description,
      contexts: [...t.contexts],
      fires: t.fires,
      config: plain(t.config),
    })),
    actions: Object.entries(ACTION_TABLE).map(([name, a]) => ({
      name,
      title: a.title,
      description: a.description,
      contexts: [...ACTIONS[name]],
      branching: a.branching,
      config: plain(a.config),
    })),
  };
}

export function automationCatalog() {
  return (built ??= build());
}
