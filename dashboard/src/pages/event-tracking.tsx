// Event tracking: the workspace's event definitions (w: events and their typed properties) and
// the public tracking keys of the tracking script. Only admins make or delete tracking keys.
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { Button, CopyButton, ErrorBox, Field, PageHeader } from '../components/ui';
import { DeleteButton } from '../components/DeleteButton';
import { FormDialog } from '../components/FormDialog';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction } from '../lib/hooks';
import { useListPage } from '../lib/list';
import { useOptionalSession } from '../session';

const TYPES = ['string', 'number', 'boolean', 'date'] as const;

/** "plan:string!, seats:number" → property definitions (`!` marks a required one). */
function parseProperties(text: string) {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [name, rawType = 'string'] = part.split(':').map((s) => s.trim());
      const required = rawType.endsWith('!');
      return { name, type: rawType.replace(/!$/, ''), required };
    });
}

function Definitions() {
  const list = useListPage({}, (query) => ok(api.GET('/v2/workspace/events', { params: { query: query as never } })));
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [properties, setProperties] = useState('');
  const create = useAction();
  const action = useAction();
  return (
    <section aria-labelledby="definitions-title">
      <h2 id="definitions-title">Workspace events</h2>
      <p class="muted">
        Sent as w:&lt;name&gt;; events that don't match their definition are refused. Custom events (c:&lt;name&gt;) need no definition.
      </p>
      <Button kind="primary" onClick={() => setCreating(true)}>
        Define workspace event
      </Button>
      <ErrorBox error={action.error} />
      <ListTable
        label="Workspace events"
        {...list.table}
        items={(data) => data.data}
        columns={['Type', 'Properties', 'Created', 'Actions']}
        empty="No workspace events defined."
        hasNext={nextPageUrl}
        row={(d) => (
          <tr>
            <td>
              <code>{d.type}</code> {d.title ?? ''}
            </td>
            <td>{d.properties.map((p) => `${p.name}: ${p.type}${p.required ? ' (required)' : ''}`).join(', ') || '—'}</td>
            <td>{formatDate(d.created_at)}</td>
            <td class="row-actions">
              <DeleteButton
                action={action}
                what={d.type}
                question={`Delete ${d.type}? Events of it are refused afterwards.`}
                remove={() => ok(api.DELETE('/v2/workspace/events/{id}', { params: { path: { id: d.id } } }))}
                done={() => list.loaded.reload()}
              />
            </td>
          </tr>
        )}
      />
      <FormDialog
        title="Define a workspace event"
        open={creating}
        onClose={() => setCreating(false)}
        action={create}
        submit="Create"
        onSubmit={async () => {
          const made = await create.run(() =>
            ok(api.POST('/v2/workspace/events', { body: { name, properties: parseProperties(properties) } })),
          );
          if (made) {
            setCreating(false);
            setName('');
            setProperties('');
            await list.loaded.reload();
          }
        }}
      >
        <Field label="Name">
          <input
            name="name"
            required
            placeholder="customer.type"
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Properties">
          <input
            name="properties"
            placeholder={`plan:string!, seats:number (types: ${TYPES.join(', ')}; ! required)`}
            value={properties}
            onInput={(e) => setProperties((e.target as HTMLInputElement).value)}
          />
        </Field>
      </FormDialog>
    </section>
  );
}

function TrackingKeys() {
  const isAdmin = useOptionalSession()?.session.workspace?.role === 'admin';
  const list = useListPage({}, (query) => ok(api.GET('/v2/tracking-keys', { params: { query: query as never } })));
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [origins, setOrigins] = useState('');
  const create = useAction();
  const action = useAction();
  return (
    <section aria-labelledby="tracking-title">
      <h2 id="tracking-title">Tracking keys</h2>
      <p class="muted">Public keys for the tracking script on your site, limited to the sites you list.</p>
      {isAdmin ? (
        <Button kind="primary" onClick={() => setCreating(true)}>
          Create tracking key
        </Button>
      ) : (
        <p>Only an admin of this workspace can create or delete tracking keys.</p>
      )}
      <ErrorBox error={action.error} />
      <ListTable
        label="Tracking keys"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Allowed origins', 'Script', 'Last used', ...(isAdmin ? ['Actions'] : [])]}
        empty="No tracking keys."
        hasNext={nextPageUrl}
        row={(k) => (
          <tr>
            <td>{k.name}</td>
            <td>{k.allowed_origins.join(', ') || 'Any site'}</td>
            <td>
              <code class="small-text">{k.script_url}</code>{' '}
              <CopyButton text={`<script async src="${k.script_url}"></script>`} what="the script tag" />
            </td>
            <td>{formatDate(k.last_used_at)}</td>
            {isAdmin ? (
              <td class="row-actions">
                <DeleteButton
                  action={action}
                  what={k.name}
                  question={`Delete ${k.name}? Sites using it stop sending events.`}
                  remove={() => ok(api.DELETE('/v2/tracking-keys/{id}', { params: { path: { id: k.id } } }))}
                  done={() => list.loaded.reload()}
                />
              </td>
            ) : null}
          </tr>
        )}
      />
      <FormDialog
        title="Create a tracking key"
        open={creating}
        onClose={() => setCreating(false)}
        action={create}
        submit="Create"
        onSubmit={async () => {
          const allowed = origins
            .split(/\s+/)
            .map((o) => o.trim())
            .filter(Boolean);
          const made = await create.run(() =>
            ok(api.POST('/v2/tracking-keys', { body: { name: name || undefined, allowed_origins: allowed } })),
          );
          if (made) {
            setCreating(false);
            setName('');
            setOrigins('');
            await list.loaded.reload();
          }
        }}
      >
        <Field label="Name">
          <input name="name" placeholder="Online shop" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Allowed origins">
          <textarea
            name="allowed_origins"
            placeholder={'https://shop.example.com\n*.example.com'}
            value={origins}
            onInput={(e) => setOrigins((e.target as HTMLTextAreaElement).value)}
          />
        </Field>
      </FormDialog>
    </section>
  );
}

export function EventTracking() {
  return (
    <>
      <PageHeader title="Event tracking" />
      <Definitions />
      <TrackingKeys />
    </>
  );
}
