// Automations: the list with a status filter; create (a starter graph for the chosen context).
// One automation: its workflow built in the builder (components/automations/Builder.tsx, checked
// live by the validate endpoint) or edited as JSON (steps, connections, settings) with problems shown
// at their field paths while typing (the API's own structure checker) and, after saving, the
// API's answer at the same paths; the graph drawn as a flow with each step's statistics; start,
// pause, stop, run now; its runs with a status filter and each run's steps; the per-step funnel.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, ok, type Ok } from '../api/client';
import { Bars, type Bar } from '../components/campaigns/Bars';
import { Diagram, flowOrder } from '../components/automations/Diagram';
import { Builder, type Catalog } from '../components/automations/Builder';
import type { Graph } from '../components/automations/graph-edit';
import { Picture } from '../components/automations/Picture';
import { Tabs } from '../components/Tabs';
import { DeleteButton } from '../components/DeleteButton';
import { FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { ListTable } from '../components/ListTable';
import { Badge, Button, Dialog, ErrorBox, Facts, Field, Loading, PageHeader, Select } from '../components/ui';
import { jsonError } from '../lib/json';
import { formatDate, useAction, useLoad, usePolling } from '../lib/hooks';
import { present, useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import {
  CONTEXTS,
  checkGraph,
  checkSettings,
  DEFAULT_SETTINGS,
  type AutomationContext,
  type Problems,
} from '../../../src/resources/automations/graph.ts';
import type { PageProps } from './index';

type Automation = Ok<'/v2/automations/{id}', 'get'>['data'];
type Run = Ok<'/v2/automations/{id}/runs/{run_id}', 'get'>['data'];
type Stats = Ok<'/v2/automations/{id}/stats', 'get'>['data'];

const CONTEXT_NAMES: Record<AutomationContext, string> = { contact: 'Contact', email: 'Email', event: 'Event' };
const STATUS_OPTIONS: Array<[string, string]> = [
  ['', 'All'],
  ['draft', 'Draft'],
  ['running', 'Running'],
  ['paused', 'Paused'],
  ['stopped', 'Stopped'],
];
const RUN_STATUS_OPTIONS: Array<[string, string]> = [
  ['', 'All'],
  ['running', 'Running'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['canceled', 'Canceled'],
];

/** A graph that passes the structure checks, to start from. */
function starter(context: AutomationContext) {
  const trigger = context === 'contact' ? 'contact.updated' : context === 'email' ? 'email.bounced' : 'system.manual';
  return {
    steps: [
      { key: 'start', type: 'trigger', trigger },
      { key: 'pause', type: 'action', action: 'wait', config: { seconds: 60 } },
      { key: 'done', type: 'action', action: 'end' },
    ],
    connections: [
      { from: 'start', to: 'pause' },
      { from: 'pause', to: 'done' },
    ],
  };
}

export function Automations() {
  const list = useListPage({ status: '' }, (_, { page, filters }) =>
    ok(api.GET('/v2/automations', { params: { query: present({ page, per_page: 25, status: filters.status }) as never } })),
  );
  const automations = list.loaded;
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const [context, setContext] = useState<AutomationContext>('event');
  const [start, setStart] = useState<'starter' | 'trigger'>('starter');
  const add = useAction();
  return (
    <>
      <PageHeader title="Automations">
        <Button kind="primary" onClick={() => setAdding(true)}>
          New automation
        </Button>
      </PageHeader>
      <div class="toolbar">
        <FilterSelect list={list} name="status" label="Status" options={STATUS_OPTIONS} />
      </div>
      {automations.data ? <p class="muted">{automations.data.total_records.toLocaleString()} automations</p> : null}
      <ListTable
        label="Automation list"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Context', 'Status', 'Steps', 'Last run started', 'Created']}
        empty={{
          title: 'No automations.',
          text: 'An automation sends emails by itself when something happens, such as a new subscriber.',
          action: 'Add your first automation',
          onAction: () => setAdding(true),
        }}
        hasNext={(data) => data.current_page < data.total_pages}
        row={(a) => (
          <tr>
            <td>
              <Link href={`/automations/${a.id}`}>{a.name}</Link>
            </td>
            <td>{CONTEXT_NAMES[a.context as AutomationContext] ?? a.context}</td>
            <td>
              <Badge value={a.status} />
            </td>
            <td>{a.steps.length}</td>
            <td>{formatDate(a.last_triggered_at)}</td>
            <td>{formatDate(a.created_at)}</td>
          </tr>
        )}
      />
      <Dialog title="New automation" open={adding} onClose={() => setAdding(false)}>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const created = await add.run(() =>
              ok(
                api.POST('/v2/automations', {
                  body: {
                    name,
                    context,
                    ...(start === 'trigger' ? { steps: starter(context).steps.slice(0, 1), connections: [] } : starter(context)),
                  },
                }),
              ),
            );
            if (created) navigate(`/automations/${created.data.id}`);
          }}
        >
          <Field label="Name">
            <input name="name" required maxLength={191} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <Select
            label="Runs for each"
            value={context}
            onChange={(v) => setContext(v as AutomationContext)}
            options={CONTEXTS.map((c): [string, string] => [
              c,
              {
                contact: 'Contact (audience, contact and date triggers)',
                email: 'Email (delivery, bounce, open… triggers)',
                event: 'Event (your own events, or run by hand)',
              }[c],
            ])}
          />
          <Select
            label="Start with"
            value={start}
            onChange={(v) => setStart(v as 'starter' | 'trigger')}
            options={[
              ['starter', 'A trigger, a wait and an end'],
              ['trigger', 'Only the trigger: build the rest step by step'],
            ]}
          />
          <p class="hint">The context cannot change later. You edit the steps next, in the builder or as JSON.</p>
          <ErrorBox error={add.error} />
          <p>
            <Button type="submit" kind="primary" busy={add.busy}>
              Create automation
            </Button>
          </p>
        </form>
      </Dialog>
    </>
  );
}

type Workflow = { description?: unknown; settings?: unknown; steps?: unknown; connections?: unknown };
type Checked = { kind: 'json'; message: string } | { kind: 'checked'; value: Workflow; problems: Problems };

function check(text: string, context: AutomationContext): Checked {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'json', message: jsonError(text, error as Error) };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { kind: 'json', message: 'The workflow must be a JSON object with steps and connections' };
  const workflow = value as Workflow;
  const problems: Problems = {};
  checkGraph(context, { steps: workflow.steps, connections: workflow.connections }, problems);
  checkSettings(workflow.settings, DEFAULT_SETTINGS, problems);
  return { kind: 'checked', value: workflow, problems };
}

