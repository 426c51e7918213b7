// Audiences: the list with search and sort, create; one audience's subscribers (search, filter,
// add one or many, unsubscribe/resubscribe, remove) against the plan's limit, and its settings
// (public page, double opt-in, confirmation email, unengaged subscribers), rename and delete.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, Dialog, ErrorBox, Facts, Field, PageHeader, SearchBox, Select } from '../components/ui';
import { Tabs } from '../components/Tabs';
import { DeleteButton } from '../components/DeleteButton';
import { DIRECTIONS, FilterSelect } from '../components/FilterSelect';
import { DetailStatus } from '../components/DetailStatus';
import { FormDialog } from '../components/FormDialog';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';

type Audience = Ok<'/v2/audiences/{id}', 'get'>;
type SubscriberList = Ok<'/v2/audiences/{id}/subscribers', 'get'>;

const input = (set: (value: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
const checked = (set: (value: boolean) => void) => (e: Event) => set((e.target as HTMLInputElement).checked);

export function Audiences() {
  const list = useListPage({ order: 'created_at', direction: 'desc' }, (query) =>
    ok(api.GET('/v2/audiences', { params: { query: query as never } })),
  );
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState('');
  const add = useAction();
  return (
    <>
      <PageHeader title="Audiences">
        <Button kind="primary" onClick={() => setAdding(true)}>
          New audience
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search audiences" />
        <FilterSelect
          list={list}
          name="order"
          label="Sort by"
          options={[
            ['created_at', 'Added'],
            ['name', 'Name'],
            ['subscribers_count', 'Subscribers'],
          ]}
        />
        <FilterSelect list={list} name="direction" label="Order" options={DIRECTIONS} />
      </div>
      <ListTable
        label="Audiences"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'Subscribers', 'Page', 'Double opt-in', 'Added']}
        empty={{
          title: 'No audiences yet.',
          text: 'An audience is a list people subscribe to, through a form or the API.',
          action: 'Add your first audience',
          onAction: () => setAdding(true),
        }}
        hasNext={nextPageUrl}
        row={(a) => (
          <tr>
            <td>
              <Link href={`/audiences/${a.id}`}>{a.name}</Link>
            </td>
            <td>{a.subscribers_count.toLocaleString()}</td>
            <td>{a.visibility}</td>
            <td>{a.double_opt_in.enabled ? 'On' : 'Off'}</td>
            <td>{formatDate(a.created_at)}</td>
          </tr>
        )}
      />
      <FormDialog
        title="New audience"
        open={adding}
        onClose={() => setAdding(false)}
        action={add}
        submit="Create audience"
        onSubmit={async () => {
          const created = await add.run(() => ok(api.POST('/v2/audiences', { body: { name } })));
          if (created) navigate(`/audiences/${created.id}`);
        }}
      >
        <Field label="Name">
          <input name="name" required value={name} onInput={input(setName)} />
        </Field>
      </FormDialog>
    </>
  );
}

