// The automation builder: the graph drawn as cards in the order a run meets them, from the trigger
// down, a condition's yes and no and an experiment's variants as side-by-side columns. Each open
// end has a slot that adds a step from the catalogue (or connects to a step already there); each
// card opens a form drawn from its type's config schema. Problems (the validate endpoint's, by
// field path) show on the card and the field they belong to. All of it is buttons, selects and
// inputs in the page's order, so the keyboard reaches everything.
import { useEffect, useState } from 'preact/hooks';
import type { CanvasProps } from './Canvas';
import { SchemaForm, initialConfig, type JsonSchema } from './SchemaForm';
import { addStep, connect, disconnect, freshKey, outgoing, removeStep, renameStep, setConfig, type Graph, type Step } from './graph-edit';
// React Flow's layout rules (a lazily loaded chunk's CSS is never linked, so they come with the page's).
import '@xyflow/react/dist/base.css';
import './builder.css';

export interface CatalogEntry {
  name: string;
  title: string;
  description: string;
  contexts: string[];
  config: Record<string, unknown>;
  branching?: string;
  fires?: boolean;
}
export interface Catalog {
  triggers: CatalogEntry[];
  actions: CatalogEntry[];
}
type Problems = Record<string, string[]>;
type StepStats = { total: number; by_status: Record<string, number> };

interface Props {
  context: string;
  graph: Graph;
  onChange: (graph: Graph) => void;
  catalog: Catalog;
  problems: Problems;
  stats?: Record<string, StepStats>;
}