const workflowText = (a: Automation) =>
  JSON.stringify(
    {
      description: a.description,
      settings: a.settings,
      steps: a.steps.map(({ id: _id, key, type, trigger, action, config }) => ({
        key,
        type,
        ...(trigger ? { trigger } : {}),
        ...(action ? { action } : {}),
        ...(Object.keys(config).length ? { config } : {}),
      })),
      connections: a.connections,
    },
    null,
    2,
  );

function ProblemList({ problems, title, tone }: { problems: Problems; title: string; tone: 'error' | 'warning' }) {
  const entries = Object.entries(problems);
  if (entries.length === 0) return null;
  return (
    <div class={tone === 'error' ? 'error' : 'warning'} role={tone === 'error' ? 'alert' : undefined}>
      <p>{title}</p>
      <ul class="problems" aria-label={title}>
        {entries.map(([path, messages]) => (
          <li data-path={path}>
            <code>{path}</code>: {messages.join(' ')}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The save path's checks without saving, asked again a moment after each change (the builder's
 *  live validation). */
function useLiveValidation(
  body: Record<string, unknown> | null,
  active: boolean,
): { problems: Problems; checking: boolean; checked: boolean } {
  const [state, setState] = useState<{ problems: Problems; checking: boolean; checked: boolean }>({
    problems: {},
    checking: false,
    checked: false,
  });
  const key = body && active ? JSON.stringify(body) : null;
  useEffect(() => {
    if (key === null) return;
    let current = true;
    setState((s) => ({ ...s, checking: true }));
    const timer = setTimeout(async () => {
      try {
        const answer = await ok(api.POST('/v2/automations/validate', { body: JSON.parse(key) as never }));
        if (current) setState({ problems: answer.data.errors as Problems, checking: false, checked: true });
      } catch {
        if (current) setState((s) => ({ ...s, checking: false }));
      }
    }, 400);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [key]);
  return state;
}

function WorkflowEditor({
  automation,
  stats,
  onSaved,
  mode,
  catalog,
}: {
  automation: Automation;
  stats: Stats | undefined;
  onSaved: (a: Automation) => void;
  mode: 'builder' | 'json';
  catalog: Catalog | undefined;
}) {
  const context = automation.context as AutomationContext;
  const [name, setName] = useState(automation.name);
  const [text, setText] = useState(workflowText(automation));
  const checked = useMemo(() => check(text, context), [text, context]);
  const [apiProblems, setApiProblems] = useState<Problems>({});
  const save = useAction();
  const [saved, setSaved] = useState(false);
  const local = checked.kind === 'checked' ? checked.problems : {};
  const value = checked.kind === 'checked' ? checked.value : null;
  const steps =
    value && Array.isArray(value.steps) ? (value.steps as Array<Record<string, any>>).filter((s) => s && typeof s === 'object') : [];
  const connections =
    value && Array.isArray(value.connections)
      ? (value.connections as Array<Record<string, any>>).filter((c) => c && typeof c === 'object')
      : [];
  const live = useLiveValidation(value ? { name, context, ...value } : null, mode === 'builder');
  const setGraph = (graph: Graph) => {
    setText(JSON.stringify({ ...value, steps: graph.steps, connections: graph.connections }, null, 2));
    setSaved(false);
  };
  const shownProblems = Object.keys(apiProblems).length ? apiProblems : live.problems;
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!value) return;
        setSaved(false);
        setApiProblems({});
        const updated = await save.run(async () => {
          try {
            return await ok(
              api.POST('/v2/automations/{id}', { params: { path: { id: automation.id } }, body: { name, ...value } as never }),
            );
          } catch (error) {
            const body = error instanceof ApiFailure ? (error.body as { errors?: Problems }) : null;
            if (body?.errors && typeof body.errors === 'object') setApiProblems(body.errors);
            throw error;
          }
        });
        if (updated) {
          setSaved(true);
          onSaved(updated.data);
        }
      }}
    >
      <Field label="Name">
        <input name="name" required maxLength={191} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </Field>
      {mode === 'builder' ? (
        <section aria-labelledby="builder-title">
          <h2 id="builder-title">Steps</h2>
          {!value ? (
            <p class="warning">The workflow is not valid JSON: fix it in the JSON tab first.</p>
          ) : !catalog ? (
            <Loading label="Loading the catalogue…" />
          ) : (
            <Builder
              context={context}
              graph={{ steps: steps as never, connections: connections as never }}
              onChange={setGraph}
              catalog={catalog}
              problems={shownProblems}
              stats={stats}
            />
          )}
          <p id="builder-check" aria-live="polite" class="small-text">
            {live.checking ? (
              'Checking…'
            ) : live.checked ? (
              Object.keys(live.problems).length === 0 ? (
                <span class="ok-text">Valid: ready to save.</span>
              ) : (
                `${Object.keys(live.problems).length === 1 ? 'One problem' : `${Object.keys(live.problems).length} problems`} to fix before it can start.`
              )
            ) : null}
          </p>
          {Object.keys(apiProblems).length === 0 ? (
            <ErrorBox error={save.error} />
          ) : (
            <ProblemList problems={apiProblems} title="The API refused the workflow:" tone="error" />
          )}
          <Button type="submit" kind="primary" busy={save.busy} disabled={!value}>
            Save workflow
          </Button>
          {saved ? <span role="status"> Saved.</span> : null}
        </section>
      ) : (
        <div class="editor-grid">
          <div>
            <Field
              label="Workflow (JSON)"
              hint="description, settings, steps (key, type, trigger or action, config) and connections (from, to, branch)"
            >
              <textarea
                class="code"
                spellcheck={false}
                aria-describedby="workflow-check"
                value={text}
                onInput={(e) => {
                  setText((e.target as HTMLTextAreaElement).value);
                  setSaved(false);
                }}
              />
            </Field>
            <div id="workflow-check" aria-live="polite">
              {checked.kind === 'json' ? <p class="error">Not valid JSON: {checked.message}</p> : null}
              <ProblemList problems={local} title="Problems in the workflow:" tone="warning" />
              {checked.kind === 'checked' && Object.keys(local).length === 0 ? (
                <p class="ok-text">The structure is valid. Each action's settings are checked when saving.</p>
              ) : null}
            </div>
            <ProblemList problems={apiProblems} title="The API refused the workflow:" tone="error" />
            {Object.keys(apiProblems).length === 0 ? <ErrorBox error={save.error} /> : null}
            <Button type="submit" kind="primary" busy={save.busy} disabled={checked.kind === 'json'}>
              Save workflow
            </Button>
            {saved ? <span role="status"> Saved.</span> : null}
          </div>
          <section aria-labelledby="diagram-title">
            <h2 id="diagram-title">Diagram</h2>
            {checked.kind === 'json' ? (
              <p class="muted">The diagram returns once the JSON is valid.</p>
            ) : (
              <>
                <Picture steps={steps as never} connections={connections as never} stats={stats} />
                <Diagram steps={steps as never} connections={connections as never} problems={{ ...local, ...apiProblems }} stats={stats} />
              </>
            )}
          </section>
        </div>
      )}
    </form>
  );
}

function RunNow({
  automation,
  open,
  onClose,
  onDone,
}: {
  automation: Automation;
  open: boolean;
  onClose: () => void;
  onDone: (run: Run) => void;
}) {
  const example = automation.context === 'contact' ? '{\n  "contact_id": ""\n}' : '{\n  "to": "someone@example.org"\n}';
  const [text, setText] = useState(example);
  const run = useAction();
  return (
    <Dialog title="Run now" open={open} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          let payload: Record<string, unknown>;
          try {
            payload = JSON.parse(text || '{}');
          } catch (error) {
            run.setError(`The payload is not valid JSON: ${jsonError(text, error as Error)}`);
            return;
          }
          const started = await run.run(() =>
            ok(api.POST('/v2/automations/{id}/trigger', { params: { path: { id: automation.id } }, body: { payload } })),
          );
          if (started) onDone(started.data);
        }}
      >
        <Field
          label="Payload (JSON)"
          hint={
            automation.context === 'contact'
              ? "contact_id names the run's contact (con_ id or email)"
              : 'Available to steps as {{payload.…}}'
          }
        >
          <textarea
            class="code"
            rows={6}
            spellcheck={false}
            value={text}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
        </Field>
        <ErrorBox error={run.error} />
        <p>
          <Button type="submit" kind="primary" busy={run.busy}>
            Start a run
          </Button>
        </p>
      </form>
    </Dialog>
  );
}

