// Forms: the list with search, type and status filters; create. One form: its definition
// edited as JSON with feedback while typing (the JSON itself, then every reason it could not be
// published, from the same checker the API runs on publish) and a preview of its steps;
// publish and unpublish; its submissions; the embed snippet to copy; rotate the token, delete.
import { useMemo, useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, CopyButton, Dialog, ErrorBox, Facts, Field, Loading, PageHeader, SearchBox, Select } from '../components/ui';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { present, useListState } from '../lib/list';
import { Link, navigate } from '../lib/router';
import { definitionProblems, FORM_TYPES, type Block, type Step } from '../../../src/resources/forms/definition.ts';
import type { PageProps } from './index';

type Form = Ok<'/v2/forms/{id}/publish', 'post'>;
type FormType = (typeof FORM_TYPES)[number];
const TYPE_NAMES: Record<FormType, string> = { popup: 'Popup', full_page: 'Full page', flyout: 'Flyout', embed: 'Embedded', banner: 'Banner' };
const typeOptions = FORM_TYPES.map((t): [string, string] => [t, TYPE_NAMES[t]]);

export function Forms() {
  const list = useListState({ type: '', status: '', order: 'created_at', direction: 'desc' });
  const { type, status, ...sort } = list.filters;
  const forms = useLoad(
    () =>
      ok(
        api.GET('/v2/forms', {
          params: { query: present({ page: list.page, limit: 25, search: list.settledSearch, 'type.exact': type, 'status.exact': status, ...sort }) as never },
        }),
      ),
    [list.page, list.settledSearch, list.filters],
  );
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const [newType, setNewType] = useState<FormType>('popup');
  const add = useAction();
  return (
    <>
      <PageHeader title="Forms">
        <Button kind="primary" onClick={() => setAdding(true)}>
          New form
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search forms" />
        <Select label="Type" value={type} onChange={(v) => list.setFilter('type', v)} options={[['', 'All types'], ...typeOptions]} />
        <Select label="Status" value={status} onChange={(v) => list.setFilter('status', v)} options={[['', 'All'], ['draft', 'Draft'], ['live', 'Live']]} />
        <Select label="Sort by" value={list.filters.order} onChange={(v) => list.setFilter('order', v)} options={[['created_at', 'Added'], ['name', 'Name'], ['status', 'Status']]} />
      </div>
      <ListTable
        label="Forms"
        loaded={forms}
        items={(data) => data.data}
        columns={['Name', 'Type', 'Status', 'Published', 'Added']}
        empty="No forms."
        page={list.page}
        onPage={list.setPage}
        hasNext={nextPageUrl}
        row={(f) => (
          <tr>
            <td>
              <Link href={`/forms/${f.id}`}>{f.name}</Link>
            </td>
            <td>{TYPE_NAMES[f.type]}</td>
            <td>
              <Badge value={f.status} />
            </td>
            <td>{formatDate(f.published_at)}</td>
            <td>{formatDate(f.created_at)}</td>
          </tr>
        )}
      />
      <Dialog title="New form" open={adding} onClose={() => setAdding(false)}>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const created = await add.run(() => ok(api.POST('/v2/forms', { body: { name, type: newType } })));
            if (created) navigate(`/forms/${created.id}`);
          }}
        >
          <Field label="Name" hint="Not shown to visitors">
            <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <Select label="Form type" value={newType} onChange={(v) => setNewType(v as FormType)} options={typeOptions} />
          <ErrorBox error={add.error} />
          <p>
            <Button type="submit" kind="primary" busy={add.busy}>
              Create form
            </Button>
          </p>
        </form>
      </Dialog>
    </>
  );
}

/** Where a JSON.parse error is, as line and column (Chromium says "at position N"). */
function jsonError(text: string, error: Error): string {
  const at = /position (\d+)/.exec(error.message);
  if (!at) return error.message;
  const before = text.slice(0, Number(at[1])).split('\n');
  return `${error.message.replace(/\s*\(line \d+ column \d+\)/, '')} (line ${before.length}, column ${before[before.length - 1].length + 1})`;
}

type Checked = { kind: 'json'; message: string } | { kind: 'problems'; problems: string[]; value: Record<string, unknown> } | { kind: 'ok'; value: Record<string, unknown> };

function check(text: string, type: FormType): Checked {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'json', message: jsonError(text, error as Error) };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { kind: 'json', message: 'The definition must be a JSON object' };
  const object = value as Record<string, unknown>;
  const problems = definitionProblems({ ...object, type });
  return problems.length ? { kind: 'problems', problems, value: object } : { kind: 'ok', value: object };
}

