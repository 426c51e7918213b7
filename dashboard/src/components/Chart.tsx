// Charts. TimeChart draws series over time with uPlot, loaded with import() on the pages that
// use it (chart/uplot-chart.ts): axes with dates (UTC, as the buckets are), and the values under
// the pointer in its legend. The canvas is hidden from screen readers; the same numbers are given
// as text: a one-line summary in the caption and a table of every bucket.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { DrawOptions, DrawnSeries } from './chart/uplot-chart';
import './insight.css';

export type ChartSeries = DrawnSeries;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** A bucket's start as people read it: "7 Dec 2026" for a day, "7 Dec 14:00 UTC" for an hour. */
export function bucketLabel(ms: number, interval: 'hour' | 'day'): string {
  const d = new Date(ms);
  const day = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
  return interval === 'hour' ? `${day} ${String(d.getUTCHours()).padStart(2, '0')}:00 UTC` : `${day} ${d.getUTCFullYear()}`;
}

export const formatCount = (n: number) => (Number.isInteger(n) ? n.toLocaleString() : n.toFixed(1));
/** A fraction as a percentage: 0.0042 → "0.42 %". */
export const formatPercent = (rate: number) => `${(rate * 100).toFixed(rate !== 0 && Math.abs(rate) < 0.1 ? 2 : 1)} %`;

let loader: Promise<typeof import('./chart/uplot-chart')> | null = null;
const loadDrawing = () => (loader ??= import('./chart/uplot-chart'));
/** Starts fetching the charts while a page's data is still on its way (it is drawn once both are here). */
export const preloadCharts = () => void loadDrawing().catch(() => undefined);

export interface TimeChartProps {
  id: string;
  title: string;
  /** One line that says what the chart shows, read before the table. */
  summary: string;
  times: number[];
  interval: 'hour' | 'day';
  series: ChartSeries[];
  format?: (value: number) => string;
  height?: number;
}

export function TimeChart({ id, title, summary, times, interval, series, format = formatCount, height = 220 }: TimeChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let stop: (() => void) | null = null;
    let gone = false;
    const options: DrawOptions = {
      times,
      series,
      interval,
      format,
      height,
      integer: format === formatCount,
      label: (ms) => bucketLabel(ms, interval),
    };
    loadDrawing()
      .then((drawing) => {
        if (!gone && host.current) stop = drawing.drawChart(host.current, options);
      })
      .catch(() => setFailed(true));
    return () => {
      gone = true;
      stop?.();
    };
  }, [times, series, interval, height]);
  const range = times.length ? `${bucketLabel(times[0], interval)} to ${bucketLabel(times[times.length - 1], interval)}` : '';
  return (
    <figure class="chart time-chart" aria-labelledby={`${id}-title`} data-chart={id}>
      <figcaption>
        <strong id={`${id}-title`}>{title}</strong>
        <span class="muted">{summary}</span>
      </figcaption>
      {failed ? <p class="muted">The chart could not be drawn; the numbers are below.</p> : null}
      <div class="chart-canvas" ref={host} aria-hidden="true" style={{ minHeight: `${height + 40}px` }} />
      <p class="muted small-text chart-range">{range ? `${interval === 'hour' ? 'Hourly' : 'Daily'}, ${range}` : null}</p>
      <details class="chart-table">
        <summary>Show the numbers</summary>
        <div class="table-scroll" role="region" aria-label={`${title}, as a table`} tabIndex={0}>
          <table>
            <caption class="visually-hidden">{`${title}: ${summary}`}</caption>
            <thead>
              <tr>
                <th scope="col">{interval === 'hour' ? 'Hour' : 'Day'}</th>
                {series.map((s) => (
                  <th scope="col">{s.label}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {times.map((t, i) => (
                <tr>
                  <th scope="row">{bucketLabel(t, interval)}</th>
                  {series.map((s) => (
                    <td>{s.values[i] == null ? '—' : format(s.values[i]!)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

export interface Segment {
  label: string;
  value: number;
  color: string;
}

/**
 * One bar split into parts (results of a list, passes and fails of a source), with a legend
 * that gives every number as text; the bar itself is an image with the same words.
 */
export function StackedBar({ title, segments, showTitle = true }: { title: string; segments: Segment[]; showTitle?: boolean }) {
  const total = segments.reduce((sum, s) => sum + s.value, 0);
  const words = segments.map((s) => `${s.label} ${s.value}`).join(', ');
  return (
    <figure class="stacked">
      {showTitle ? (
        <figcaption>
          <span>{title}</span> <strong>{total.toLocaleString()}</strong>
        </figcaption>
      ) : null}
      <div class="stack" role="img" aria-label={`${title}: ${total ? words : 'nothing yet'}`}>
        {segments
          .filter((s) => s.value > 0)
          .map((s) => (
            <span style={{ width: `${(s.value / total) * 100}%`, background: s.color }} title={`${s.label}: ${s.value}`} />
          ))}
      </div>
      <ul class="legend">
        {segments.map((s) => (
          <li>
            <span class="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.label}: <strong>{s.value.toLocaleString()}</strong>
            {total ? <span class="muted"> ({Math.round((s.value / total) * 100)} %)</span> : null}
          </li>
        ))}
      </ul>
    </figure>
  );
}