function Runs({ automation, refreshKey }: { automation: Automation; refreshKey: number }) {
  const list = useListPage(
    { status: '' },
    (_, { page, filters }) =>
      ok(
        api.GET('/v2/automations/{id}/runs', {
          params: { path: { id: automation.id }, query: present({ page, per_page: 25, status: filters.status }) as never },
        }),
      ),
    { deps: [automation.id, refreshKey] },
  );
  const runs = list.loaded;
  const active = Boolean(runs.data?.data.some((r) => r.status === 'running'));
  usePolling(runs.reload, 2000, active);
  return (
    <>
      <div class="toolbar">
        <FilterSelect list={list} name="status" label="Run status" options={RUN_STATUS_OPTIONS} />
        <Button onClick={() => void runs.reload()}>Refresh</Button>
      </div>
      {runs.data ? <p class="muted">{runs.data.total_records.toLocaleString()} runs</p> : null}
      <ListTable
        label="Runs"
        {...list.table}
        quiet
        items={(data) => data.data}
        columns={['Run', 'Status', 'Trigger', 'Contact or email', 'Steps', 'Started', 'Ended']}
        empty="No runs."
        hasNext={(data) => data.current_page < data.total_pages}
        row={(r) => (
          <tr>
            <td>
              <Link href={`/automations/${automation.id}/runs/${r.id}`}>{r.id}</Link>
            </td>
            <td>
              <Badge value={r.status} />
            </td>
            <td>{r.event}</td>
            <td>{r.contact_id ?? r.email_id ?? '—'}</td>
            <td>{r.run_steps.length}</td>
            <td>{formatDate(r.started_at ?? r.created_at)}</td>
            <td>{formatDate(r.completed_at)}</td>
          </tr>
        )}
      />
    </>
  );
}