function AddSubscribers({ audience, onAdded }: { audience: Audience; onAdded: (message: string) => void }) {
  const [mode, setMode] = useState<'one' | 'many'>('one');
  const [email, setEmail] = useState('');
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [doubleOptIn, setDoubleOptIn] = useState(false);
  const [many, setMany] = useState('');
  const save = useAction();
  const id = { params: { path: { id: audience.id } } };
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (mode === 'one') {
          const added = await save.run(() =>
            ok(
              api.POST('/v2/audiences/{id}/subscribers', {
                ...id,
                body: {
                  email,
                  ...(firstName ? { first_name: firstName } : {}),
                  ...(lastName ? { last_name: lastName } : {}),
                  double_opt_in: doubleOptIn,
                },
              }),
            ),
          );
          if (added) onAdded(added.object === 'subscriber_confirmation' ? added.message : `${added.contact.email} subscribed.`);
        } else {
          const emails = many.split(/[\s,;]+/).filter(Boolean);
          const result = await save.run(() =>
            ok(
              api.POST('/v2/audiences/{id}/subscribers/bulk', {
                ...id,
                body: { subscribers: emails.map((address) => ({ email: address })) },
              }),
            ),
          );
          if (result)
            onAdded(`${result.created} added, ${result.resubscribed} resubscribed, ${result.already_subscribed} already subscribed.`);
        }
      }}
    >
      <Select
        label="How many"
        value={mode}
        onChange={(v) => setMode(v as 'one' | 'many')}
        options={[
          ['one', 'One subscriber'],
          ['many', 'Many addresses'],
        ]}
      />
      {mode === 'one' ? (
        <>
          <Field label="Email address">
            <input type="email" name="email" required value={email} onInput={input(setEmail)} />
          </Field>
          <Field label="First name" hint="Empty: an existing contact keeps theirs">
            <input name="first_name" value={firstName} onInput={input(setFirstName)} />
          </Field>
          <Field label="Last name">
            <input name="last_name" value={lastName} onInput={input(setLastName)} />
          </Field>
          <label class="check">
            <input type="checkbox" checked={doubleOptIn} onChange={checked(setDoubleOptIn)} /> Ask them to confirm by email (double opt-in)
          </label>
        </>
      ) : (
        <Field label="Addresses" hint="Up to 1,000, separated by new lines, commas or spaces">
          <textarea rows={6} required value={many} onInput={input(setMany)} />
        </Field>
      )}
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        Add subscribers
      </Button>
    </form>
  );
}

function Subscribers({ audience, onChange }: { audience: Audience; onChange: () => void }) {
  const list = useListPage(
    { subscribed: '', order: 'created_at', direction: 'desc' },
    (query): Promise<SubscriberList> =>
      ok(api.GET('/v2/audiences/{id}/subscribers', { params: { path: { id: audience.id }, query: query as never } })),
    { deps: [audience.id] },
  );
  const subscribers = list.loaded;
  const [adding, setAdding] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const change = useAction();
  const usage = subscribers.data?.usage;
  const changed = async () => {
    await subscribers.reload();
    onChange();
  };
  return (
    <section aria-labelledby="subscribers-title">
      <div class="page-header">
        <h2 id="subscribers-title">Subscribers</h2>
        <Button kind="primary" onClick={() => setAdding(true)}>
          Add subscribers
        </Button>
      </div>
      {usage ? (
        <p class="muted">
          {usage.used.toLocaleString()}{' '}
          {usage.limit === null
            ? 'subscribers (no limit on this plan)'
            : `of ${usage.limit.toLocaleString()} subscribers allowed on the ${usage.plan} plan`}
        </p>
      ) : null}
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search subscribers" />
        <FilterSelect
          list={list}
          name="subscribed"
          label="Status"
          options={[
            ['', 'All'],
            ['true', 'Subscribed'],
            ['false', 'Unsubscribed'],
          ]}
        />
        <FilterSelect
          list={list}
          name="order"
          label="Sort by"
          options={[
            ['created_at', 'Added'],
            ['email', 'Email'],
            ['subscribed_at', 'Subscribed'],
          ]}
        />
        <FilterSelect list={list} name="direction" label="Order" options={DIRECTIONS} />
      </div>
      <ErrorBox error={change.error} />
      <ListTable
        label="Subscriber list"
        {...list.table}
        items={(data) => data.data}
        columns={['Email', 'Name', 'Status', 'Subscribed', 'Actions']}
        empty="No subscribers."
        hasNext={nextPageUrl}
        row={(s) => (
          <tr>
            <td>
              <Link href={`/contacts/${s.contact.id}`}>{s.contact.email}</Link>
            </td>
            <td>{[s.contact.first_name, s.contact.last_name].filter(Boolean).join(' ') || '—'}</td>
            <td>
              <Badge value={s.subscribed ? 'subscribed' : 'unsubscribed'} />
            </td>
            <td>{formatDate(s.subscribed_at)}</td>
            <td class="row-actions">
              <Button
                class="small"
                aria-label={`${s.subscribed ? 'Unsubscribe' : 'Resubscribe'} ${s.contact.email}`}
                busy={change.busy}
                onClick={async () => {
                  const path = { id: audience.id, subscriber: s.id };
                  if (
                    await change.run(() =>
                      ok(
                        api.POST('/v2/audiences/{id}/subscribers/{subscriber}', { params: { path }, body: { subscribed: !s.subscribed } }),
                      ),
                    )
                  )
                    await changed();
                }}
              >
                {s.subscribed ? 'Unsubscribe' : 'Resubscribe'}
              </Button>
              <Button
                class="small"
                kind="danger"
                aria-label={`Remove ${s.contact.email}`}
                busy={change.busy}
                onClick={async () => {
                  if (!confirm(`Remove ${s.contact.email} from ${audience.name}?`)) return;
                  const path = { id: audience.id, subscriber: s.id };
                  if (await change.run(() => ok(api.DELETE('/v2/audiences/{id}/subscribers/{subscriber}', { params: { path } }))))
                    await changed();
                }}
              >
                Remove
              </Button>
            </td>
          </tr>
        )}
      />
      <Dialog title="Add subscribers" open={adding} onClose={() => setAdding(false)}>
        {adding ? (
          <AddSubscribers
            audience={audience}
            onAdded={(message) => {
              setAdding(false);
              setNotice(message);
              void changed();
            }}
          />
        ) : null}
      </Dialog>
    </section>
  );
}

