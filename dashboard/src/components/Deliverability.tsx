// The overview's deliverability card: complaint and hard-bounce rates of the last 24 hours and 7
// days, for the workspace and each sending domain, each as a <meter> whose low and high marks
// are the recommended rate and the receivers' limit (GET /v2/stats/deliverability).
import { api, ok, type Ok } from '../api/client';
import { ErrorBox, Loading, TableScroll } from './ui';
import { useLoad } from '../lib/hooks';

type Stats = Ok<'/v2/stats/deliverability', 'get'>;
type Window = Stats['workspace']['last_24h'];
export type Thresholds = Stats['thresholds']['complaint_rate'];

const percent = (rate: number) => `${(rate * 100).toFixed(2)} %`;
const LEVEL = { ok: 'fine', warning: 'above the recommended rate', over_limit: 'past the limit' } as const;

export function Gauge({
  rate,
  level,
  of,
  thresholds,
}: {
  rate: number | null;
  level: keyof typeof LEVEL;
  of: string;
  thresholds: Thresholds;
}) {
  if (rate === null) return <span class="muted">no mail yet</span>;
  const max = thresholds.limit * 1.5;
  return (
    <span class={`gauge gauge-${level}`}>
      <meter
        min={0}
        max={max}
        low={thresholds.recommended}
        high={thresholds.limit}
        optimum={0}
        value={Math.min(rate, max)}
        aria-label={`${percent(rate)} of ${of}, ${LEVEL[level]}`}
      />{' '}
      {percent(rate)}
    </span>
  );
}

function Row({
  name,
  windows,
  thresholds,
}: {
  name: string;
  windows: { last_24h: Window; last_7d: Window };
  thresholds: Stats['thresholds'];
}) {
  return (
    <tr>
      <th scope="row">{name}</th>
      {[windows.last_24h, windows.last_7d].map((w) => (
        <td>
          <Gauge rate={w.complaint_rate} level={w.complaint_level} of={`${w.delivered} delivered`} thresholds={thresholds.complaint_rate} />
        </td>
      ))}
      {[windows.last_24h, windows.last_7d].map((w) => (
        <td>
          <Gauge
            rate={w.hard_bounce_rate}
            level={w.hard_bounce_level}
            of={`${w.delivered + w.bounced} sent`}
            thresholds={thresholds.hard_bounce_rate}
          />
        </td>
      ))}
    </tr>
  );
}

export function Deliverability() {
  const stats = useLoad(() => ok(api.GET('/v2/stats/deliverability')), []);
  const s = stats.data;
  return (
    <section aria-labelledby="deliverability-title" class="card">
      <h2 id="deliverability-title">Deliverability</h2>
      {stats.loading && !s ? <Loading /> : null}
      <ErrorBox error={stats.error} />
      {s ? (
        <>
          <p class="muted">
            Spam complaints: keep below {percent(s.thresholds.complaint_rate.recommended)}; Gmail and Yahoo filter past{' '}
            {percent(s.thresholds.complaint_rate.limit)}. Hard bounces: keep below {percent(s.thresholds.hard_bounce_rate.recommended)},
            never past {percent(s.thresholds.hard_bounce_rate.limit)}. A campaign past a limit is paused.
          </p>
          <TableScroll label="Complaint and hard-bounce rates">
            <thead>
              <tr>
                <th scope="col">Sender</th>
                <th scope="col">Complaints, 24 h</th>
                <th scope="col">Complaints, 7 days</th>
                <th scope="col">Hard bounces, 24 h</th>
                <th scope="col">Hard bounces, 7 days</th>
              </tr>
            </thead>
            <tbody>
              <Row name="Whole workspace" windows={s.workspace} thresholds={s.thresholds} />
              {s.domains.map((d) => (
                <Row name={d.name} windows={d} thresholds={s.thresholds} />
              ))}
            </tbody>
          </TableScroll>
        </>
      ) : null}
    </section>
  );
}