/** The steps in flow order as a funnel (visits), and each send_email step's email funnel. */
function StatsView({
  automation,
  stats,
}: {
  automation: Automation;
  stats: { data: Stats | undefined; loading: boolean; error: string | null; reload: () => Promise<void> };
}) {
  const s = stats.data;
  const order = flowOrder(automation.steps, automation.connections);
  const actions = order.map((i) => automation.steps[i]).filter((step) => step.type === 'action');
  const first = s && actions.length ? (s[actions[0].key]?.total ?? 0) : 0;
  const colors = ['#2457c5', '#1f7a3a', '#5b3cc4', '#006d77', '#8a4b00', '#4a5568'];
  const visits: Bar[] = s
    ? actions.map((step, i) => ({ label: step.key, value: s[step.key]?.total ?? 0, color: colors[i % colors.length] }))
    : [];
  const mails = s ? actions.filter((step) => step.action === 'send_email') : [];
  return (
    <>
      <div class="toolbar">
        <Button onClick={() => void stats.reload()}>Refresh</Button>
      </div>
      {stats.loading && !s ? <Loading /> : null}
      <ErrorBox error={stats.error} />
      {s ? (
        <>
          <Bars id="step-funnel" title="Runs reaching each step" total={first || undefined} bars={visits} />
          {mails.map((step) => {
            const f = (s[step.key] as { funnel?: Record<string, number> }).funnel ?? {};
            return (
              <Bars
                id={`funnel-${step.key}`}
                title={`Emails of step ${step.key}`}
                total={f.accepted || undefined}
                bars={[
                  { label: 'Accepted', value: f.accepted ?? 0, color: '#2457c5' },
                  { label: 'Delivered', value: f.delivered ?? 0, color: '#1f7a3a' },
                  { label: 'Opened', value: f.loaded ?? 0, color: '#5b3cc4' },
                  { label: 'Clicked', value: f.clicked ?? 0, color: '#006d77' },
                  { label: 'Bounced', value: f.bounced ?? 0, color: '#b3261e' },
                  { label: 'Failed', value: f.failed ?? 0, color: '#7a1712' },
                  { label: 'Complained', value: f.complained ?? 0, color: '#8a4b00' },
                  { label: 'Unsubscribed', value: f.unsubscribed ?? 0, color: '#4a5568' },
                ]}
              />
            );
          })}
        </>
      ) : null}
    </>
  );
}

