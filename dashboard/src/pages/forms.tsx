// Forms: the list with search, type and status filters; create. One form: its definition built
// with the builder (blocks added, moved, edited; the type's settings) or edited as JSON, both
// beside a live preview drawn by the embed script's own code and with every reason it could not
// be published yet (the checker the API runs on publish); publish (saving first) and
// unpublish; its submissions; the embed snippet to copy; rotate the token, delete.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, CopyButton, Dialog, ErrorBox, Facts, Field, Loading, PageHeader, SearchBox, Select } from '../components/ui';
import { Tabs } from '../components/Tabs';
import { DeleteButton } from '../components/DeleteButton';
import { FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { jsonError } from '../lib/json';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { present, useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import { definitionProblems, FORM_TYPES, starterDefinition } from '../../../src/resources/forms/definition.ts';
import { Builder, type Draft } from '../components/forms/Builder';
import { FormPreview } from '../components/forms/Preview';
import type { PageProps } from './index';

type Form = Ok<'/v2/forms/{id}/publish', 'post'>;
type FormType = (typeof FORM_TYPES)[number];
const TYPE_NAMES: Record<FormType, string> = {
  popup: 'Popup',
  full_page: 'Full page',
  flyout: 'Flyout',
  embed: 'Embedded',
  banner: 'Banner',
};
const typeOptions = FORM_TYPES.map((t): [string, string] => [t, TYPE_NAMES[t]]);

export function Forms() {
  const list = useListPage({ type: '', status: '', order: 'created_at', direction: 'desc' }, ({ type, status, ...query }) =>
    ok(api.GET('/v2/forms', { params: { query: present({ ...query, 'type.exact': type, 'status.exact': status }) as never } })),
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
        <FilterSelect list={list} name="type" label="Type" options={[['', 'All types'], ...typeOptions]} />
        <FilterSelect
          list={list}
          name="status"
          label="Status"
          options={[
            ['', 'All'],
            ['draft', 'Draft'],
            ['live', 'Live'],
          ]}
        />
        <FilterSelect
          list={list}
          name="order"
          label="Sort by"
          options={[
            ['created_at', 'Added'],
            ['name', 'Name'],
            ['status', 'Status'],
          ]}
        />
      </div>
      <ListTable
        label="Forms"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Type', 'Status', 'Published', 'Added']}
        empty={{
          title: 'No forms.',
          text: 'A form is a sign-up form for your website that adds subscribers to an audience.',
          action: 'Add your first form',
          onAction: () => setAdding(true),
        }}
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

/**
 * The definition as JSON, for what the builder does not draw (experiments …). It edits the same
 * draft as the builder: each valid JSON object typed replaces the draft; invalid JSON is said
 * where, and the draft keeps its last valid value (and cannot be saved meanwhile).
 */
function JsonEditor({
  definition,
  onChange,
  onValid,
}: {
  definition: Draft;
  onChange: (d: Draft) => void;
  onValid: (valid: boolean) => void;
}) {
  const [text, setText] = useState(() => JSON.stringify(definition, null, 2));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => () => onValid(true), []);
  return (
    <>
      <Field label="Definition (JSON)" hint="version, steps, styles, targeting, experiments">
        <textarea
          class="code"
          spellcheck={false}
          aria-describedby="definition-check"
          value={text}
          onInput={(e) => {
            const next = (e.target as HTMLTextAreaElement).value;
            setText(next);
            let value: unknown;
            try {
              value = JSON.parse(next);
            } catch (err) {
              setError(jsonError(next, err as Error));
              onValid(false);
              return;
            }
            if (!value || typeof value !== 'object' || Array.isArray(value)) {
              setError('The definition must be a JSON object');
              onValid(false);
              return;
            }
            setError(null);
            onValid(true);
            onChange(value as Draft);
          }}
        />
      </Field>
      {error ? <p class="error">Not valid JSON: {error}</p> : null}
    </>
  );
}

interface Edit {
  name: string;
  type: FormType;
  definition: Draft;
}

const editOf = (form: Form): Edit => {
  const definition = form.definition as Partial<Draft>;
  // A definition without steps (made over the API) starts the builder from the starter's.
  return {
    name: form.name,
    type: form.type,
    definition: (Array.isArray(definition.steps)
      ? definition
      : { ...starterDefinition(form.type), ...definition, steps: starterDefinition(form.type).steps }) as Draft,
  };
};
const bodyOf = (edit: Edit) => ({ name: edit.name, type: edit.type, definition: { ...edit.definition, type: edit.type } });

/** Builder or JSON beside the live preview, with what keeps the form from being published. */
function DefinitionEditor({
  form,
  edit,
  setEdit,
  mode,
  onSaved,
}: {
  form: Form;
  edit: Edit;
  setEdit: (e: Edit) => void;
  mode: 'builder' | 'json';
  onSaved: (f: Form) => void;
}) {
  const [jsonValid, setJsonValid] = useState(true);
  const problems = useMemo(() => definitionProblems({ ...edit.definition, type: edit.type }), [edit]);
  const save = useAction();
  const [saved, setSaved] = useState(false);
  const setDefinition = (definition: Draft) => {
    setSaved(false);
    setEdit({ ...edit, definition });
  };
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!jsonValid) return;
        setSaved(false);
        const updated = await save.run(
          () => ok(api.POST('/v2/forms/{id}', { params: { path: { id: form.id } }, body: bodyOf(edit) })) as Promise<Form>,
        );
        if (updated) {
          setSaved(true);
          onSaved(updated);
        }
      }}
    >
      <div class="inline-form">
        <Field label="Name">
          <input name="name" required value={edit.name} onInput={(e) => setEdit({ ...edit, name: (e.target as HTMLInputElement).value })} />
        </Field>
        <Select label="Form type" value={edit.type} onChange={(v) => setEdit({ ...edit, type: v as FormType })} options={typeOptions} />
      </div>
      <div class="editor-grid builder-grid" style="margin-top: 0.8rem">
        <div>
          {mode === 'builder' ? (
            <Builder type={edit.type} draft={edit.definition} onChange={setDefinition} />
          ) : (
            <JsonEditor definition={edit.definition} onChange={setDefinition} onValid={setJsonValid} />
          )}
        </div>
        <div class="preview-column">
          <FormPreview type={edit.type} definition={edit.definition} />
        </div>
      </div>
      <div id="definition-check" aria-live="polite">
        {problems.length > 0 ? (
          <div class="warning">
            <p>Can be saved as a draft, but not published yet:</p>
            <ul class="problems">
              {problems.map((p) => (
                <li>{p}</li>
              ))}
            </ul>
          </div>
        ) : (
          <p class="ok-text">The definition is ready to publish.</p>
        )}
      </div>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy} disabled={!jsonValid}>
        Save
      </Button>
      {saved ? <span role="status"> Saved.</span> : null}
    </form>
  );
}

