// The builder's canvas (React Flow on Preact's compatibility layer, loaded only on an automation's
// page): the steps laid out in levels from the trigger, each connection an arrow labelled with its
// branch. Dragging from a step's handle to another step connects them; a selected arrow is removed
// with Backspace or Delete; choosing a step opens its form in the list below. Layout is computed,
// not dragged: the list below stays the one place a step is configured.
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  useReactFlow,
  useStore,
  type Edge,
  type Node,
  type NodeProps,
} from '@xyflow/react';
import { useEffect } from 'preact/hooks';
import type { Graph } from './graph-edit';

export interface CanvasProps {
  graph: Graph;
  /** Branch names of a step's outgoing handles ([] for an end step). */
  branchesOf: (key: string) => string[];
  titleOf: (key: string) => string;
  invalid: (key: string) => boolean;
  onConnect: (from: string, branch: string, to: string) => void;
  onDisconnect: (from: string, branch: string) => void;
  onChoose: (key: string) => void;
}

type StepData = { key: string; title: string; trigger: boolean; branches: string[]; invalid: boolean };

function StepNode({ data }: NodeProps<Node<StepData>>) {
  return (
    <div class={`fb-node${data.invalid ? ' fb-node-invalid' : ''}`}>
      {data.trigger ? null : <Handle type="target" position={Position.Top} />}
      <strong>{data.title}</strong>
      <code>{data.key}</code>
      {data.branches.map((branch, i) => (
        <Handle
          key={branch}
          id={branch}
          type="source"
          position={Position.Bottom}
          style={{ left: `${((i + 1) / (data.branches.length + 1)) * 100}%` }}
          title={branch === 'default' ? 'Next step' : branch}
        />
      ))}
    </div>
  );
}
const nodeTypes = { step: StepNode };

/** Fits the steps to the frame again when the frame changes size (a phone turned, a window resized). */
function FitOnResize() {
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  const flow = useReactFlow();
  useEffect(() => {
    if (width > 0 && height > 0) void flow.fitView({ maxZoom: 1.2 });
  }, [width, height]);
  return null;
}

/** Each step's level: the longest way to it from a trigger (the graph has no loops). */
function levels(graph: Graph): Map<string, number> {
  const level = new Map<string, number>();
  for (const s of graph.steps) if (s.type === 'trigger') level.set(s.key, 0);
  for (let round = 0; round < graph.steps.length; round++) {
    let changed = false;
    for (const c of graph.connections) {
      const from = level.get(c.from);
      if (from !== undefined && (level.get(c.to) ?? -1) < from + 1) {
        level.set(c.to, from + 1);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const deepest = Math.max(0, ...level.values());
  for (const s of graph.steps) if (!level.has(s.key)) level.set(s.key, deepest + 1);
  return level;
}

export function Canvas({ graph, branchesOf, titleOf, invalid, onConnect, onDisconnect, onChoose }: CanvasProps) {
  const level = levels(graph);
  const rows = new Map<number, string[]>();
  for (const s of graph.steps) rows.set(level.get(s.key)!, [...(rows.get(level.get(s.key)!) ?? []), s.key]);
  const nodes: Node<StepData>[] = graph.steps.map((s) => {
    const row = rows.get(level.get(s.key)!)!;
    const i = row.indexOf(s.key);
    return {
      id: s.key,
      type: 'step',
      position: { x: (i - (row.length - 1) / 2) * 230, y: level.get(s.key)! * 120 },
      data: { key: s.key, title: titleOf(s.key), trigger: s.type === 'trigger', branches: branchesOf(s.key), invalid: invalid(s.key) },
      ariaLabel: `Step ${s.key}: ${titleOf(s.key)}`,
      draggable: false,
      connectable: true,
    };
  });
  const edges: Edge[] = graph.connections.map((c) => {
    const branch = c.branch ?? 'default';
    return {
      id: `${c.from}>${c.to}:${branch}`,
      source: c.from,
      target: c.to,
      sourceHandle: branchesOf(c.from).includes(branch) ? branch : null,
      label: branch === 'default' ? undefined : branch,
      markerEnd: { type: MarkerType.ArrowClosed },
      ariaLabel: `From ${c.from} to ${c.to}${branch === 'default' ? '' : ` if ${branch}`}`,
    };
  });
  return (
    <div class="fb-canvas">
      <ReactFlow
        // Laid out again and fitted to the frame whenever a step or a connection comes or goes.
        key={JSON.stringify([graph.steps.map((s) => s.key), graph.connections])}
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        fitView
        minZoom={0.3}
        maxZoom={1.2}
        nodesDraggable={false}
        deleteKeyCode={['Backspace', 'Delete']}
        onNodesDelete={() => undefined}
        onBeforeDelete={async ({ nodes: n, edges: e }) => n.length === 0 && e.length > 0}
        onEdgesDelete={(deleted) => deleted.forEach((e) => onDisconnect(e.source, e.sourceHandle ?? 'default'))}
        onConnect={(c) => c.source && c.target && onConnect(c.source, c.sourceHandle ?? 'default', c.target)}
        onNodeClick={(_, node) => onChoose(node.id)}
        proOptions={{ hideAttribution: true }}
      >
        <FitOnResize />
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