const TABS = [
  ['builder', 'Builder'],
  ['workflow', 'JSON'],
  ['runs', 'Runs'],
  ['stats', 'Statistics'],
] as const;
type Tab = (typeof TABS)[number][0];

export function AutomationDetail({ params }: PageProps) {
  const loaded = useLoad(() => ok(api.GET('/v2/automations/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const [current, setCurrent] = useState<Automation | null>(null);
  const a = current ?? loaded.data?.data;
  const stats = useLoad(
    () => ok(api.GET('/v2/automations/{id}/stats', { params: { path: { id: params.id } } })).then((r) => r.data),
    [params.id],
  );
  const [tab, setTab] = useState<Tab>('builder');
  // The catalogue the builder draws its forms from (the same for every automation).
  const catalog = useLoad(() => ok(api.GET('/v2/automations/catalog')).then((r) => r.data as Catalog), []);
  const [running, setRunning] = useState(false);
  const [runsKey, setRunsKey] = useState(0);
  const action = useAction();
  const path = a ? { params: { path: { id: a.id } } } : null;
  const act = async (call: () => Promise<{ data: Automation }>) => {
    const next = await action.run(call);
    if (next) setCurrent(next.data);
  };
  const manual = a?.steps.some((s) => s.type === 'trigger' && s.trigger === 'system.manual');
  return (
    <>
      <PageHeader title={a ? `Automation: ${a.name}` : 'Automation'}>
        {a && path ? (
          <>
            {a.status !== 'running' ? (
              <Button kind="primary" busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/automations/{id}/start', path)))}>
                {a.status === 'paused' ? 'Resume' : 'Start'}
              </Button>
            ) : null}
            {a.status === 'running' && manual ? (
              <Button kind="primary" onClick={() => setRunning(true)}>
                Run now
              </Button>
            ) : null}
            {a.status === 'running' ? (
              <Button busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/automations/{id}/pause', path)))}>
                Pause
              </Button>
            ) : null}
            {a.status === 'running' || a.status === 'paused' ? (
              <Button
                busy={action.busy}
                onClick={() => {
                  if (confirm(`Stop ${a.name}? Its running runs end canceled.`))
                    void act(() => ok(api.POST('/v2/automations/{id}/stop', path)));
                }}
              >
                Stop
              </Button>
            ) : null}
            <DeleteButton
              action={action}
              question={`Delete ${a.name} and its runs?`}
              remove={() => ok(api.DELETE('/v2/automations/{id}', path))}
              done="/automations"
            />
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/automations" backText="All automations" loading={loaded.loading && !a} error={loaded.error ?? action.error} />
      {a ? (
        <>
          <Facts
            items={[
              ['Status', <Badge value={a.status} />],
              ['Context', CONTEXT_NAMES[a.context as AutomationContext] ?? a.context],
              ['Last run started', formatDate(a.last_triggered_at)],
              ['Last started', formatDate(a.published_at)],
            ]}
          />
          <Tabs
            label="Automation"
            tabs={TABS}
            selected={tab}
            onSelect={(key) => {
              setTab(key);
              if (key !== 'runs') void stats.reload();
            }}
            panelId="automation-panel"
            style="margin-top: 1rem"
          >
            {tab === 'builder' || tab === 'workflow' ? (
              <WorkflowEditor
                key={a.id}
                automation={a}
                stats={stats.data}
                onSaved={setCurrent}
                mode={tab === 'builder' ? 'builder' : 'json'}
                catalog={catalog.data}
              />
            ) : null}
            {tab === 'runs' ? <Runs automation={a} refreshKey={runsKey} /> : null}
            {tab === 'stats' ? <StatsView automation={a} stats={stats} /> : null}
          </Tabs>
          <RunNow
            automation={a}
            open={running}
            onClose={() => setRunning(false)}
            onDone={() => {
              setRunning(false);
              setRunsKey(runsKey + 1);
              setTab('runs');
            }}
          />
        </>
      ) : null}
    </>
  );
}

export function AutomationRun({ params }: PageProps) {
  const run = useLoad(
    () => ok(api.GET('/v2/automations/{id}/runs/{run_id}', { params: { path: { id: params.id, run_id: params.run_id } } })),
    [params.id, params.run_id],
  );
  const [current, setCurrent] = useState<Run | null>(null);
  const r = current ?? run.data?.data;
  const cancel = useAction();
  // The polled answer replaces a cancel's only if it came later (a poll started before the
  // cancel must not show the run running again).
  const order = useRef({ issued: 0, shown: 0 });
  const poll = async () => {
    const ticket = ++order.current.issued;
    await run.reload();
    if (ticket > order.current.shown) {
      order.current.shown = ticket;
      setCurrent(null);
    }
  };
  usePolling(poll, 2000, r?.status === 'running');
  return (
    <>
      <PageHeader title="Automation run">
        {r?.status === 'running' ? (
          <Button
            busy={cancel.busy}
            onClick={async () => {
              const ticket = ++order.current.issued;
              const next = await cancel.run(() =>
                ok(api.POST('/v2/automations/{id}/runs/{run_id}/cancel', { params: { path: { id: params.id, run_id: params.run_id } } })),
              );
              if (next && ticket > order.current.shown) {
                order.current.shown = ticket;
                setCurrent(next.data);
              }
            }}
          >
            Cancel run
          </Button>
        ) : null}
      </PageHeader>
      <p>
        <Link href={`/automations/${params.id}`}>Back to the automation</Link>
      </p>
      {run.loading && !r ? <Loading /> : null}
      <ErrorBox error={run.error ?? cancel.error} />
      {r ? (
        <>
          <Facts
            items={[
              ['Run', <code class="break-anywhere">{r.id}</code>],
              ['Status', <Badge value={r.status} />],
              ['Trigger', r.event],
              ['Contact', r.contact_id ? <Link href={`/contacts/${r.contact_id}`}>{r.contact_id}</Link> : '—'],
              ['Email', r.email_id ? <Link href={`/emails/${r.email_id}`}>{r.email_id}</Link> : '—'],
              ['Started', formatDate(r.started_at ?? r.created_at)],
              ['Ended', formatDate(r.completed_at)],
            ]}
          />
          <h2>Steps</h2>
          <ol class="flow" aria-label="Steps of the run">
            {r.run_steps.map((s) => (
              <li class="flow-step" data-run-step={s.step_key}>
                <div>
                  <strong>{s.step_key}</strong> <Badge value={s.status} />{' '}
                  <span class="muted small-text">{formatDate(s.started_at ?? s.created_at)}</span>
                </div>
                {typeof s.data.email_oid === 'string' ? (
                  <p class="small-text">
                    <Link href={`/emails/${s.data.email_oid}`}>The email of step {s.step_key}</Link>
                  </p>
                ) : null}
                {Object.keys(s.data).length > 0 ? (
                  <pre class="raw" tabIndex={0} aria-label={`What step ${s.step_key} did`}>
                    {JSON.stringify(s.data, null, 2)}
                  </pre>
                ) : null}
              </li>
            ))}
            {r.run_steps.length === 0 ? <li class="muted">No step reached yet.</li> : null}
          </ol>
          <h2>Trigger payload</h2>
          <pre class="raw" tabIndex={0} aria-label="Trigger payload">
            {JSON.stringify(r.payload, null, 2)}
          </pre>
        </>
      ) : null}
    </>
  );
}
