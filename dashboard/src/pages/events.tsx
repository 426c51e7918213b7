// Events: the workspace's event stream, newest first, updating by itself while "Live" is on
// (the first page is fetched again every few seconds); filter by type and scope (system,
// workspace w: and custom c: events), page back in time. Every id an event names links to its page.
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { Badge, Button, PageHeader } from '../components/ui';
import { ListTable, nextPageUrl } from '../components/ListTable';
import { useDebounced, useLoad, usePolling } from '../lib/hooks';
import { present } from '../lib/list';
import { ObjectLinks } from '../components/ObjectLinks';
import { formatSeconds } from '../lib/time';

const LIVE_MS = 3000;

export function Events() {
  const [page, setPage] = useState(1);
  const [type, setType] = useState('');
  const [scope, setScope] = useState('');
  const [since, setSince] = useState('');
  const [live, setLive] = useState(true);
  const [open, setOpen] = useState<string | null>(null);
  const settledType = useDebounced(type);
  const query = present({
    page,
    limit: 50,
    type: settledType,
    scope,
    include_data: 'true',
    'created_at.after': since ? new Date(since).toISOString() : undefined,
  });
  const events = useLoad(() => ok(api.GET('/v2/events', { params: { query: query as never } })), [page, settledType, scope, since]);
  // One request at a time; rows are keyed by event id (ListTable), so a new event arriving on
  // top never moves an opened row's state or the keyboard focus onto another event.
  usePolling(events.reload, LIVE_MS, live && page === 1);
  return (
    <>
      <PageHeader title="Events">
        <Button aria-pressed={live} onClick={() => setLive(!live)}>
          {live ? 'Live: on' : 'Live: off'}
        </Button>
      </PageHeader>
      <div class="toolbar">
        <label class="field inline">
          <span class="label">Types</span>
          <input
            name="type"
            placeholder="e.g. email.bounced,email.delivered"
            value={type}
            onInput={(e) => {
              setType((e.target as HTMLInputElement).value);
              setPage(1);
            }}
          />
        </label>
        <label class="field inline">
          <span class="label">Scope</span>
          <select
            name="scope"
            value={scope}
            onChange={(e) => {
              setScope((e.target as HTMLSelectElement).value);
              setPage(1);
            }}
          >
            <option value="">All</option>
            <option value="system">System</option>
            <option value="workspace">Workspace (w:)</option>
            <option value="custom">Custom (c:)</option>
          </select>
        </label>
        <label class="field inline">
          <span class="label">Since</span>
          <input
            type="datetime-local"
            value={since}
            onChange={(e) => {
              setSince((e.target as HTMLInputElement).value);
              setPage(1);
            }}
          />
        </label>
      </div>
      <p class="muted">Without a date, the last two days are shown.</p>
      <ListTable
        label="Events"
        loaded={events}
        items={(data) => data.data}
        columns={['Type', 'Object', 'When', 'Data']}
        empty={{
          title: 'No events yet.',
          text: 'Events record what happens to your emails and contacts (accepted, delivered, opened…), newest first.',
          action: 'Send a test from a domain',
          href: '/domains',
        }}
        page={page}
        onPage={setPage}
        hasNext={nextPageUrl}
        quiet
        row={(ev) => {
          const object =
            (ev.data as { object?: Record<string, unknown> } | undefined)?.object ?? (ev.data as Record<string, unknown> | undefined);
          return (
            <tr>
              <td>
                <Badge value={ev.type.split('.').pop()} /> {ev.type}
              </td>
              <td>
                <ObjectLinks object={object} />
              </td>
              <td>
                <time dateTime={ev.created_at}>{formatSeconds(ev.created_at)}</time>
              </td>
              <td>
                <button type="button" class="small" aria-expanded={open === ev.id} onClick={() => setOpen(open === ev.id ? null : ev.id)}>
                  {open === ev.id ? 'Hide' : 'Show'}
                </button>
                {open === ev.id ? (
                  <pre class="raw small-text" tabIndex={0} aria-label={`Data of ${ev.id}`}>
                    {JSON.stringify(ev.data, null, 2)}
                  </pre>
                ) : null}
              </td>
            </tr>
          );
        }}
      />
    </>
  );
}
