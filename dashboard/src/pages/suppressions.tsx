// Suppressions: the list with search, type and sort; add, edit and remove.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, Dialog, ErrorBox, Field, PageHeader, SearchBox, Select } from '../components/ui';
import { DIRECTIONS, FilterSelect } from '../components/FilterSelect';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction } from '../lib/hooks';
import { useListPage } from '../lib/list';

type Suppression = Ok<'/v2/suppressions/{id}', 'get'>;
type SuppressionType = Suppression['type'];
const TYPES: SuppressionType[] = ['recipient', 'bounce', 'complaint', 'unsubscribe'];

function SuppressionForm({ initial, onSaved }: { initial: Suppression | null; onSaved: () => void }) {
  const [email, setEmail] = useState(initial?.email ?? '');
  const [type, setType] = useState<SuppressionType>(initial?.type ?? 'recipient');
  const [reason, setReason] = useState(initial?.reason ?? '');
  const [keepUntil, setKeepUntil] = useState(initial?.keep_until ?? '');
  const save = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const body = { email, type, reason: reason || null, keep_until: keepUntil || null };
        const saved = await save.run(() =>
          initial
            ? ok(api.POST('/v2/suppressions/{id}', { params: { path: { id: initial.id } }, body }))
            : ok(api.POST('/v2/suppressions', { body })),
        );
        if (saved) onSaved();
      }}
    >
      <Field label="Email address">
        <input type="email" name="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
      </Field>
      <Select
        label="Type"
        value={type}
        onChange={(v) => setType(v as SuppressionType)}
        options={TYPES.map((t): [string, string] => [t, t])}
      />
      <Field label="Reason">
        <input name="reason" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Keep until" hint="Empty: permanent. ISO 8601 or English such as “in 30 days”">
        <input name="keep_until" value={keepUntil} onInput={(e) => setKeepUntil((e.target as HTMLInputElement).value)} />
      </Field>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        {initial ? 'Save' : 'Add suppression'}
      </Button>
    </form>
  );
}

export function Suppressions() {
  const list = useListPage({ sort: 'created_at', order: 'desc' }, (query) =>
    ok(api.GET('/v2/suppressions', { params: { query: query as never } })),
  );
  const items = list.loaded;
  const [editing, setEditing] = useState<Suppression | 'new' | null>(null);
  const remove = useAction();
  const saved = async () => {
    setEditing(null);
    await items.reload();
  };
  return (
    <>
      <PageHeader title="Suppressions">
        <Button kind="primary" onClick={() => setEditing('new')}>
          Add suppression
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search address or reason" />
        <FilterSelect
          list={list}
          name="sort"
          label="Sort by"
          options={[
            ['created_at', 'Added'],
            ['email', 'Email'],
            ['type', 'Type'],
            ['reason', 'Reason'],
          ]}
        />
        <FilterSelect list={list} name="order" label="Order" options={DIRECTIONS} />
      </div>
      <ErrorBox error={remove.error} />
      <ListTable
        label="Suppressions"
        {...list.table}
        items={(data) => data.data}
        columns={['Email', 'Type', 'Reason', 'Until', 'Added', 'Actions']}
        empty={{
          title: 'No suppressions.',
          text: 'Suppressed addresses are never sent to: hard bounces, complaints and unsubscribes land here, and you can add your own.',
          action: 'Suppress your first address',
          onAction: () => setEditing('new'),
        }}
        hasNext={nextPageUrl}
        row={(s) => (
          <tr>
            <td>{s.email}</td>
            <td>
              <Badge value={s.type} />
            </td>
            <td>{s.reason ?? '—'}</td>
            <td>{s.keep_until ? formatDate(s.keep_until) : 'Permanent'}</td>
            <td>{formatDate(s.created_at)}</td>
            <td class="row-actions">
              <Button class="small" aria-label={`Edit ${s.email}`} onClick={() => setEditing(s)}>
                Edit
              </Button>
              <Button
                class="small"
                kind="danger"
                aria-label={`Remove ${s.email}`}
                busy={remove.busy}
                onClick={async () => {
                  if (await remove.run(() => ok(api.DELETE('/v2/suppressions/{id}', { params: { path: { id: s.id } } }))))
                    await items.reload();
                }}
              >
                Remove
              </Button>
            </td>
          </tr>
        )}
      />
      <Dialog
        title={editing === 'new' ? 'Add a suppression' : 'Edit the suppression'}
        open={editing !== null}
        onClose={() => setEditing(null)}
      >
        {editing ? <SuppressionForm initial={editing === 'new' ? null : editing} onSaved={saved} /> : null}
      </Dialog>
    </>
  );
}
