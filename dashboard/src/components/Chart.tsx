// A bar chart of one daily series, drawn as SVG (a charting library would be most of the
// bundle for a few bars). The numbers are also given as text for screen readers.
export function BarChart({ title, points, color = '#2457c5' }: { title: string; points: Array<{ date: string; value: number }>; color?: string }) {
  const max = Math.max(1, ...points.map((p) => p.value));
  const total = points.reduce((sum, p) => sum + p.value, 0);
  const width = 300;
  const height = 80;
  const bar = width / Math.max(1, points.length);
  return (
    <figure class="chart">
      <figcaption>
        <span>{title}</span> <strong>{total.toLocaleString()}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title}: ${total} in ${points.length} days, at most ${max === 1 && total === 0 ? 0 : max} on one day`} preserveAspectRatio="none">
        {points.map((p, i) => {
          const h = (p.value / max) * (height - 4);
          return (
            <rect x={i * bar + 1} y={height - h} width={Math.max(1, bar - 2)} height={h} fill={color}>
              <title>{`${p.date}: ${p.value}`}</title>
            </rect>
          );
        })}
        <line x1="0" x2={width} y1={height - 0.5} y2={height - 0.5} stroke="#8a94a6" stroke-width="1" />
      </svg>
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