function Submissions({ form }: { form: Form }) {
  const list = useListPage(
    {},
    (query) => ok(api.GET('/v2/forms/{id}/submissions', { params: { path: { id: form.id }, query: query as never } })),
    { deps: [form.id] },
  );
  const submissions = list.loaded;
  return (
    <>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search submissions" />
        <Button onClick={() => void submissions.reload()}>Refresh</Button>
      </div>
      {submissions.data ? <p class="muted">{submissions.data.total_records.toLocaleString()} submissions</p> : null}
      <ListTable
        label="Submissions"
        {...list.table}
        items={(data) => data.data}
        columns={['Submitted', 'Values', 'Page']}
        empty="No submissions yet."
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
          <p>
            Place this once on every page of your site, before &lt;/body&gt;. It shows every live popup, flyout, full-page and banner form.
          </p>
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
  ['builder', 'Builder'],
  ['json', 'JSON'],
  ['submissions', 'Submissions'],
  ['embed', 'Embed'],
] as const;
type Tab = (typeof TABS)[number][0];

export function FormEditor({ params }: PageProps) {
  const loaded = useLoad(() => ok(api.GET('/v2/forms/{id}', { params: { path: { id: params.id } } })) as Promise<Form>, [params.id]);
  const [current, setCurrent] = useState<Form | null>(null);
  const [tab, setTab] = useState<Tab>('builder');
  const action = useAction();
  const f = current ?? loaded.data;
  // What the builder and the JSON tab edit: kept here, so switching tabs loses nothing and no
  // answer from the API (a publish, a token rotated) replaces what is being typed.
  const [editing, setEdit] = useState<Edit | null>(null);
  const edit = editing ?? (f ? editOf(f) : null);
  const dirty = Boolean(f && edit && JSON.stringify(bodyOf(edit)) !== JSON.stringify(bodyOf(editOf(f))));
  const path = f ? { params: { path: { id: f.id } } } : null;
  const act = async (call: () => Promise<unknown>) => {
    const next = (await action.run(call)) as Form | undefined;
    if (next) setCurrent(next);
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
              <Button
                kind="primary"
                busy={action.busy}
                onClick={() =>
                  act(async () => {
                    // Unsaved changes are saved first: what is published is what is shown.
                    if (dirty && edit) await ok(api.POST('/v2/forms/{id}', { ...path, body: bodyOf(edit) }));
                    return ok(api.POST('/v2/forms/{id}/publish', path));
                  })
                }
              >
                {dirty ? 'Save and publish' : 'Publish'}
              </Button>
            )}
            <Button
              busy={action.busy}
              onClick={() => {
                if (confirm('Give the form a new public token? The old one stops working at once.'))
                  void act(() => ok(api.POST('/v2/forms/{id}/rotate-token', path)));
              }}
            >
              Rotate token
            </Button>
            <DeleteButton
              action={action}
              question={`Delete ${f.name} and its submissions?`}
              remove={() => ok(api.DELETE('/v2/forms/{id}', path))}
              done="/forms"
            />
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/forms" backText="All forms" loading={loaded.loading && !f} error={loaded.error ?? action.error} />
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
          <Tabs label="Form" tabs={TABS} selected={tab} onSelect={setTab} panelId="form-panel" style="margin-top: 1rem">
            {(tab === 'builder' || tab === 'json') && edit ? (
              <DefinitionEditor form={f} edit={edit} setEdit={setEdit} mode={tab} onSaved={setCurrent} />
            ) : null}
            {tab === 'submissions' ? <Submissions form={f} /> : null}
            {tab === 'embed' ? <Embed form={f} /> : null}
          </Tabs>
        </>
      ) : null}
    </>
  );
}
