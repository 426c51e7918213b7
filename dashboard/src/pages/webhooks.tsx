// Webhooks: the list; create; one webhook's secret (revealed on demand, rotated), a test
// request, its settings, and its request log with each request's body and every answer, with
// resend.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../api/client';
import { Badge, Button, CopyButton, Dialog, ErrorBox, Facts, Field, Loading, PageHeader, SearchBox } from '../components/ui';
import { DeleteButton } from '../components/DeleteButton';
import { DetailStatus } from '../components/DetailStatus';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { formatDate, useAction, useLoad } from '../lib/hooks';
import { useListPage } from '../lib/list';
import { Link, navigate } from '../lib/router';
import type { PageProps } from './index';
import { ObjectLinks } from '../components/ObjectLinks';
import { formatSeconds } from '../lib/time';

type Webhook = Ok<'/v2/webhooks/{id}', 'get'>;

function eventList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);
}

function WebhookForm({ initial, onSaved }: { initial: Webhook | null; onSaved: (id: string) => void }) {
  const [name, setName] = useState(initial?.name ?? '');
  const [url, setUrl] = useState(initial?.url ?? '');
  const [allEvents, setAllEvents] = useState(initial?.all_events ?? true);
  const [events, setEvents] = useState((initial?.events ?? []).join(', '));
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const save = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const body = { name, url, all_events: allEvents, events: allEvents ? [] : eventList(events), enabled };
        const saved = await save.run(() =>
          initial
            ? ok(api.POST('/v2/webhooks/{id}', { params: { path: { id: initial.id } }, body }))
            : ok(api.POST('/v2/webhooks', { body })),
        );
        if (saved) onSaved(saved.id);
      }}
    >
      <Field label="Name">
        <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="URL" hint="Where events are posted (http or https)">
        <input name="url" type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
      </Field>
      <label class="check">
        <input type="checkbox" checked={allEvents} onChange={(e) => setAllEvents((e.target as HTMLInputElement).checked)} /> All events
      </label>
      {!allEvents ? (
        <Field label="Events" hint="Event types, separated by commas (e.g. email.delivered, email.bounced)">
          <input name="events" value={events} onInput={(e) => setEvents((e.target as HTMLInputElement).value)} />
        </Field>
      ) : null}
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} /> Enabled
      </label>
      <ErrorBox error={save.error} />
      <Button type="submit" kind="primary" busy={save.busy}>
        {initial ? 'Save' : 'Create webhook'}
      </Button>
    </form>
  );
}

export function Webhooks() {
  const list = useListPage({}, (query) => ok(api.GET('/v2/webhooks', { params: { query } })));
  const hooks = list.loaded;
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader title="Webhooks">
        <Button kind="primary" onClick={() => setCreating(true)}>
          Add webhook
        </Button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox value={list.search} onInput={list.setSearch} label="Search name or URL" />
      </div>
      {hooks.data ? (
        <p class="muted">
          {hooks.data.usage.used} of {hooks.data.usage.limit} webhooks used
        </p>
      ) : null}
      <ListTable
        label="Webhooks"
        {...list.table}
        items={(data) => data.data}
        columns={['Name', 'URL', 'Events', 'State', 'Last used']}
        empty={{
          title: 'No webhooks.',
          text: 'A webhook posts each email event (delivered, bounced, opened…) to a URL of yours.',
          action: 'Add your first webhook',
          onAction: () => setCreating(true),
        }}
        hasNext={nextPageUrl}
        row={(w) => (
          <tr>
            <td>
              <Link href={`/webhooks/${w.id}`}>{w.name}</Link>
            </td>
            <td class="wrap">{w.url}</td>
            <td>{w.all_events ? 'All' : w.events.join(', ')}</td>
            <td>
              <Badge value={w.enabled ? 'enabled' : 'disabled'} />
            </td>
            <td>{formatDate(w.last_used_at)}</td>
          </tr>
        )}
      />
      <Dialog title="Add a webhook" open={creating} onClose={() => setCreating(false)}>
        {creating ? <WebhookForm initial={null} onSaved={(id) => navigate(`/webhooks/${id}`)} /> : null}
      </Dialog>
    </>
  );
}

