// A period's figures split by recipient provider or sending domain: counts and rates per row,
// the complaint and hard-bounce rates marked when they pass the receivers' thresholds.
import { formatPercent } from './Chart';
import { TableScroll } from './ui';
import { Link } from '../lib/router';

type Level = 'ok' | 'warning' | 'over_limit';
export interface BreakdownRow {
  key: string;
  name: string;
  href?: string;
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  delivery_rate: number | null;
  bounce_rate: number | null;
  hard_bounce_rate: number | null;
  hard_bounce_level: Level;
  complaint_rate: number | null;
  complaint_level: Level;
  open_rate: number | null;
  click_rate: number | null;
}

const LEVEL_TEXT: Record<Level, string> = { ok: '', warning: 'above the recommended rate', over_limit: 'past the limit' };

function Rate({ rate, level }: { rate: number | null; level?: Level }) {
  if (rate === null) return <span class="muted">—</span>;
  if (!level || level === 'ok') return <>{formatPercent(rate)}</>;
  return (
    <span class={`gauge gauge-${level}`}>
      {formatPercent(rate)} <span class="small-text">({LEVEL_TEXT[level]})</span>
    </span>
  );
}

export function BreakdownTable({
  id,
  title,
  label,
  rows,
  empty = 'No mail in this period.',
}: {
  id: string;
  title: string;
  label: string;
  rows: BreakdownRow[];
  empty?: string;
}) {
  return (
    <section class="breakdown" data-breakdown={id}>
      <h3 id={`${id}-title`}>{title}</h3>
      {rows.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <TableScroll label={title}>
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col">Sent</th>
              <th scope="col">Delivered</th>
              <th scope="col">Bounced</th>
              <th scope="col">Complaints</th>
              <th scope="col">Opened</th>
              <th scope="col">Clicked</th>
              <th scope="col">Delivery rate</th>
              <th scope="col">Bounce rate</th>
              <th scope="col">Hard-bounce rate</th>
              <th scope="col">Complaint rate</th>
              <th scope="col">Open rate</th>
              <th scope="col">Click rate</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr data-row={r.key}>
                <th scope="row">{r.href ? <Link href={r.href}>{r.name}</Link> : r.name}</th>
                <td>{r.sent.toLocaleString()}</td>
                <td>{r.delivered.toLocaleString()}</td>
                <td>{r.bounced.toLocaleString()}</td>
                <td>{r.complained.toLocaleString()}</td>
                <td>{r.opened.toLocaleString()}</td>
                <td>{r.clicked.toLocaleString()}</td>
                <td>
                  <Rate rate={r.delivery_rate} />
                </td>
                <td>
                  <Rate rate={r.bounce_rate} />
                </td>
                <td>
                  <Rate rate={r.hard_bounce_rate} level={r.hard_bounce_level} />
                </td>
                <td>
                  <Rate rate={r.complaint_rate} level={r.complaint_level} />
                </td>
                <td>
                  <Rate rate={r.open_rate} />
                </td>
                <td>
                  <Rate rate={r.click_rate} />
                </td>
              </tr>
            ))}
          </tbody>
        </TableScroll>
      )}
    </section>
  );
}
