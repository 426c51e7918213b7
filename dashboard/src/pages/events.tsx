// Events: the workspace's event stream, newest first, updating by itself while "Live" is on
// (the first page is fetched again every few seconds); filter by type, page back in time.
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { Badge, Button, ErrorBox, Loading, PageHeader, Pager, TableScroll } from '../components/ui';
import { formatDate, useDebounced, useLoad } from '../lib/hooks';
import { present } from '../lib/list';

const LIVE_MS = 3000;

export function Events() {
  const [page, setPage] = useState(1);
  const [type, setType] = useState('');
  const [since, setSince] = useState('');
  const [live, setLive] = useState(true);
  const [open, setOpen] = useState<string | null>(null);
  const settledType = useDebounced(type);
  const query = present({ page, limit: 50, type: settledType, include_data: 'true', 'created_at.after': since ? new Date(since).toISOString() : undefined });
  const events = useLoad(() => ok(api.GET('/v2/events', { params: { query: query as never } })), [page, settledType, since]);
  useEffect(() => {
    if (!live || page !== 1) return;
    const timer = setInterval(() => void events.reload(), LIVE_MS);
    return () => clearInterval(timer);
  }, [live, page, events.reload]);
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
          <input name="type" placeholder="e.g. email.bounced,email.delivered" value={type} onInput={(e) => { setType((e.target as HTMLInputElement).value); setPage(1); }} />
        </label>
        <label class="field inline">
          <span class="label">Since</span>
          <input type="datetime-local" value={since} onChange={(e) => { setSince((e.target as HTMLInputElement).value); setPage(1); }} />
        </label>
      </div>
      <p class="muted">Without a date, the last two days are shown.</p>
      {events.loading && !events.data ? <Loading /> : null}
      {events.loading && events.data ? <span class="visually-hidden" role="status">Updating</span> : null}
      <ErrorBox error={events.error} />
      {events.data ? (
        <>
          <TableScroll label="Events">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Object</th>
                <th scope="col">When</th>
                <th scope="col">Data</th>
              </tr>
            </thead>
            <tbody>
              {events.data.data.map((ev) => {
                const object = (ev.data as { object?: Record<string, unknown> } | undefined)?.object ?? (ev.data as Record<string, unknown> | undefined);
                const label = object ? String(object.id ?? '') : '';
                return (
                  <tr>
                    <td>
                      <Badge value={ev.type.split('.').pop()} /> {ev.type}
                    </td>
                    <td>
                      <code>{label}</code>
                    </td>
                    <td>{formatDate(ev.created_at)}</td>
                    <td>
                      <button type="button" class="small" aria-expanded={open === ev.id} onClick={() => setOpen(open === ev.id ? null : ev.id)}>
                        {open === ev.id ? 'Hide' : 'Show'}
                      </button>
                      {open === ev.id ? <pre class="raw small-text" tabIndex={0} aria-label={`Data of ${ev.id}`}>{JSON.stringify(ev.data, null, 2)}</pre> : null}
                    </td>
                  </tr>
                );
              })}
              {events.data.data.length === 0 ? (
                <tr>
                  <td colSpan={4}>No events.</td>
                </tr>
              ) : null}
            </tbody>
          </TableScroll>
          <Pager page={page} hasNext={Boolean(events.data.next_page_url)} onPage={setPage} loading={events.loading} />
        </>
      ) : null}
    </>
  );
}
