// The automation's graph drawn as a picture: steps in layers by how far a run has come (the
// longest path from a trigger), arrows between them labelled with their branch, each box with
// its key, what it does and, when given, how many runs reached it. The list beside it (Diagram)
// carries the same facts for screen readers, so the picture is one labelled image.
import type { DiagramConnection, DiagramStats, DiagramStep } from './Diagram';

const W = 168;
const H = 56;
const GAP_X = 22;
const GAP_Y = 44;

export function layers(steps: DiagramStep[], connections: DiagramConnection[]): DiagramStep[][] {
  const depth = new Map<string, number>();
  for (const s of steps) if (s.type === 'trigger') depth.set(s.key, 0);
  // Longest path by relaxation: at most one pass per step (a loop cannot push it further).
  for (let pass = 0; pass < steps.length; pass++) {
    let changed = false;
    for (const c of connections) {
      const from = depth.get(c.from);
      if (from === undefined || !steps.some((s) => s.key === c.to)) continue;
      if ((depth.get(c.to) ?? -1) < from + 1) {
        depth.set(c.to, from + 1);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const deepest = Math.max(0, ...depth.values());
  const out: DiagramStep[][] = [];
  for (const s of steps) {
    const d = depth.get(s.key) ?? deepest + 1; // unreached steps at the bottom
    (out[d] ??= []).push(s);
  }
  return out.filter(Boolean);
}

const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

export function Picture({
  steps,
  connections,
  stats,
}: {
  steps: DiagramStep[];
  connections: DiagramConnection[];
  stats?: Record<string, DiagramStats>;
}) {
  const rows = layers(steps, connections);
  const widest = Math.max(1, ...rows.map((r) => r.length));
  const width = widest * (W + GAP_X) + GAP_X;
  const height = rows.length * (H + GAP_Y) + GAP_Y / 2;
  const at = new Map<string, { x: number; y: number }>();
  rows.forEach((row, r) => {
    const offset = (width - row.length * (W + GAP_X) + GAP_X) / 2;
    row.forEach((s, i) => at.set(s.key, { x: offset + i * (W + GAP_X), y: GAP_Y / 2 + r * (H + GAP_Y) }));
  });
  const label = `Workflow picture: ${steps.length} steps in ${rows.length} levels, ${connections.length} connections`;
  return (
    <div class="picture-scroll">
      <svg class="picture" viewBox={`0 0 ${width} ${height}`} width={width} role="img" aria-label={label}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="#4a5568" />
          </marker>
        </defs>
        {connections.map((c) => {
          const a = at.get(c.from);
          const b = at.get(c.to);
          if (!a || !b) return null;
          const x1 = a.x + W / 2;
          const y1 = a.y + H;
          const x2 = b.x + W / 2;
          const y2 = b.y - 2;
          const mid = (y1 + y2) / 2;
          return (
            <g data-edge={`${c.from}>${c.to}`}>
              <path
                d={`M ${x1} ${y1} C ${x1} ${mid}, ${x2} ${mid}, ${x2} ${y2}`}
                fill="none"
                stroke="#4a5568"
                stroke-width="1.5"
                marker-end="url(#arrow)"
              />
              {c.branch && c.branch !== 'default' ? (
                <text x={(x1 + x2) / 2 + 4} y={mid + 4} font-size="11" fill="#1a202c">
                  {c.branch}
                </text>
              ) : null}
            </g>
          );
        })}
        {steps.map((s) => {
          const p = at.get(s.key);
          if (!p) return null;
          const visits = s.type === 'trigger' ? undefined : stats?.[s.key]?.total; // triggers start runs, they are not visited
          return (
            <g data-node={s.key}>
              <rect
                x={p.x}
                y={p.y}
                width={W}
                height={H}
                rx="8"
                fill={s.type === 'trigger' ? '#e8efff' : '#ffffff'}
                stroke={s.type === 'trigger' ? '#2457c5' : '#8a94a6'}
              />
              <text x={p.x + 10} y={p.y + 18} font-size="13" font-weight="600" fill="#1a202c">
                {clip(s.key || '?', 22)}
              </text>
              <text x={p.x + 10} y={p.y + 34} font-size="11" fill="#4a5568">
                {clip(s.type === 'trigger' ? (s.trigger ?? 'trigger') : (s.action ?? 'action'), 26)}
              </text>
              {visits !== undefined ? (
                <text x={p.x + 10} y={p.y + 49} font-size="11" fill="#1f5130">
                  {`${visits.toLocaleString()} ${visits === 1 ? 'run' : 'runs'}`}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