export function Builder({ context, graph, onChange, catalog, problems, stats }: Props) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  // The canvas library is a chunk of its own, fetched only here.
  const [Canvas, setCanvas] = useState<((props: CanvasProps) => preact.JSX.Element) | null>(null);
  useEffect(() => {
    void import('./Canvas').then((m) => setCanvas(() => m.Canvas));
  }, []);
  const toggle = (key: string, value?: boolean) => {
    const next = new Set(open);
    if (value ?? !next.has(key)) next.add(key);
    else next.delete(key);
    setOpen(next);
  };
  const actions = catalog.actions.filter((a) => a.contexts.includes(context));
  const triggers = catalog.triggers.filter((t) => t.contexts.includes(context));
  const entryOf = (step: Step) =>
    step.type === 'trigger' ? catalog.triggers.find((t) => t.name === step.trigger) : catalog.actions.find((a) => a.name === step.action);
  const indexOf = (key: string) => graph.steps.findIndex((s) => s.key === key);
  const rendered = new Set<string>();

  /** Adds a step of `type` (an action or trigger name, or `step:KEY` to connect) at a slot. */
  const place = (choice: string, at?: { from: string; branch: string }) => {
    if (choice.startsWith('step:')) return at && onChange(connect(graph, at.from, at.branch, choice.slice(5)));
    const isTrigger = !at;
    const entry = isTrigger ? triggers.find((t) => t.name === choice) : actions.find((a) => a.name === choice);
    if (!entry) return;
    const key = freshKey(graph, isTrigger ? 'start' : choice);
    const step: Step = isTrigger
      ? { key, type: 'trigger', trigger: choice, config: initialConfig(entry.config as JsonSchema) }
      : { key, type: 'action', action: choice, config: initialConfig(entry.config as JsonSchema) };
    onChange(addStep(graph, step, at));
    toggle(key, true);
  };

  const slot = (from: string, branch: string, label: string) => {
    const next = outgoing(graph, from, branch);
    if (next && rendered.has(next.to)) {
      return (
        <li class="fb-slot" data-slot={`${from}:${branch}`}>
          <span>
            → continues at <code>{next.to}</code>
          </span>{' '}
          <button type="button" class="small" onClick={() => onChange(disconnect(graph, from, branch))}>
            Disconnect {label.toLowerCase()}
          </button>
        </li>
      );
    }
    if (next) return chain(next.to);
    const targets = graph.steps.filter((s) => s.type === 'action' && s.key !== from);
    return [
      <li class="fb-slot" data-slot={`${from}:${branch}`}>
        <AddSlot
          label={label}
          groups={[
            ['New step', actions.map((a) => [a.name, a.title])],
            ['Connect to a step already there', targets.map((s) => [`step:${s.key}`, s.key])],
          ]}
          onAdd={(choice) => place(choice, { from, branch })}
        />
      </li>,
    ];
  };

  const card = (step: Step, children?: preact.ComponentChildren) => {
    const i = indexOf(step.key);
    const entry = entryOf(step);
    const mine = Object.entries(problems).filter(
      ([path]) => (path === `steps.${i}` || path.startsWith(`steps.${i}.`)) && !/^steps\.\d+\.config\.[^.]+/.test(path),
    );
    const outs = graph.connections.map((c, n) => [c, n] as const).filter(([c]) => c.from === step.key);
    const connectionProblems = Object.entries(problems).filter(([path]) =>
      outs.some(([, n]) => path === `connections.${n}` || path.startsWith(`connections.${n}.`)),
    );
    const fieldErrors: Problems = {};
    for (const [path, messages] of Object.entries(problems)) {
      const m = new RegExp(`^steps\\.${i}\\.config\\.([^.]+)`).exec(path);
      if (m) (fieldErrors[m[1]] ??= []).push(...messages);
    }
    const all = [
      ...mine,
      ...connectionProblems,
      ...Object.entries(problems).filter(([path]) => new RegExp(`^steps\\.${i}\\.config\\.`).test(path)),
    ];
    const s = step.type === 'action' ? stats?.[step.key] : undefined;
    const formId = `fb-form-${step.key}`;
    const isOpen = open.has(step.key);
    return (
      <li class={`fb-step${all.length ? ' fb-invalid' : ''}`} data-step={step.key}>
        <div class="fb-card">
          <div class="fb-head">
            <h3 id={`fb-title-${step.key}`}>
              {entry?.title ?? (step.trigger || step.action || 'Unknown step')} <code class="fb-key">{step.key}</code>
            </h3>
            <span class="muted small-text">{step.type === 'trigger' ? 'Trigger' : 'Action'}</span>
          </div>
          {entry ? <p class="small-text muted fb-desc">{entry.description}</p> : null}
          {s ? (
            <p class="small-text flow-stats">
              {s.total.toLocaleString()} {s.total === 1 ? 'visit' : 'visits'}
              {Object.entries(s.by_status)
                .filter(([, n]) => n > 0)
                .map(([status, n]) => ` · ${n} ${status}`)
                .join('')}
            </p>
          ) : null}
          {all.length ? (
            <ul class="problems" aria-label={`Problems of step ${step.key}`}>
              {all.map(([path, messages]) => (
                <li data-path={path}>
                  <code>{path}</code>: {messages.join(' ')}
                </li>
              ))}
            </ul>
          ) : null}
          <div class="fb-actions">
            <button type="button" class="small" aria-expanded={isOpen} aria-controls={formId} onClick={() => toggle(step.key)}>
              {isOpen ? 'Close' : 'Configure'} <span class="visually-hidden">{step.key}</span>
            </button>
            <button type="button" class="danger small" onClick={() => onChange(removeStep(graph, step.key))}>
              Remove <span class="visually-hidden">{step.key}</span>
            </button>
          </div>
          {isOpen ? (
            <div id={formId} class="fb-config" role="group" aria-labelledby={`fb-title-${step.key}`}>
              <div class="field">
                <label for={`fb-key-${step.key}`} class="label">
                  Step key
                </label>
                <input
                  id={`fb-key-${step.key}`}
                  type="text"
                  value={step.key}
                  onChange={(e) => {
                    const next = (e.target as HTMLInputElement).value.trim();
                    if (next && next !== step.key && indexOf(next) < 0) {
                      onChange(renameStep(graph, step.key, next));
                      const o = new Set(open);
                      o.delete(step.key);
                      o.add(next);
                      setOpen(o);
                    } else (e.target as HTMLInputElement).value = step.key;
                  }}
                />
              </div>
              {entry ? (
                <SchemaForm
                  schema={entry.config as JsonSchema}
                  value={step.config ?? {}}
                  onChange={(config) => onChange(setConfig(graph, step.key, config))}
                  errors={fieldErrors}
                  idPrefix={`fb-${step.key}`}
                />
              ) : (
                <p class="muted">This type is not in the catalogue; edit it in the JSON tab.</p>
              )}
            </div>
          ) : null}
        </div>
        {children}
      </li>
    );
  };

  /** A step and what follows it by its default way, as list items; branches as columns. */
  function chain(key: string): preact.JSX.Element[] {
    const items: preact.JSX.Element[] = [];
    let current: string | undefined = key;
    while (current !== undefined) {
      const step = graph.steps.find((s) => s.key === current);
      if (!step || rendered.has(step.key)) break;
      rendered.add(step.key);
      const branching = step.type === 'trigger' ? 'default' : (entryOf(step)?.branching ?? 'default');
      if (branching === 'yes_no' || branching === 'variants') {
        const names =
          branching === 'yes_no'
            ? ['yes', 'no']
            : Array.isArray(step.config?.variants)
              ? (step.config.variants as Array<{ key?: unknown }>)
                  .map((v) => v?.key)
                  .filter((k): k is string => typeof k === 'string' && k !== '')
              : [];
        items.push(
          card(
            step,
            <div class="fb-branches">
              {names.length === 0 ? <p class="muted small-text">Give the experiment variants (Configure) to connect each one.</p> : null}
              {names.map((branch) => {
                const label = branching === 'yes_no' ? `If ${branch}` : `Variant ${branch}`;
                return (
                  <section class="fb-branch" aria-label={`${label} of ${step.key}`}>
                    <p class="fb-branch-title">{label}</p>
                    <ol class="fb-list">{slot(step.key, branch, `${label} of ${step.key}`)}</ol>
                  </section>
                );
              })}
            </div>,
          ),
        );
        break;
      }
      items.push(card(step));
      if (branching === 'none') break;
      const next = outgoing(graph, step.key, 'default');
      if (next && !rendered.has(next.to)) current = next.to;
      else {
        items.push(...([] as preact.JSX.Element[]).concat(slot(step.key, 'default', `After ${step.key}`)));
        current = undefined;
      }
    }
    return items;
  }

  const triggerSteps = graph.steps.filter((s) => s.type === 'trigger');
  const flow = triggerSteps.flatMap((t) => chain(t.key));
  const loose = graph.steps
    .filter((s) => !rendered.has(s.key) && !graph.connections.some((c) => c.to === s.key))
    .flatMap((s) => chain(s.key));
  const rest = graph.steps.filter((s) => !rendered.has(s.key)).flatMap((s) => chain(s.key));
  const general = Object.entries(problems).filter(([path]) => !/^(steps|connections)\.\d+/.test(path));
  const branchesOf = (key: string) => {
    const step = graph.steps.find((s) => s.key === key);
    if (!step) return [];
    if (step.type === 'trigger') return ['default'];
    const branching = entryOf(step)?.branching ?? 'default';
    if (branching === 'none') return [];
    if (branching === 'yes_no') return ['yes', 'no'];
    if (branching === 'variants')
      return Array.isArray(step.config?.variants)
        ? (step.config.variants as Array<{ key?: unknown }>)
            .map((v) => v?.key)
            .filter((k): k is string => typeof k === 'string' && k !== '')
        : [];
    return ['default'];
  };
  const choose = (key: string) => {
    toggle(key, true);
    requestAnimationFrame(() => document.getElementById(`fb-key-${key}`)?.focus());
  };
  return (
    <div class="flow-builder">
      {Canvas ? (
        <figure class="fb-figure">
          <Canvas
            graph={graph}
            branchesOf={branchesOf}
            titleOf={(key) => {
              const step = graph.steps.find((s) => s.key === key);
              return (step && entryOf(step)?.title) ?? key;
            }}
            invalid={(key) => {
              const i = indexOf(key);
              return Object.keys(problems).some((path) => path === `steps.${i}` || path.startsWith(`steps.${i}.`));
            }}
            onConnect={(from, branch, to) => onChange(connect(graph, from, branch, to))}
            onDisconnect={(from, branch) => onChange(disconnect(graph, from, branch))}
            onChoose={choose}
          />
          <figcaption class="small-text muted">
            Drag from a step's lower handle to another step to connect them; select an arrow and press Delete to remove it; choose a step to
            configure it below. Every step and connection is also in the list below.
          </figcaption>
        </figure>
      ) : null}
      {general.length ? (
        <ul class="problems" aria-label="Problems of the workflow">
          {general.map(([path, messages]) => (
            <li data-path={path}>
              <code>{path}</code>: {messages.join(' ')}
            </li>
          ))}
        </ul>
      ) : null}
      <ol class="fb-list" aria-label="Steps">
        {flow}
        {triggerSteps.length === 0 ? (
          <li class="fb-slot" data-slot="trigger">
            <AddSlot
              label="Trigger"
              groups={[['Triggers', triggers.map((t) => [t.name, t.fires === false ? `${t.title} (never fires)` : t.title])]]}
              onAdd={(choice) => place(choice)}
            />
          </li>
        ) : null}
      </ol>
      {loose.length || rest.length ? (
        <section aria-labelledby="fb-loose">
          <h3 id="fb-loose">Not connected</h3>
          <p class="muted small-text">No trigger leads to these steps: connect them from a slot above, or remove them.</p>
          <ol class="fb-list">
            {loose}
            {rest}
          </ol>
        </section>
      ) : null}
    </div>
  );
}

function AddSlot({
  label,
  groups,
  onAdd,
}: {
  label: string;
  groups: Array<[string, Array<[string, string]>]>;
  onAdd: (choice: string) => void;
}) {
  const [choice, setChoice] = useState('');
  const id = `fb-add-${label.replace(/\W+/g, '-')}`;
  return (
    <div class="fb-add">
      <label for={id} class="label">
        {label === 'Trigger' ? 'Add a trigger' : `Add a step: ${label}`}
      </label>
      <select id={id} value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
        <option value="">Choose…</option>
        {groups
          .filter(([, options]) => options.length > 0)
          .map(([title, options]) => (
            <optgroup label={title}>
              {options.map(([value, text]) => (
                <option value={value}>{text}</option>
              ))}
            </optgroup>
          ))}
      </select>
      <button
        type="button"
        disabled={!choice}
        onClick={() => {
          onAdd(choice);
          setChoice('');
        }}
      >
        Add <span class="visually-hidden">{label}</span>
      </button>
    </div>
  );
}