function BlockPreview({ block }: { block: Block }) {
  switch (block.type) {
    case 'text':
      return block.level === 'heading' ? <p class="preview-heading">{block.content}</p> : <p>{block.content}</p>;
    case 'button':
      return (
        <span class="button primary-look" aria-hidden="true">
          {block.label}
        </span>
      );
    case 'image':
      return <span class="muted">[image: {block.alt}]</span>;
    default:
      return (
        <div class="preview-input">
          <span>
            {block.label}
            {block.required ? ' *' : ''}
          </span>
          <span class="preview-box">{block.placeholder ?? block.options?.map((o) => (typeof o === 'string' ? o : o.label)).join(' / ') ?? ''}</span>
        </div>
      );
  }
}

/** The steps as a visitor would meet them, drawn plainly (the embed script styles them). */
function Preview({ value }: { value: Record<string, unknown> }) {
  const steps = Array.isArray(value.steps) ? (value.steps as Step[]) : [];
  return (
    <div class="form-preview">
      {steps.map((step) => (
        <div class="preview-step">
          <p class="small-text muted">
            Step: {step.name ?? step.id} ({step.kind})
          </p>
          {Array.isArray(step.blocks) ? step.blocks.map((block) => <BlockPreview block={block} />) : null}
        </div>
      ))}
      {steps.length === 0 ? <p class="muted">No steps.</p> : null}
    </div>
  );
}

function DefinitionEditor({ form, onSaved }: { form: Form; onSaved: (form: Form) => void }) {
  const [name, setName] = useState(form.name);
  const [type, setType] = useState<FormType>(form.type);
  const [text, setText] = useState(JSON.stringify(form.definition, null, 2));
  const checked = useMemo(() => check(text, type), [text, type]);
  const save = useAction();
  const [saved, setSaved] = useState(false);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (checked.kind === 'json') return;
        setSaved(false);
        const updated = await save.run(() => ok(api.POST('/v2/forms/{id}', { params: { path: { id: form.id } }, body: { name, type, definition: { ...checked.value, type } } })));
        if (updated) {
          setSaved(true);
          onSaved(updated);
        }
      }}
    >
      <div class="inline-form">
        <Field label="Name">
          <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Select label="Form type" value={type} onChange={(v) => setType(v as FormType)} options={typeOptions} />
      </div>
      <div class="editor-grid" style="margin-top: 0.8rem">
        <div>
          <Field label="Definition (JSON)" hint="version, steps, styles, targeting, experiments">
            <textarea class="code" spellcheck={false} aria-describedby="definition-check" value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
          </Field>
          <div id="definition-check" aria-live="polite">
            {checked.kind === 'json' ? <p class="error">Not valid JSON: {checked.message}</p> : null}
            {checked.kind === 'problems' ? (
              <div class="warning">
                <p>Can be saved as a draft, but not published yet:</p>
                <ul class="problems">
                  {checked.problems.map((p) => (
                    <li>{p}</li>
                  ))}
                </ul>
              </div>
            ) : null}
            {checked.kind === 'ok' ? <p class="ok-text">The definition is ready to publish.</p> : null}
          </div>
        </div>
        <section aria-labelledby="preview-title">
          <h3 id="preview-title">Preview</h3>
          {checked.kind === 'json' ? <p class="muted">The preview returns once the JSON is valid.</p> : <Preview value={checked.value} />}
        </section>
      </div>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy} disabled={checked.kind === 'json'}>
        Save
      </Button>
      {saved ? <span role="status"> Saved.</span> : null}
    </form>
  );
}

function Submissions({ form }: { form: Form }) {
  const list = useListState({});
  const submissions = useLoad(
    () => ok(api.GET('/v2/forms/{id}/submissions', { params: { path: { id: form.id }, query: present({ page: list.page, limit: 25, search: list.settledSearch }) as never } })),
    [form.id, list.page, list.settledSearch],
  );
  return (
    <>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search submissions" />
        <Button onClick={() => void submissions.reload()}>Refresh</Button>
      </div>
      {submissions.data ? <p class="muted">{submissions.data.total_records.toLocaleString()} submissions</p> : null}
      <ListTable
        label="Submissions"
        loaded={submissions}
        items={(data) => data.data}
        columns={['Submitted', 'Values', 'Page']}
        empty="No submissions yet."
        page={list.page}
        onPage={list.setPage}
        hasNext={nextPageUrl}
        row={(s) => (
          <tr>
            <td>{formatDate(s.created_at)}</td>
            <td class="wrap">
              {Object.entries(s.fields).map(([key, value]) => (
                <div>
                  <strong>{key}</strong>: {typeof value === 'string' ? value : JSON.stringify(value)}
                </div>
              ))}
            </td>
            <td class="wrap">{s.page_url ?? '—'}</td>
          </tr>
        )}
      />
    </>
  );
}

