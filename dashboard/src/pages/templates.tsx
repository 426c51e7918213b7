// Templates: the list with name and editor filters and sorting; the editor with a live
// preview, its versions and publish. MJML templates (when the workspace has the `mjml`
// feature) are compiled by the API as one types, with its diagnostics shown beside the source.
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, ErrorBox, Field, Loading, PageHeader, SearchBox, Select } from '../components/ui';
import { DeleteButton } from '../components/DeleteButton';
import { DIRECTIONS, FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { FormDialog } from '../components/FormDialog';
import { ListTable } from '../components/ListTable';
import { formatDate, useAction, useDebounced, useLoad } from '../lib/hooks';
import { present, useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import { Tabs } from '../components/Tabs';
import { useEditor } from '../components/editor/load';
import type { PageProps } from './index';

type Template = Ok<'/v2/templates/{id}', 'get'>['data'];
type Editor = 'html' | 'text' | 'mjml';
type Diagnostics = Ok<'/v2/mjml/render', 'post'>['diagnostics'];

export function Templates() {
  // This API pages with per_page and filters with filter[…], so the query is its own.
  const list = useListPage({ editor: '', sort: 'created_at', order: 'desc' }, (_, { page, settledSearch, filters }) =>
    ok(
      api.GET('/v2/templates', {
        params: {
          query: present({
            page,
            per_page: 25,
            'filter[name]': settledSearch,
            'filter[editor]': filters.editor,
            sort: filters.sort,
            order: filters.order,
          }) as never,
        },
      }),
    ),
  );
  const workspace = useLoad(() => ok(api.GET('/v2/workspace')), []);
  const mjml = workspace.data?.features.includes('mjml') ?? false;
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [alias, setAlias] = useState('');
  const [editor, setEditor] = useState<Editor>('html');
  const create = useAction();
  return (
    <>
      <PageHeader title="Templates">
        <Button kind="primary" onClick={() => setCreating(true)}>
          New template
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Filter by name" />
        <FilterSelect
          list={list}
          name="editor"
          label="Editor"
          options={[
            ['', 'Any editor'],
            ['html', 'HTML'],
            ['text', 'Text'],
            ['mjml', 'MJML'],
          ]}
        />
        <FilterSelect
          list={list}
          name="sort"
          label="Sort by"
          options={[
            ['created_at', 'Created'],
            ['updated_at', 'Updated'],
            ['name', 'Name'],
          ]}
        />
        <FilterSelect list={list} name="order" label="Order" options={DIRECTIONS} />
      </div>
      <ListTable
        label="Templates"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Alias', 'Editor', 'Published', 'Versions', 'Updated']}
        empty={{
          title: 'No templates.',
          text: 'A template is a reusable subject and body that emails and campaigns are sent from.',
          action: 'Create your first template',
          onAction: () => setCreating(true),
        }}
        hasNext={(data) => data.current_page < data.total_pages}
        row={(row) => (
          <tr>
            <td>
              <Link href={`/templates/${row.id}`}>{row.name}</Link>
            </td>
            <td>
              <code>{row.alias}</code>
            </td>
            <td>{row.editor}</td>
            <td>{row.published_at ? <Badge value="published" /> : <Badge value="draft" />}</td>
            <td>{row.total_versions}</td>
            <td>{formatDate(row.updated_at)}</td>
          </tr>
        )}
      />
      <FormDialog
        title="New template"
        open={creating}
        onClose={() => setCreating(false)}
        action={create}
        submit="Create"
        onSubmit={async () => {
          const body =
            editor === 'mjml'
              ? {
                  name,
                  alias,
                  editor,
                  source:
                    '<mjml><mj-body><mj-section><mj-column><mj-text>Hello {{name}}</mj-text></mj-column></mj-section></mj-body></mjml>',
                }
              : editor === 'text'
                ? { name, alias, editor, text: 'Hello {{name}}' }
                : { name, alias, editor, html: '<p>Hello {{name}}</p>' };
          const created = await create.run(() => ok(api.POST('/v2/templates', { body })));
          if (created) navigate(`/templates/${created.data.id}`);
        }}
      >
        <Field label="Name">
          <input
            name="name"
            required
            value={name}
            onInput={(e) => {
              const value = (e.target as HTMLInputElement).value;
              setName(value);
              setAlias(
                value
                  .toLowerCase()
                  .replace(/[^a-z0-9]+/g, '-')
                  .replace(/^-|-$/g, ''),
              );
            }}
          />
        </Field>
        <Field label="Alias" hint="Sends name the template by its alias">
          <input name="alias" required value={alias} onInput={(e) => setAlias((e.target as HTMLInputElement).value)} />
        </Field>
        <Select
          label="Editor"
          value={editor}
          onChange={(v) => setEditor(v as Editor)}
          options={[['html', 'HTML'], ['text', 'Text'], ...(mjml ? [['mjml', 'MJML'] as [string, string]] : [])]}
        />
      </FormDialog>
    </>
  );
}

function useMjmlPreview(source: string, enabled: boolean) {
  const settled = useDebounced(source, 400);
  const [state, setState] = useState<{ html: string; diagnostics: Diagnostics; error: string | null; loading: boolean }>({
    html: '',
    diagnostics: [],
    error: null,
    loading: false,
  });
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    api.POST('/v2/mjml/render', { body: { source: settled } }).then(({ data, error, response }) => {
      if (!live) return;
      if (data) setState({ html: data.rendered_html ?? data.html ?? '', diagnostics: data.diagnostics, error: null, loading: false });
      else {
        const body = error as { diagnostics?: Diagnostics } | undefined;
        setState((s) => ({
          ...s,
          diagnostics: body?.diagnostics ?? [],
          error: response.ok ? null : ((error as { message?: string })?.message ?? `Error ${response.status}`),
          loading: false,
        }));
      }
    });
    return () => {
      live = false;
    };
  }, [settled, enabled]);
  return state;
}

