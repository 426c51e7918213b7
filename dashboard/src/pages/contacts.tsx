// Contacts: the list with search, audience and subscription filters and sort; create and edit;
// one contact's memberships; import a CSV or JSON file (with the upload's progress and the
// import's summary); export the list as it is filtered (CSV).
import { useState } from 'preact/hooks';
import { api, ok, upload, errorText, type Ok } from '../api/client';
import { Badge, Button, Dialog, ErrorBox, Facts, Field, PageHeader, Progress, SearchBox, Select, TableScroll } from '../components/ui';
import { DeleteButton } from '../components/DeleteButton';
import { DIRECTIONS, FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { present, useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';

type Contact = Ok<'/v2/contacts/{id}', 'get'>;
type ImportSummary = Ok<'/v2/contacts/import', 'post'>;
type AudienceRef = { id: string; name: string };

/** The workspace's audiences (the first 100), for filters and membership choices. */
function useAudiences() {
  return useLoad(() => ok(api.GET('/v2/audiences', { params: { query: { limit: 100, order: 'name', direction: 'asc' } as never } })), []);
}

const fullName = (c: { first_name: string | null; last_name: string | null }) =>
  [c.first_name, c.last_name].filter(Boolean).join(' ') || '—';

function ContactForm({
  initial,
  audiences,
  onSaved,
}: {
  initial: Contact | null;
  audiences: AudienceRef[];
  onSaved: (contact: { id: string }) => void;
}) {
  const [email, setEmail] = useState(initial?.email ?? '');
  const [firstName, setFirstName] = useState(initial?.first_name ?? '');
  const [lastName, setLastName] = useState(initial?.last_name ?? '');
  const [fields, setFields] = useState(JSON.stringify(initial?.custom_fields ?? {}, null, 2));
  const [memberOf, setMemberOf] = useState<string[]>(initial?.audiences.map((a) => a.id) ?? []);
  const [unsubscribed, setUnsubscribed] = useState(initial?.unsubscribed ?? false);
  const save = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        let customFields: Record<string, unknown>;
        try {
          customFields = JSON.parse(fields || '{}');
          if (!customFields || typeof customFields !== 'object' || Array.isArray(customFields)) throw new Error('an object is needed');
        } catch (error) {
          save.setError(`Custom fields: not a JSON object (${(error as Error).message})`);
          return;
        }
        const body = {
          email,
          first_name: firstName || null,
          last_name: lastName || null,
          custom_fields: customFields,
          audiences: memberOf,
          unsubscribed,
        };
        const saved = await save.run<{ id: string }>(() =>
          initial
            ? ok(api.POST('/v2/contacts/{id}', { params: { path: { id: initial.id } }, body }))
            : ok(api.POST('/v2/contacts', { body })),
        );
        if (saved) onSaved(saved);
      }}
    >
      <Field label="Email address">
        <input type="email" name="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="First name">
        <input name="first_name" value={firstName} onInput={(e) => setFirstName((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Last name">
        <input name="last_name" value={lastName} onInput={(e) => setLastName((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Custom fields" hint='A JSON object, such as {"company": "Acme"}'>
        <textarea
          class="code"
          rows={4}
          style="min-height: 5rem"
          value={fields}
          onInput={(e) => setFields((e.target as HTMLTextAreaElement).value)}
        />
      </Field>
      <fieldset class="group">
        <legend>Audiences</legend>
        {audiences.length === 0 ? <span class="muted">No audiences yet.</span> : null}
        {audiences.map((a) => (
          <label class="check">
            <input
              type="checkbox"
              checked={memberOf.includes(a.id)}
              onChange={(e) =>
                setMemberOf((e.target as HTMLInputElement).checked ? [...memberOf, a.id] : memberOf.filter((id) => id !== a.id))
              }
            />{' '}
            {a.name}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={unsubscribed} onChange={(e) => setUnsubscribed((e.target as HTMLInputElement).checked)} />{' '}
        Unsubscribed from all campaigns
      </label>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        {initial ? 'Save contact' : 'Create contact'}
      </Button>
    </form>
  );
}

function ImportSummaryView({ summary }: { summary: ImportSummary }) {
  return (
    <section aria-labelledby="import-result-title">
      <h3 id="import-result-title">{summary.status === 'completed' ? 'Import completed' : 'Import stopped'}</h3>
      {summary.error ? <ErrorBox error={summary.error} /> : null}
      <Facts
        items={[
          ['Rows read', summary.rows.toLocaleString()],
          ['Created', summary.created.toLocaleString()],
          ['Updated', summary.updated.toLocaleString()],
          ['Unchanged', summary.unchanged.toLocaleString()],
          ['Added to the audience', summary.subscribed.toLocaleString()],
          ['Kept unsubscribed', summary.kept_unsubscribed.toLocaleString()],
          ['Skipped', summary.skipped.toLocaleString()],
        ]}
      />
      {summary.errors.length > 0 ? (
        <TableScroll label="Skipped rows">
          <thead>
            <tr>
              <th scope="col">Row</th>
              <th scope="col">Email</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {summary.errors.slice(0, 50).map((p) => (
              <tr>
                <td>{p.row}</td>
                <td>{p.email ?? '—'}</td>
                <td>{p.reason}</td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      ) : null}
    </section>
  );
}

function ImportForm({ audiences, onDone }: { audiences: AudienceRef[]; onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [audience, setAudience] = useState('');
  const [sent, setSent] = useState<number | null>(null);
  const [summary, setSummary] = useState<ImportSummary | null>(null);
  const run = useAction();
  const uploading = sent !== null && sent < 1;
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!file) return;
        setSummary(null);
        setSent(0);
        const form = new FormData();
        if (audience) form.append('audience_id', audience);
        form.append('file', file, file.name);
        await run.run(async () => {
          try {
            const answer = await upload('/v2/contacts/import', form, setSent);
            const body = answer.body as ImportSummary;
            if (body && typeof body === 'object' && (body as { object?: string }).object === 'contact_import') {
              setSummary(body);
              onDone();
            } else throw new Error(errorText(answer.body, answer.status));
          } finally {
            setSent(null);
          }
        });
      }}
    >
      <Field label="File" hint="CSV with a header row and an email column, or a JSON array of objects">
        <input
          type="file"
          name="file"
          accept=".csv,.json,text/csv,application/json"
          required
          onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)}
        />
      </Field>
      <Select
        label="Add every row to"
        value={audience}
        onChange={setAudience}
        options={[['', 'No audience'], ...audiences.map((a): [string, string] => [a.id, a.name])]}
      />
      {sent !== null ? (
        <Progress
          label="Import progress"
          value={uploading ? sent : undefined}
          text={uploading ? `Uploading: ${Math.round(sent * 100)} %` : 'Uploaded; importing the rows…'}
        />
      ) : null}
      <ErrorBox error={run.error} />
      {summary ? <ImportSummaryView summary={summary} /> : null}
      <p>
        <Button type="submit" kind="primary" busy={run.busy} disabled={!file}>
          Import
        </Button>
      </p>
    </form>
  );
}

export function Contacts() {
  const list = useListPage({ audience_id: '', unsubscribed: '', sort: 'created_at', order: 'desc' }, (query) =>
    ok(api.GET('/v2/contacts', { params: { query: query as never } })),
  );
  const contacts = list.loaded;
  const audiences = useAudiences();
  // The export takes the list's search and filters, not its page.
  const query = present({ search: list.settledSearch, ...list.filters });
  const [dialog, setDialog] = useState<'new' | 'import' | null>(null);
  const audienceRefs = audiences.data?.data ?? [];
  const exportUrl = `/v2/contacts/export?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`;
  return (
    <>
      <PageHeader title="Contacts">
        <Button onClick={() => setDialog('import')}>Import</Button>
        <a class="button" href={exportUrl} download="contacts.csv">
          Export CSV
        </a>
        <Button kind="primary" onClick={() => setDialog('new')}>
          New contact
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search email or name" />
        <FilterSelect
          list={list}
          name="audience_id"
          label="Audience"
          options={[['', 'All audiences'], ...audienceRefs.map((a): [string, string] => [a.id, a.name])]}
        />
        <FilterSelect
          list={list}
          name="unsubscribed"
          label="Subscription"
          options={[
            ['', 'All'],
            ['false', 'Subscribed'],
            ['true', 'Unsubscribed'],
          ]}
        />
        <FilterSelect
          list={list}
          name="sort"
          label="Sort by"
          options={[
            ['created_at', 'Added'],
            ['email', 'Email'],
            ['name', 'Name'],
            ['updated_at', 'Changed'],
          ]}
        />
        <FilterSelect list={list} name="order" label="Order" options={DIRECTIONS} />
      </div>
      {contacts.data ? <p class="muted">{contacts.data.total_records.toLocaleString()} contacts</p> : null}
      <ListTable
        label="Contacts"
        {...list.table}
        items={(data) => data.data}
        columns={['Email', 'Name', 'Audiences', 'Campaigns', 'Added']}
        empty={{
          title: 'No contacts.',
          text: 'Contacts are the people you send campaigns to, with their fields and subscriptions.',
          action: 'Add your first contact',
          onAction: () => setDialog('new'),
        }}
        hasNext={nextPageUrl}
        row={(c) => (
          <tr>
            <td>
              <Link href={`/contacts/${c.id}`}>{c.email}</Link>
            </td>
            <td>{fullName(c)}</td>
            <td>{c.audiences.map((a) => a.name).join(', ') || '—'}</td>
            <td>
              <Badge value={c.unsubscribed ? 'unsubscribed' : 'subscribed'} />
            </td>
            <td>{formatDate(c.created_at)}</td>
          </tr>
        )}
      />
      <Dialog title={dialog === 'import' ? 'Import contacts' : 'New contact'} open={dialog !== null} onClose={() => setDialog(null)}>
        {dialog === 'new' ? <ContactForm initial={null} audiences={audienceRefs} onSaved={(c) => navigate(`/contacts/${c.id}`)} /> : null}
        {dialog === 'import' ? <ImportForm audiences={audienceRefs} onDone={() => void contacts.reload()} /> : null}
      </Dialog>
    </>
  );
}

export function ContactDetail({ params }: PageProps) {
  const contact = useLoad(() => ok(api.GET('/v2/contacts/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const audiences = useAudiences();
  const [editing, setEditing] = useState(false);
  const remove = useAction();
  const c = contact.data;
  return (
    <>
      <PageHeader title={c ? c.email : 'Contact'}>
        {c ? (
          <>
            <Button kind="primary" onClick={() => setEditing(true)}>
              Edit
            </Button>
            <DeleteButton
              action={remove}
              question={`Delete ${c.email}?`}
              remove={() => ok(api.DELETE('/v2/contacts/{id}', { params: { path: { id: c.id } } }))}
              done="/contacts"
            />
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/contacts" backText="All contacts" loading={contact.loading} error={contact.error ?? remove.error} />
      {c ? (
        <>
          <section class="card" aria-labelledby="contact-title">
            <h2 id="contact-title">Contact</h2>
            <Facts
              items={[
                ['Name', fullName(c)],
                ['Campaigns', <Badge value={c.unsubscribed ? 'unsubscribed' : 'subscribed'} />],
                ['Added', formatDate(c.created_at)],
                ['Changed', formatDate(c.updated_at)],
                ...Object.entries(c.custom_fields).map(([key, value]): [string, string] => [
                  key,
                  typeof value === 'string' ? value : JSON.stringify(value),
                ]),
              ]}
            />
          </section>
          <section aria-labelledby="memberships-title">
            <h2 id="memberships-title">Audiences</h2>
            <TableScroll label="Memberships">
              <thead>
                <tr>
                  <th scope="col">Audience</th>
                  <th scope="col">Status</th>
                  <th scope="col">Subscribed</th>
                  <th scope="col">Unsubscribed</th>
                </tr>
              </thead>
              <tbody>
                {c.audiences.map((a) => (
                  <tr>
                    <td>
                      <Link href={`/audiences/${a.id}`}>{a.name}</Link>
                    </td>
                    <td>
                      <Badge value={a.subscriber.subscribed ? 'subscribed' : 'unsubscribed'} />
                    </td>
                    <td>{formatDate(a.subscriber.subscribed_at)}</td>
                    <td>{formatDate(a.subscriber.unsubscribed_at)}</td>
                  </tr>
                ))}
                {c.audiences.length === 0 ? (
                  <tr>
                    <td colSpan={4}>In no audience.</td>
                  </tr>
                ) : null}
              </tbody>
            </TableScroll>
          </section>
          <ContactActivity id={c.id} />
          <Dialog title="Edit the contact" open={editing} onClose={() => setEditing(false)}>
            {editing ? (
              <ContactForm
                initial={c}
                audiences={audiences.data?.data ?? []}
                onSaved={() => {
                  setEditing(false);
                  void contact.reload();
                }}
              />
            ) : null}
          </Dialog>
        </>
      ) : null}
    </>
  );
}

/** The contact's activity: its workspace and custom events and the tracking script's identifications. */
function ContactActivity({ id }: { id: string }) {
  const activity = useLoad(
    () => ok(api.GET('/v2/contacts/{id}/events', { params: { path: { id }, query: { limit: 25 } as never } })),
    [id],
  );
  const items = activity.data?.data ?? [];
  return (
    <section>
      <h2 id="activity-title">Activity</h2>
      <ErrorBox error={activity.error} />
      <TableScroll label="Activity">
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Properties</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {items.map((event) => {
            const object = event.data.object as Record<string, unknown>;
            return (
              <tr>
                <td>
                  <code>{event.type}</code>
                </td>
                <td>
                  <code class="small-text">{object.properties ? JSON.stringify(object.properties) : String(object.email ?? '')}</code>
                </td>
                <td>{formatDate(String(object.occurred_at ?? event.created_at))}</td>
              </tr>
            );
          })}
          {items.length === 0 && !activity.loading ? (
            <tr>
              <td colSpan={3}>No activity yet.</td>
            </tr>
          ) : null}
        </tbody>
      </TableScroll>
    </section>
  );
}