function Embed({ form }: { form: Form }) {
  const embed = useLoad(() => ok(api.GET('/v2/forms/embed')), []);
  const e = embed.data;
  const placeholder = e?.placeholder_html.replace('FORM_TOKEN', form.token);
  return (
    <>
      {embed.loading ? <Loading /> : null}
      <ErrorBox error={embed.error} />
      {e ? (
        <>
          <p>Place this once on every page of your site, before &lt;/body&gt;. It shows every live popup, flyout, full-page and banner form.</p>
          <pre class="raw" aria-label="Embed script tag">
            {e.html}
          </pre>
          <CopyButton text={e.html} what="the embed script tag" />
          {form.type === 'embed' ? (
            <>
              <p>Then put this element where the form goes:</p>
              <pre class="raw" aria-label="Form placeholder">
                {placeholder}
              </pre>
              <CopyButton text={placeholder!} what="the form placeholder" />
            </>
          ) : null}
          {form.status !== 'live' ? <p class="muted">The form shows on your site once it is published.</p> : null}
        </>
      ) : null}
    </>
  );
}

const TABS = [
  ['definition', 'Definition'],
  ['submissions', 'Submissions'],
  ['embed', 'Embed'],
] as const;
type Tab = (typeof TABS)[number][0];

export function FormEditor({ params }: PageProps) {
  const loaded = useLoad(() => ok(api.GET('/v2/forms/{id}', { params: { path: { id: params.id } } })) as Promise<Form>, [params.id]);
  const [current, setCurrent] = useState<Form | null>(null);
  const [tab, setTab] = useState<Tab>('definition');
  const action = useAction();
  const f = current ?? loaded.data;
  const path = f ? { params: { path: { id: f.id } } } : null;
  const act = async (call: () => Promise<unknown>) => {
    const next = (await action.run(call)) as Form | undefined;
    if (next) setCurrent(next);
  };
  const move = (delta: number) => {
    const index = (TABS.findIndex(([key]) => key === tab) + delta + TABS.length) % TABS.length;
    setTab(TABS[index][0]);
    document.getElementById(`tab-${TABS[index][0]}`)?.focus();
  };
  return (
    <>
      <PageHeader title={f ? `Form: ${f.name}` : 'Form'}>
        {f && path ? (
          <>
            {f.status === 'live' ? (
              <Button busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/forms/{id}/unpublish', path)))}>
                Unpublish
              </Button>
            ) : (
              <Button kind="primary" busy={action.busy} onClick={() => act(() => ok(api.POST('/v2/forms/{id}/publish', path)))}>
                Publish
              </Button>
            )}
            <Button
              busy={action.busy}
              onClick={() => {
                if (confirm('Give the form a new public token? The old one stops working at once.')) void act(() => ok(api.POST('/v2/forms/{id}/rotate-token', path)));
              }}
            >
              Rotate token
            </Button>
            <Button
              kind="danger"
              busy={action.busy}
              onClick={async () => {
                if (!confirm(`Delete ${f.name} and its submissions?`)) return;
                if (await action.run(() => ok(api.DELETE('/v2/forms/{id}', path)))) navigate('/forms');
              }}
            >
              Delete
            </Button>
          </>
        ) : null}
      </PageHeader>
      <p>
        <Link href="/forms">All forms</Link>
      </p>
      {loaded.loading && !f ? <Loading /> : null}
      <ErrorBox error={loaded.error ?? action.error} />
      {f ? (
        <>
          <Facts
            items={[
              ['Status', <Badge value={f.status} />],
              ['Type', TYPE_NAMES[f.type]],
              ['Published', formatDate(f.published_at)],
              ['Public token', <code class="record">{f.token}</code>],
            ]}
          />
          <div role="tablist" aria-label="Form" class="tabs" style="margin-top: 1rem">
            {TABS.map(([key, label]) => (
              <button
                type="button"
                role="tab"
                id={`tab-${key}`}
                aria-selected={tab === key}
                aria-controls="form-panel"
                tabIndex={tab === key ? 0 : -1}
                onClick={() => setTab(key)}
                onKeyDown={(e) => {
                  if (e.key === 'ArrowRight') move(1);
                  if (e.key === 'ArrowLeft') move(-1);
                }}
              >
                {label}
              </button>
            ))}
          </div>
          <div class="tab-panel" role="tabpanel" id="form-panel" aria-labelledby={`tab-${tab}`}>
            {tab === 'definition' ? <DefinitionEditor key={f.id} form={f} onSaved={setCurrent} /> : null}
            {tab === 'submissions' ? <Submissions form={f} /> : null}
            {tab === 'embed' ? <Embed form={f} /> : null}
          </div>
        </>
      ) : null}
    </>
  );
}
