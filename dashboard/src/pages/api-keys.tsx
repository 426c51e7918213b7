// API keys: create (the secret shown once, with a copy button), rename, regenerate, delete.
// Members see the keys; only admins manage them (the API refuses members with 403).
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Button, CopyButton, Dialog, ErrorBox, Field, PageHeader, SearchBox, Select } from '../components/ui';
import { DeleteButton } from '../components/DeleteButton';
import { FormDialog } from '../components/FormDialog';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction } from '../lib/hooks';
import { useListPage } from '../lib/list';
import { AuthorizedApps } from '../components/AuthorizedApps';
import { KeySnippets } from '../components/Snippets';
import { useOptionalSession } from '../session';

type Key = Ok<'/v2/api-keys/{id}', 'get'>;

function SecretOnce({ secret, onDone }: { secret: { name: string; key: string } | null; onDone: () => void }) {
  const to = useOptionalSession()?.session.user.email ?? 'you@example.com';
  return (
    <Dialog title="Your new API key" open={secret !== null} onClose={onDone}>
      {secret ? (
        <>
          <p>
            The secret of <strong>{secret.name}</strong> is shown only now. Copy it and keep it safe.
          </p>
          <p class="secret">
            <code data-testid="new-secret">{secret.key}</code> <CopyButton text={secret.key} what={`the API key`} />
          </p>
          <KeySnippets apiKey={secret.key} to={to} />
          <Button kind="primary" onClick={onDone}>
            Done
          </Button>
        </>
      ) : null}
    </Dialog>
  );
}

export function ApiKeys() {
  const isAdmin = useOptionalSession()?.session.workspace?.role === 'admin';
  const list = useListPage({}, (query) => ok(api.GET('/v2/api-keys', { params: { query } })));
  const keys = list.loaded;
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'full' | 'sending' | 'events'>('full');
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [renaming, setRenaming] = useState<Key | null>(null);
  const [newName, setNewName] = useState('');
  const create = useAction();
  const rename = useAction();
  const action = useAction();

  return (
    <>
      <PageHeader title="API keys">
        {isAdmin ? (
          <Button kind="primary" onClick={() => setCreating(true)}>
            Create API key
          </Button>
        ) : null}
      </PageHeader>
      {isAdmin ? null : <p>Only an admin of this workspace can create, change or delete API keys.</p>}
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search keys" />
      </div>
      <ErrorBox error={action.error} />
      <ListTable
        label="API keys"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Permission', 'Last used', 'Created', ...(isAdmin ? ['Actions'] : [])]}
        empty={{
          title: 'No API keys.',
          text: 'An API key lets an application send mail and use the API; its secret is shown once, when it is made.',
          ...(isAdmin ? { action: 'Make your first API key', onAction: () => setCreating(true) } : {}),
        }}
        hasNext={nextPageUrl}
        row={(k) => (
          <tr>
            <td>{k.name}</td>
            <td>{k.scope === 'full' ? 'Full access' : k.scope === 'events' ? 'Events only' : 'Sending only'}</td>
            <td>{formatDate(k.last_used_at)}</td>
            <td>{formatDate(k.created_at)}</td>
            {isAdmin ? (
              <td class="row-actions">
                <Button
                  class="small"
                  aria-label={`Rename ${k.name}`}
                  onClick={() => {
                    setRenaming(k);
                    setNewName(k.name);
                  }}
                >
                  Rename
                </Button>
                <Button
                  class="small"
                  aria-label={`Regenerate ${k.name}`}
                  busy={action.busy}
                  onClick={async () => {
                    if (!confirm(`Regenerate ${k.name}? Its current secret stops working at once.`)) return;
                    const renewed = await action.run(() =>
                      ok(api.POST('/v2/api-keys/{id}/regenerate', { params: { path: { id: k.id } } })),
                    );
                    if (renewed) {
                      setSecret({ name: renewed.name, key: renewed.key });
                      await keys.reload();
                    }
                  }}
                >
                  Regenerate
                </Button>
                <DeleteButton
                  action={action}
                  what={k.name}
                  question={`Delete ${k.name}?`}
                  remove={() => ok(api.DELETE('/v2/api-keys/{id}', { params: { path: { id: k.id } } }))}
                  done={() => keys.reload()}
                />
              </td>
            ) : null}
          </tr>
        )}
      />

      <FormDialog
        title="Create an API key"
        open={creating}
        onClose={() => setCreating(false)}
        action={create}
        submit="Create"
        onSubmit={async () => {
          const created = await create.run(() => ok(api.POST('/v2/api-keys', { body: { name, scope } })));
          if (created) {
            setCreating(false);
            setName('');
            setSecret({ name: created.name, key: created.key });
            await keys.reload();
          }
        }}
      >
        <Field label="Name">
          <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Select
          label="Permission"
          value={scope}
          onChange={(v) => setScope(v as 'full' | 'sending' | 'events')}
          options={[
            ['full', 'Full access'],
            ['sending', 'Sending only'],
            ['events', 'Events only'],
          ]}
        />
      </FormDialog>

      <FormDialog
        title="Rename the API key"
        open={renaming !== null}
        onClose={() => setRenaming(null)}
        action={rename}
        submit="Rename"
        onSubmit={async () => {
          const renamed = await rename.run(() =>
            ok(api.POST('/v2/api-keys/{id}', { params: { path: { id: renaming!.id } }, body: { name: newName } })),
          );
          if (renamed) {
            setRenaming(null);
            await keys.reload();
          }
        }}
      >
        <Field label="New name">
          <input name="new-name" required value={newName} onInput={(e) => setNewName((e.target as HTMLInputElement).value)} />
        </Field>
      </FormDialog>

      <SecretOnce secret={secret} onDone={() => setSecret(null)} />
      <AuthorizedApps />
    </>
  );
}