function AudienceSettings({ audience, onSaved }: { audience: Audience; onSaved: () => void }) {
  const [name, setName] = useState(audience.name);
  const [visibility, setVisibility] = useState(audience.visibility);
  const [publicName, setPublicName] = useState(audience.public_name ?? '');
  const [publicDescription, setPublicDescription] = useState(audience.public_description ?? '');
  const [doi, setDoi] = useState(audience.double_opt_in.enabled);
  const [doiFrom, setDoiFrom] = useState(audience.double_opt_in.email.from ?? '');
  const [redirect, setRedirect] = useState(audience.double_opt_in.redirect_url ?? '');
  const [welcome, setWelcome] = useState(audience.confirmation_email.enabled);
  const [welcomeFrom, setWelcomeFrom] = useState(audience.confirmation_email.email.from ?? '');
  const [welcomeSubject, setWelcomeSubject] = useState(audience.confirmation_email.email.subject ?? '');
  const [exclude, setExclude] = useState(audience.unengaged.exclude);
  const [days, setDays] = useState(String(audience.unengaged.days));
  const save = useAction();
  const [saved, setSaved] = useState(false);
  return (
    <form
      class="card"
      aria-labelledby="settings-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        const body = {
          name,
          visibility,
          public_name: publicName || null,
          public_description: publicDescription || null,
          double_opt_in: { enabled: doi, redirect_url: redirect || null, email: { from: doiFrom || null } },
          confirmation_email: { enabled: welcome, email: { from: welcomeFrom || null, subject: welcomeSubject || null } },
          unengaged: { exclude, days: Number(days) },
        };
        if (await save.run(() => ok(api.POST('/v2/audiences/{id}', { params: { path: { id: audience.id } }, body })))) {
          setSaved(true);
          onSaved();
        }
      }}
    >
      <h2 id="settings-title">Settings</h2>
      <Field label="Name">
        <input name="name" required value={name} onInput={input(setName)} />
      </Field>
      <Select
        label="Subscribe page"
        value={visibility}
        onChange={(v) => setVisibility(v as Audience['visibility'])}
        options={[
          ['private', 'Private: no public page'],
          ['public', 'Public: a hosted subscribe page'],
        ]}
      />
      {visibility === 'public' ? (
        <p class="small-text">
          Page: <a class="wrap" href={`/subscribe/${audience.token}`}>{`${location.origin}/subscribe/${audience.token}`}</a>
        </p>
      ) : null}
      <Field label="Name shown to visitors">
        <input name="public_name" value={publicName} onInput={input(setPublicName)} />
      </Field>
      <Field label="Description shown to visitors">
        <input name="public_description" value={publicDescription} onInput={input(setPublicDescription)} />
      </Field>
      <fieldset class="group">
        <legend>Double opt-in</legend>
        <label class="check">
          <input type="checkbox" checked={doi} onChange={checked(setDoi)} /> Confirm new subscribers by email
        </label>
        <Field label="Confirmation sender" hint="An address on a verified domain">
          <input name="doi_from" value={doiFrom} onInput={input(setDoiFrom)} />
        </Field>
        <Field label="After confirming, go to" hint="A URL; empty: Postlane's own page">
          <input name="redirect_url" value={redirect} onInput={input(setRedirect)} />
        </Field>
      </fieldset>
      <fieldset class="group">
        <legend>Welcome email</legend>
        <label class="check">
          <input type="checkbox" checked={welcome} onChange={checked(setWelcome)} /> Send a welcome email once subscribed
        </label>
        <Field label="Welcome sender">
          <input name="welcome_from" value={welcomeFrom} onInput={input(setWelcomeFrom)} />
        </Field>
        <Field label="Welcome subject">
          <input name="welcome_subject" value={welcomeSubject} onInput={input(setWelcomeSubject)} />
        </Field>
      </fieldset>
      <fieldset class="group">
        <legend>Unengaged subscribers</legend>
        <label class="check">
          <input type="checkbox" checked={exclude} onChange={checked(setExclude)} /> Leave out subscribers without engagement
        </label>
        <Field label="Days without engagement" hint="30 to 1825">
          <input type="number" name="days" min={30} max={1825} value={days} onInput={input(setDays)} />
        </Field>
      </fieldset>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        Save settings
      </Button>
      {saved ? <span role="status"> Saved.</span> : null}
    </form>
  );
}

