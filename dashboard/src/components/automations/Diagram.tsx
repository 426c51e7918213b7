// An automation's graph drawn as a flow: steps in the order a run meets them (breadth first from
// the triggers), each a card with what it is, where it leads (with the branch), the problems
// found at its field paths, and, when given, its statistics. Plain lists, so it reads aloud too.
import '../campaigns/bars.css';

export interface DiagramStep {
  key: string;
  type: string;
  trigger?: string | null;
  action?: string | null;
  config?: Record<string, unknown> | null;
}
export interface DiagramConnection {
  from: string;
  to: string;
  branch?: string | null;
}
export interface DiagramStats {
  total: number;
  by_status: Record<string, number>;
  by_outcome: Record<string, number>;
}

/** Steps ordered as runs meet them (unreached ones last, in their given order). */
export function flowOrder(steps: DiagramStep[], connections: DiagramConnection[]): number[] {
  const index = new Map(steps.map((s, i) => [s.key, i]));
  const seen = new Set<number>();
  const queue = steps.map((s, i) => (s.type === 'trigger' ? i : -1)).filter((i) => i >= 0);
  const order: number[] = [];
  while (queue.length) {
    const i = queue.shift()!;
    if (seen.has(i)) continue;
    seen.add(i);
    order.push(i);
    for (const c of connections) if (c.from === steps[i].key && index.has(c.to)) queue.push(index.get(c.to)!);
  }
  steps.forEach((_s, i) => (seen.has(i) ? null : order.push(i)));
  return order;
}

function summary(step: DiagramStep): string {
  const c = step.config ?? {};
  const parts: string[] = [];
  for (const key of ['audience_id', 'template_id', 'to', 'from', 'seconds', 'url', 'automation_id', 'date_field']) {
    if (c[key] !== undefined && c[key] !== null && typeof c[key] !== 'object') parts.push(`${key} ${String(c[key])}`);
  }
  if (c.filter) parts.push('with a filter');
  if (Array.isArray(c.variants)) parts.push(`variants ${(c.variants as Array<{ key?: string }>).map((v) => v?.key).join(', ')}`);
  return parts.join(' · ');
}

export function Diagram({
  steps,
  connections,
  problems,
  stats,
}: {
  steps: DiagramStep[];
  connections: DiagramConnection[];
  /** Problems by field path (`steps.2.config.from`, `connections.1.to`, …). */
  problems?: Record<string, string[]>;
  stats?: Record<string, DiagramStats>;
}) {
  const order = flowOrder(steps, connections);
  const stepProblems = (i: number) =>
    Object.entries(problems ?? {}).filter(([path]) => path === `steps.${i}` || path.startsWith(`steps.${i}.`));
  const connectionProblems = (c: DiagramConnection) => {
    const i = connections.indexOf(c);
    return Object.entries(problems ?? {}).filter(([path]) => path === `connections.${i}` || path.startsWith(`connections.${i}.`));
  };
  return (
    <ol class="flow" aria-label="Workflow diagram">
      {order.map((i) => {
        const step = steps[i];
        const out = connections.filter((c) => c.from === step.key);
        const s = stats?.[step.key];
        const mine = stepProblems(i);
        return (
          <li class="flow-step" data-step={step.key}>
            <div>
              <strong>{step.key || `(step ${i + 1})`}</strong>{' '}
              <span class="muted flow-kind">
                {step.type === 'trigger' ? `trigger: ${step.trigger ?? '?'}` : `action: ${step.action ?? '?'}`}
              </span>
            </div>
            {summary(step) ? <div class="small-text">{summary(step)}</div> : null}
            {s ? (
              <div class="small-text flow-stats">
                {s.total.toLocaleString()} visits
                {Object.entries(s.by_status)
                  .filter(([, n]) => n > 0)
                  .map(([status, n]) => ` · ${n} ${status}`)
                  .join('')}
              </div>
            ) : null}
            {mine.length > 0 ? (
              <ul class="problems">
                {mine.map(([path, messages]) => (
                  <li>
                    <code>{path}</code>: {messages.join(' ')}
                  </li>
                ))}
              </ul>
            ) : null}
            {out.length > 0 ? (
              <ul class="plain-list flow-next">
                {out.map((c) => (
                  <li>
                    → {c.to}
                    {c.branch && c.branch !== 'default' ? <span class="muted"> (if {c.branch})</span> : null}
                    {connectionProblems(c).map(([path, messages]) => (
                      <span class="problems">
                        {' '}
                        <code>{path}</code>: {messages.join(' ')}
                      </span>
                    ))}
                  </li>
                ))}
              </ul>
            ) : step.type === 'action' ? (
              <div class="small-text muted flow-next">the run ends here</div>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}