function RequestDetail({ webhookId, requestId, onResent }: { webhookId: string; requestId: string; onResent: () => void }) {
  const request = useLoad(
    () => ok(api.GET('/v2/webhooks/{id}/requests/{request_id}', { params: { path: { id: webhookId, request_id: requestId } } })),
    [requestId],
  );
  const resend = useAction();
  const r = request.data;
  if (request.loading && !r) return <Loading />;
  if (request.error) return <ErrorBox error={request.error} />;
  if (!r) return null;
  return (
    <>
      <Facts
        items={[
          ['Status', <Badge value={r.status} />],
          ['Attempts', `${r.attempts} of ${r.max_attempts}`],
          ['Events', r.event_count],
          ['Last answer', r.response_status ?? '—'],
          ['Error', r.error],
          ['Next attempt', formatDate(r.next_attempt_at)],
        ]}
      />
      <Button
        kind="primary"
        busy={resend.busy}
        onClick={async () => {
          if (
            await resend.run(() =>
              ok(
                api.POST('/v2/webhooks/{id}/requests/{request_id}/resend', { params: { path: { id: webhookId, request_id: requestId } } }),
              ),
            )
          ) {
            await request.reload();
            onResent();
          }
        }}
      >
        Resend
      </Button>
      <ErrorBox error={resend.error} />
      <h3>Request body</h3>
      {r.payload === null ? (
        <p>The body was purged.</p>
      ) : (
        <pre class="raw" tabIndex={0} aria-label="Request body">
          {JSON.stringify(r.payload, null, 2)}
        </pre>
      )}
      <h3>Answers</h3>
      <ol class="timeline">
        {r.attempt_history.map((a) => (
          <li>
            <time dateTime={a.created_at}>{formatSeconds(a.created_at)}</time> Attempt {a.attempt}
            {a.manual ? ' (resend)' : ''}: {a.response_status ?? 'no answer'}
            {a.duration_ms !== null ? `, ${a.duration_ms} ms` : ''}
            {a.error ? <div class="reason wrap">{a.error}</div> : null}
            {a.response_body ? (
              <pre class="raw small-text" tabIndex={0} aria-label={`Answer to attempt ${a.attempt}`}>
                {a.response_body}
              </pre>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}

/** Events a request shows in its row (a batch names the rest by count). */
const EVENTS_SHOWN = 3;

/** The event types of a request and links to what they are about, read from the events it carries. */
function RequestEvents({ ids, count }: { ids: string[]; count: number }) {
  const events = useLoad(
    () =>
      Promise.all(ids.slice(0, EVENTS_SHOWN).map((id) => ok(api.GET('/v2/events/{id}', { params: { path: { id } } })).catch(() => null))),
    [ids.join(',')],
  );
  if (events.loading && !events.data) return <span class="muted">…</span>;
  const found = (events.data ?? []).filter((e) => e !== null);
  if (found.length === 0) return <span class="muted">{count === 1 ? '1 event' : `${count} events`} (no longer kept)</span>;
  return (
    <ul class="plain-list">
      {found.map((e) => (
        <li data-event-type={e.type}>
          <Badge value={e.type.split('.').pop()} /> <span>{e.type}</span> <ObjectLinks object={e.data.object as Record<string, unknown>} />
        </li>
      ))}
      {count > found.length ? <li class="muted">and {count - found.length} more</li> : null}
    </ul>
  );
}

function RequestLog({ webhookId }: { webhookId: string }) {
  const list = useListPage({}, (query) => ok(api.GET('/v2/webhooks/{id}/requests', { params: { path: { id: webhookId }, query } })), {
    limit: 20,
  });
  const requests = list.loaded;
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section aria-labelledby="log-title">
      <div class="page-header">
        <h2 id="log-title">Requests</h2>
        <Button class="small" onClick={() => void requests.reload()}>
          Refresh
        </Button>
      </div>
      <ListTable
        label="Webhook requests"
        {...list.table}
        items={(data) => data.data}
        columns={['Request', 'Events', 'Status', 'Answer', 'Attempts', 'Created']}
        empty="No requests yet."
        hasNext={nextPageUrl}
        row={(r) => (
          <tr>
            <td>
              <button type="button" class="link" onClick={() => setOpen(r.id)}>
                {r.id}
              </button>
            </td>
            <td>
              <RequestEvents ids={r.event_ids} count={r.event_count} />
            </td>
            <td>
              <Badge value={r.status} />
            </td>
            <td class="wrap">{r.response_status ?? r.error ?? '—'}</td>
            <td>{r.attempts}</td>
            <td>
              <time dateTime={r.created_at}>{formatSeconds(r.created_at)}</time>
            </td>
          </tr>
        )}
      />
      <Dialog title="Webhook request" open={open !== null} onClose={() => setOpen(null)}>
        {open ? <RequestDetail webhookId={webhookId} requestId={open} onResent={() => void requests.reload()} /> : null}
      </Dialog>
    </section>
  );
}

export function WebhookDetail({ params }: PageProps) {
  const hook = useLoad(() => ok(api.GET('/v2/webhooks/{id}', { params: { path: { id: params.id } } })), [params.id]);
  const [revealed, setRevealed] = useState(false);
  const [editing, setEditing] = useState(false);
  const [testType, setTestType] = useState('email.delivered');
  const [testResult, setTestResult] = useState<Ok<'/v2/webhooks/{id}/test', 'post'> | null>(null);
  const action = useAction();
  const w = hook.data;
  const id = params.id;
  return (
    <>
      <PageHeader title={w ? w.name : 'Webhook'}>
        {w ? (
          <>
            <Button onClick={() => setEditing(true)}>Edit</Button>
            <DeleteButton
              action={action}
              question={`Delete the webhook ${w.name}?`}
              remove={() => ok(api.DELETE('/v2/webhooks/{id}', { params: { path: { id } } }))}
              done="/webhooks"
            />
          </>
        ) : null}
      </PageHeader>
      <DetailStatus back="/webhooks" backText="All webhooks" loading={hook.loading && !w} error={hook.error ?? action.error} />
      {w ? (
        <>
          <section class="card">
            <Facts
              items={[
                ['URL', <span class="wrap">{w.url}</span>],
                ['State', <Badge value={w.enabled ? 'enabled' : 'disabled'} />],
                ['Events', w.all_events ? 'All events' : w.events.join(', ')],
                ['Last used', formatDate(w.last_used_at)],
                [
                  'Signing secret',
                  <>
                    <code>{revealed ? w.secret : '••••••••••••'}</code>{' '}
                    <Button class="small" onClick={() => setRevealed(!revealed)}>
                      {revealed ? 'Hide' : 'Reveal'}
                    </Button>{' '}
                    {revealed ? <CopyButton text={w.secret} what={`the signing secret`} /> : null}{' '}
                    <Button
                      class="small"
                      busy={action.busy}
                      onClick={async () => {
                        if (!confirm('Rotate the secret? Requests are signed with the new one from now on.')) return;
                        if (await action.run(() => ok(api.POST('/v2/webhooks/{id}/reset-secret', { params: { path: { id } } })))) {
                          setRevealed(true);
                          await hook.reload();
                        }
                      }}
                    >
                      Rotate
                    </Button>
                  </>,
                ],
              ]}
            />
          </section>
          <section class="card" aria-labelledby="test-title">
            <h2 id="test-title">Send a test</h2>
            <form
              class="inline-form"
              onSubmit={async (e) => {
                e.preventDefault();
                setTestResult(null);
                const result = await action.run(() =>
                  ok(api.POST('/v2/webhooks/{id}/test', { params: { path: { id } }, body: { type: testType } })),
                );
                if (result) setTestResult(result);
              }}
            >
              <Field label="Event type">
                <input name="test_type" value={testType} onInput={(e) => setTestType((e.target as HTMLInputElement).value)} />
              </Field>
              <Button type="submit" busy={action.busy}>
                Send test
              </Button>
            </form>
            {testResult ? (
              <p role="status">
                <Badge value={testResult.success ? 'delivered' : 'failed'} /> Answer: {testResult.status_code ?? 'none'}
                {testResult.error ? ` — ${testResult.error}` : ''} ({testResult.duration_ms} ms)
              </p>
            ) : null}
          </section>
          <RequestLog webhookId={id} />
          <Dialog title="Edit the webhook" open={editing} onClose={() => setEditing(false)}>
            {editing ? (
              <WebhookForm
                initial={w}
                onSaved={async () => {
                  setEditing(false);
                  await hook.reload();
                }}
              />
            ) : null}
          </Dialog>
        </>
      ) : null}
    </>
  );
}
