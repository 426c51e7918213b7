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