const TABS = [
  ['subscribers', 'Subscribers'],
  ['settings', 'Settings'],
] as const;

export function AudienceDetail({ params }: PageProps) {
  const audience = useLoad(() => ok(api.GET('/v2/audiences/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const [tab, setTab] = useState<'subscribers' | 'settings'>('subscribers');
  const remove = useAction();
  const a = audience.data;
  return (
    <>
      <PageHeader title={a ? `Audience: ${a.name}` : 'Audience'}>
        {a ? (
          <DeleteButton
            action={remove}
            question={`Delete the audience ${a.name}? Its contacts stay.`}
            remove={() => ok(api.DELETE('/v2/audiences/{id}', { params: { path: { id: a.id } } }))}
            done="/audiences"
          />
        ) : null}
      </PageHeader>
      <DetailStatus back="/audiences" backText="All audiences" loading={audience.loading && !a} error={audience.error ?? remove.error} />
      {a ? (
        <>
          <Facts
            items={[
              ['Subscribers', a.subscribers_count.toLocaleString()],
              ['Subscribe page', a.visibility],
              ['Double opt-in', a.double_opt_in.enabled ? 'On' : 'Off'],
              ['Welcome email', a.confirmation_email.enabled ? 'On' : 'Off'],
              ['Added', formatDate(a.created_at)],
            ]}
          />
          <Tabs label="Audience" tabs={TABS} selected={tab} onSelect={setTab} panelId="audience-panel" style="margin-top: 1rem">
            {tab === 'subscribers' ? (
              <Subscribers audience={a} onChange={() => void audience.reload()} />
            ) : (
              <AudienceSettings key={a.id} audience={a} onSaved={() => void audience.reload()} />
            )}
          </Tabs>
        </>
      ) : null}
    </>
  );
}
