// Horizontal bars of a few counts against one total (a campaign's report, an automation step's
// funnel): drawn with plain boxes so they follow the page's width, every figure also written
// out, so the chart reads the same to a screen reader as to the eye.
import './bars.css';

export interface Bar {
  label: string;
  value: number;
  color: string;
  /** A note after the figure (e.g. "of 40 delivered"). */
  note?: string;
}

export function Bars({ title, bars, total, id }: { title: string; bars: Bar[]; total?: number; id: string }) {
  const max = Math.max(1, total ?? 0, ...bars.map((b) => b.value));
  return (
    <figure class="bars" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <ul class="bars-list" aria-label={title}>
        {bars.map((bar) => {
          const share = bar.value / max;
          return (
            <li class="bars-row" data-bar={bar.label}>
              <span class="bars-label">{bar.label}</span>
              <span class="bars-track" aria-hidden="true">
                <span class="bars-fill" style={`width: ${(share * 100).toFixed(1)}%; background: ${bar.color}`} />
              </span>
              <span class="bars-value">
                {bar.value.toLocaleString()}
                {total ? <span class="muted"> ({Math.round((bar.value / Math.max(1, total)) * 100)}%)</span> : null}
                {bar.note ? <span class="muted"> {bar.note}</span> : null}
              </span>
            </li>
          );
        })}
      </ul>
    </figure>
  );
}
