// The part of the charts that draws: uPlot (https://github.com/leeoniya/uPlot), with its styles,
// loaded with import() by Chart.tsx so that only pages with a chart fetch it. Times are UTC, as
// the buckets of the stats are.
import uPlot from 'uplot';
import css from 'uplot/dist/uPlot.min.css' with { type: 'text' };

export interface DrawnSeries {
  label: string;
  color: string;
  values: Array<number | null>;
  dash?: number[];
}

export interface DrawOptions {
  /** Bucket starts, in milliseconds. */
  times: number[];
  series: DrawnSeries[];
  interval: 'hour' | 'day';
  format: (value: number) => string;
  /** Whole numbers only (counts): no ticks between them. */
  integer: boolean;
  /** A bucket's start (milliseconds) as text, for the legend. */
  label: (ms: number) => string;
  height: number;
}

let styled = false;
function addStyles(): void {
  if (styled) return;
  styled = true;
  const style = document.createElement('style');
  style.textContent = css;
  document.head.append(style);
}

const utc = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
/** Draws into `host`; returns what to call when the host is removed. */
export function drawChart(host: HTMLElement, options: DrawOptions): () => void {
  addStyles();
  const width = () => Math.max(240, host.clientWidth);
  const step = options.interval === 'hour' ? 3600 : 86400;
  const integers = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 10_000_000,
  ];
  // One bucket alone would be drawn across years: draw an empty bucket either side of it.
  const alone = options.times.length === 1;
  const xs = alone
    ? [options.times[0] / 1000 - step, options.times[0] / 1000, options.times[0] / 1000 + step]
    : options.times.map((t) => t / 1000);
  const data: uPlot.AlignedData = [xs, ...options.series.map((s) => (alone ? [null, s.values[0], null] : s.values))];
  const chart = new uPlot(
    {
      width: width(),
      height: options.height,
      tzDate: utc,
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      legend: { live: true },
      scales: {
        x: { time: true },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      series: [
        { label: options.interval === 'hour' ? 'Hour' : 'Day', value: (_u, v) => (v == null ? '—' : options.label(v * 1000)) },
        ...options.series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          dash: s.dash,
          points: { show: options.times.length <= 45, size: 5 },
          value: (_u: uPlot, v: number | null) => (v == null ? '—' : options.format(v)),
        })),
      ],
      axes: [
        { stroke: '#4a5568', grid: { stroke: '#eceff3' }, ticks: { stroke: '#c9d0da' } },
        {
          stroke: '#4a5568',
          grid: { stroke: '#eceff3' },
          ticks: { stroke: '#c9d0da' },
          size: 60,
          incrs: options.integer ? integers : undefined,
          values: (_u, ticks) => ticks.map((t) => options.format(t)),
        },
      ],
    },
    data,
    host,
  );
  const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: options.height }));
  resize.observe(host);
  return () => {
    resize.disconnect();
    chart.destroy();
  };
}
