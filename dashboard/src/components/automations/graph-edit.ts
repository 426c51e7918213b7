// Edits of an automation graph as the builder makes them: add a step after another (on a branch),
// connect to an existing step, rename, remove (joining its one way in to its one way out). Pure
// functions over plain steps and connections, so the builder and the JSON tab share one value.

export interface Step {
  key: string;
  type: 'trigger' | 'action';
  trigger?: string;
  action?: string;
  config?: Record<string, unknown>;
}
export interface Connection {
  from: string;
  to: string;
  branch?: string;
}
export interface Graph {
  steps: Step[];
  connections: Connection[];
}

const branchOf = (c: Connection) => c.branch ?? 'default';

/** A key not yet taken, from the type's name (`send_email`, `send_email_2`, …). */
export function freshKey(graph: Graph, base: string): string {
  const taken = new Set(graph.steps.map((s) => s.key));
  const stem = base.replace(/[^a-z0-9_]/gi, '_');
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n++) if (!taken.has(`${stem}_${n}`)) return `${stem}_${n}`;
}

/** The connection leaving `from` by `branch`, if any. */
export function outgoing(graph: Graph, from: string, branch: string): Connection | undefined {
  return graph.connections.find((c) => c.from === from && branchOf(c) === branch);
}

/** Adds `step`; when `after` is given, connects it there (by `branch`), in front of what followed. */
export function addStep(graph: Graph, step: Step, after?: { from: string; branch: string }): Graph {
  const steps = [...graph.steps, step];
  let connections = graph.connections;
  if (after) {
    const next = outgoing(graph, after.from, after.branch);
    const edge: Connection =
      after.branch === 'default' ? { from: after.from, to: step.key } : { from: after.from, to: step.key, branch: after.branch };
    connections = connections.filter((c) => c !== next).concat(edge);
    // What followed now follows the new step (unless the new step ends runs).
    if (next && step.action !== 'end') connections = connections.concat({ from: step.key, to: next.to });
  }
  return { steps, connections };
}

/** Connects `from` (by `branch`) to an existing step, replacing what that branch led to. */
export function connect(graph: Graph, from: string, branch: string, to: string): Graph {
  const connections = graph.connections.filter((c) => !(c.from === from && branchOf(c) === branch));
  return { ...graph, connections: connections.concat(branch === 'default' ? { from, to } : { from, to, branch }) };
}

export function disconnect(graph: Graph, from: string, branch: string): Graph {
  return { ...graph, connections: graph.connections.filter((c) => !(c.from === from && branchOf(c) === branch)) };
}

/** Removes a step; a step with one way in and one way out is bridged so the flow stays whole. */
export function removeStep(graph: Graph, key: string): Graph {
  const into = graph.connections.filter((c) => c.to === key);
  const out = graph.connections.filter((c) => c.from === key);
  let connections = graph.connections.filter((c) => c.from !== key && c.to !== key);
  if (into.length === 1 && out.length === 1) connections = connections.concat({ ...into[0], to: out[0].to });
  return { steps: graph.steps.filter((s) => s.key !== key), connections };
}

export function renameStep(graph: Graph, from: string, to: string): Graph {
  return {
    steps: graph.steps.map((s) => (s.key === from ? { ...s, key: to } : s)),
    connections: graph.connections.map((c) => ({ ...c, from: c.from === from ? to : c.from, to: c.to === from ? to : c.to })),
  };
}

export function setConfig(graph: Graph, key: string, config: Record<string, unknown>): Graph {
  return { ...graph, steps: graph.steps.map((s) => (s.key === key ? { ...s, config } : s)) };
}