const isBlockDocument = (source: unknown) =>
  typeof source === 'object' && source !== null && (source as { format?: unknown }).format === 'postlane-blocks';

function Edit({ template, onSaved }: { template: Template; onSaved: () => void }) {
  const editor = template.editor as Editor;
  const [name, setName] = useState(template.name);
  const [subject, setSubject] = useState(template.subject ?? '');
  const [from, setFrom] = useState(template.from ?? '');
  const [html, setHtml] = useState(template.html ?? '');
  const [text, setText] = useState(template.text ?? '');
  const [source, setSource] = useState(typeof template.source === 'string' ? template.source : '');
  const save = useAction();
  const publish = useAction();
  const remove = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const mjml = useMjmlPreview(source, editor === 'mjml');
  const preview = editor === 'mjml' ? mjml.html : html;
  // An HTML template may be written with blocks: the block document is kept as its source.
  const blocks = useEditor();
  const [writeWith, setWriteWith] = useState<'write-html' | 'write-blocks'>(() =>
    editor === 'html' && isBlockDocument(template.source) ? 'write-blocks' : 'write-html',
  );
  const withBlocks = editor === 'html' && writeWith === 'write-blocks';
  const grid = (
    <div class="editor-grid">
      <div>
        <Field label="Name">
          <input name="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Subject">
          <input name="subject" value={subject} onInput={(e) => setSubject((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="From">
          <input name="from" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
        </Field>
        {editor === 'mjml' ? (
          <Field label="MJML source">
            <textarea class="code" rows={16} value={source} onInput={(e) => setSource((e.target as HTMLTextAreaElement).value)} />
          </Field>
        ) : null}
        {editor === 'html' && !withBlocks ? (
          <Field label="HTML">
            <textarea class="code" rows={16} value={html} onInput={(e) => setHtml((e.target as HTMLTextAreaElement).value)} />
          </Field>
        ) : null}
        {editor !== 'mjml' && !withBlocks ? (
          <Field label="Text">
            <textarea
              class="code"
              rows={editor === 'text' ? 16 : 6}
              value={text}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            />
          </Field>
        ) : null}
        {editor === 'mjml' ? (
          <section aria-labelledby="diagnostics-title">
            <h2 id="diagnostics-title">Diagnostics</h2>
            {mjml.loading ? <Loading label="Compiling…" /> : null}
            <ErrorBox error={mjml.error} />
            {mjml.diagnostics.length === 0 && !mjml.loading ? <p>No problems found.</p> : null}
            <ul class="plain-list">
              {mjml.diagnostics.map((d) => (
                <li>
                  <Badge value={d.severity === 'error' ? 'failed' : d.severity === 'warning' ? 'attempted' : 'accepted'} />{' '}
                  {d.line ? `Line ${d.line}: ` : ''}
                  {d.message}
                </li>
              ))}
            </ul>
          </section>
        ) : null}
      </div>
      {withBlocks ? null : (
        <div>
          <h2>Preview</h2>
          {editor === 'text' ? (
            <pre class="raw" tabIndex={0} aria-label="Text preview">
              {text}
            </pre>
          ) : (
            <iframe class="email-frame" title="Preview of the template" sandbox="" srcdoc={preview} />
          )}
        </div>
      )}
    </div>
  );
  return (
    <>
      <div class="actions-row">
        <Button
          kind="primary"
          busy={save.busy}
          onClick={async () => {
            const saved = await save.run(async () => {
              const written = withBlocks ? await blocks.collect() : null;
              const content = written
                ? { html: written.html, text: written.text ?? null, source: written.content }
                : editor === 'mjml'
                  ? { source }
                  : editor === 'text'
                    ? { text }
                    : { html, text: text || null, ...(isBlockDocument(template.source) ? { source: null } : {}) };
              const body = { name, subject: subject || null, from: from || null, ...content };
              return ok(api.POST('/v2/templates/{id}', { params: { path: { id: template.id } }, body: body as never }));
            });
            if (saved) {
              setNotice(saved.message);
              onSaved();
            }
          }}
        >
          Save
        </Button>
        <Button
          busy={publish.busy}
          onClick={async () => {
            const published = await publish.run(() =>
              ok(api.POST('/v2/templates/{id}/publish', { params: { path: { id: template.id } } })),
            );
            if (published) {
              setNotice(published.message);
              onSaved();
            }
          }}
        >
          Publish
        </Button>
        <DeleteButton
          action={remove}
          question={`Delete the template ${template.name}?`}
          remove={() => ok(api.DELETE('/v2/templates/{id}', { params: { path: { id: template.id } } }))}
          done="/templates"
        />
      </div>
      <ErrorBox error={save.error ?? publish.error ?? remove.error} />
      {notice ? (
        <p role="status" class="notice">
          {notice}
        </p>
      ) : null}
      {editor === 'html' ? (
        <Tabs
          label="Write with"
          tabs={[
            ['write-html', 'Source'],
            ['write-blocks', 'Blocks'],
          ]}
          selected={writeWith}
          onSelect={setWriteWith}
          panelId="template-writing"
        >
          {grid}
          {withBlocks ? (
            <>
              <p class="muted">
                The blocks make the template's HTML and text when saved; variables such as {'{{name|"there"}}'} are kept for sends.
              </p>
              {blocks.render({
                initial: {
                  content_type: 'html',
                  content: template.source ?? null,
                  html: template.html ?? null,
                  text: template.text ?? null,
                },
                subject,
                template: true,
              })}
            </>
          ) : null}
        </Tabs>
      ) : (
        grid
      )}
    </>
  );
}

export function TemplateEditor({ params }: PageProps) {
  const template = useLoad(() => ok(api.GET('/v2/templates/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const t = template.data?.data;
  return (
    <>
      <PageHeader title={t ? `Template: ${t.name}` : 'Template'} />
      <DetailStatus back="/templates" backText="All templates" loading={template.loading && !t} error={template.error} />
      {t ? (
        <>
          <p>
            Alias <code>{t.alias}</code> · {t.editor} · {t.published_at ? <>published {formatDate(t.published_at)}</> : 'draft'}
          </p>
          <Edit key={t.id} template={t} onSaved={() => void template.reload()} />
          <section aria-labelledby="versions-title" class="card">
            <h2 id="versions-title">Other versions</h2>
            {t.versions.length === 0 ? <p>This is the only version.</p> : null}
            <ul class="plain-list">
              {t.versions.map((v) => (
                <li>
                  <Link href={`/templates/${v.id}`}>{v.name}</Link> {v.published_at ? <Badge value="published" /> : <Badge value="draft" />}{' '}
                  <span class="muted">updated {formatDate(v.updated_at)}</span>
                </li>
              ))}
            </ul>
          </section>
        </>
      ) : null}
    </>
  );
}
