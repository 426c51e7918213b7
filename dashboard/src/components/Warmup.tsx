// Warm-up of a sending domain (docs/delivery.md "Warm-up"): day N of M, today's cap and count per
// destination, the deferred backlog, and starting or stopping it (workspace admins).
import { api, ok } from '../api/client';
import { Button, ErrorBox, Facts, TableScroll } from './ui';
import { useAction, useLoad } from '../lib/hooks';

const capText = (cap: number | null) => (cap === null ? 'No cap' : cap.toLocaleString('en'));

export function Warmup({ domain }: { domain: string }) {
  const list = useLoad(() => ok(api.GET('/v2/delivery/warmup')), []);
  const change = useAction();
  const w = list.data?.data.find((item) => item.kind === 'domain' && item.subject === domain);
  const act = async (action: () => Promise<unknown>) => {
    if ((await change.run(action)) !== undefined) await list.reload();
  };
  return (
    <section class="card" aria-labelledby="warmup-title">
      <h2 id="warmup-title">Warm-up</h2>
      <ErrorBox error={list.error ?? change.error} />
      {list.data && !w ? (
        <>
          <p class="muted">
            A new domain builds its reputation by sending a little more each day: 50 messages per receiving provider on day 1, no cap from
            day 31. The rest waits for the next day, transactional mail first.
          </p>
          <Button busy={change.busy} onClick={() => act(() => ok(api.POST('/v2/delivery/warmup', { body: { domain } })))}>
            Start warm-up
          </Button>
        </>
      ) : null}
      {w ? (
        <>
          <Facts
            items={[
              ['Day', w.status === 'finished' ? `Finished (${w.days} days)` : `${w.day} of ${w.days}`],
              ['Cap per destination today', capText(w.cap)],
              ['Cap tomorrow', capText(w.next_day_cap)],
              ['Deferred to later days', w.deferred.toLocaleString('en')],
            ]}
          />
          {w.destinations.length ? (
            <TableScroll label="Warm-up per destination">
              <thead>
                <tr>
                  <th scope="col">Destination</th>
                  <th scope="col">Sent today</th>
                  <th scope="col">Cap today</th>
                  <th scope="col">Cap tomorrow</th>
                  <th scope="col">Deferred</th>
                </tr>
              </thead>
              <tbody>
                {w.destinations.map((d) => (
                  <tr key={d.destination}>
                    <td>{d.destination}</td>
                    <td>{d.sent.toLocaleString('en')}</td>
                    <td>{capText(d.cap)}</td>
                    <td>{capText(d.next_day_cap)}</td>
                    <td>{d.deferred.toLocaleString('en')}</td>
                  </tr>
                ))}
              </tbody>
            </TableScroll>
          ) : null}
          <Button
            kind="danger"
            busy={change.busy}
            onClick={() => act(() => ok(api.DELETE('/v2/delivery/warmup/{id}', { params: { path: { id: w.id } } })))}
          >
            Stop warm-up
          </Button>
        </>
      ) : null}
    </section>
  );
}
