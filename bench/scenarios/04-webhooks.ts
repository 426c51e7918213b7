// Webhook fan-out at volume: N `email.delivered` events emitted with emitEvent (in
// transactions of TX_SIZE events, by EMITTERS concurrent emitters yielding between them as
// delivery workers would) in a Postlane running roles api + worker, each event queued for 3 webhooks
// (created through the real HTTP API) that point at a plain node:http receiver on loopback.
// Measured from the first emission until the receiver holds every delivery: deliveries and
// events per second, and the lag from each event's created_at to its receipt (p50, p99).
// Postlane runs in this process (startPostlane from src/server.ts): emitting events at volume
// needs emitEvent, which only exists in-process; the receiver shares the same event loop.
// Then, to show which side limits the rate, the same work split in two: emission alone (an
// api-only Postlane queues the events), then a worker-only Postlane drains the backlog.
// Fresh SQLite file in a temporary DATA_DIR, or a fresh schema of BENCH_DATABASE_URL.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { pino } from 'pino';
import type { Scenario } from '../run.ts';
import { freshBenchDatabase, percentile } from '../lib.ts';
import { loadConfig } from '../../src/config.ts';
import { startPostlane, type RunningPostlane } from '../../src/server.ts';
import type { Role } from '../../src/resources/index.ts';
import { emitEvent, emitEvents } from '../../src/platform/events.ts';
import { commitAlone } from '../../src/platform/db/group-commit.ts';
import type { Db } from '../../src/platform/db/database.ts';
import { nowIso, nowMs } from '../../src/platform/clock.ts';
import { newId } from '../../src/platform/ids.ts';
import { createWorkspace } from '../../src/resources/workspaces/service.ts';

const COUNT = Number(process.env.BENCH_WEBHOOKS_COUNT ?? 20_000);
const TX_SIZE = Number(process.env.BENCH_WEBHOOKS_TX_SIZE ?? 25);
// Events come from delivery outcomes, written by several workers at once.
const EMITTERS = Number(process.env.BENCH_WEBHOOKS_EMITTERS ?? 4);
// How the live run emits a transaction's events: one emitEvents call (batch) or one emitEvent call each.
const EMIT_MODE: 'batch' | 'each' = process.env.BENCH_WEBHOOKS_EMIT === 'each' ? 'each' : 'batch';
const TIMEOUT_MS = Number(process.env.BENCH_WEBHOOKS_TIMEOUT_MS ?? 120_000);
const HOOKS = 3;
const WARMUP = 500;
const AIM_EVENTS_PER_SECOND = 5000;
const AIM_P99_MS = 5000;

/** Receipt times per webhook (path /hook/<n>) and event id; duplicates counted, not kept. */
interface Receiver {
  url: string;
  received: Array<Map<string, number>>;
  duplicates: number[];
  requests: number[];
  maxBatch(): number;
  failures: string[];
  /** Resolves when every hook holds `ids` (or after `timeoutMs`); false on timeout. */
  waitFor(ids: string[], timeoutMs: number): Promise<boolean>;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const state = {
    received: Array.from({ length: HOOKS }, () => new Map<string, number>()),
    duplicates: new Array(HOOKS).fill(0),
    requests: new Array(HOOKS).fill(0),
    maxBatch: 0,
    failures: [] as string[],
  };
  let check: (() => void) | null = null;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = nowMs();
      const hook = Number(/^\/hook\/(\d+)$/.exec(request.url ?? '')?.[1] ?? NaN);
      try {
        if (!(hook >= 0 && hook < HOOKS)) throw new Error(`unexpected path ${request.url}`);
        if (!request.headers['x-emailit-signature']) throw new Error('unsigned request');
        const items = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ event_id: string }>;
        state.requests[hook]++;
        state.maxBatch = Math.max(state.maxBatch, items.length);
        const seen = state.received[hook];
        for (const item of items) {
          if (seen.has(item.event_id)) state.duplicates[hook]++;
          else seen.set(item.event_id, at);
        }
      } catch (error) {
        if (state.failures.length < 5) state.failures.push((error as Error).message);
      }
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
      check?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received: state.received,
    duplicates: state.duplicates,
    requests: state.requests,
    failures: state.failures,
    maxBatch: () => state.maxBatch,
    waitFor(ids, timeoutMs) {
      const complete = () => state.received.every((seen) => ids.every((id) => seen.has(id)));
      // Cheap test first (sizes), full test only once the sizes allow it.
      const maybeComplete = () => state.received.every((seen) => seen.size >= ids.length) && complete();
      if (maybeComplete()) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          check = null;
          resolve(false);
        }, timeoutMs);
        check = () => {
          if (!maybeComplete()) return;
          clearTimeout(timer);
          check = null;
          resolve(true);
        };
      });
    },
    reset() {
      for (const seen of state.received) seen.clear();
      state.duplicates.fill(0);
      state.requests.fill(0);
      state.maxBatch = 0;
      state.failures.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The objects of `count` email.delivered events, built before any clock starts. */
function deliveredObjects(count: number): Array<Record<string, unknown>> {
  const now = nowIso();
  return Array.from({ length: count }, (_, i) => ({
    id: newId('em'),
    object: 'email',
    from: 'Bench <hello@bench.test>',
    to: `user${i}@example.org`,
    subject: `Your order #${100_000 + i} has shipped`,
    status: 'delivered',
    meta: { order: String(100_000 + i) },
    updated_at: now,
    created_at: now,
  }));
}

/**
 * Emits the objects in transactions of TX_SIZE from EMITTERS concurrent emitters (each one
 * transaction at a time, yielding between them, like the outcome writers of that many delivery
 * workers, and begun as theirs are: commitAlone): each transaction's events with one
 * emitEvents call (`batch`, as a group commit of outcomes would), or with one emitEvent call
 * each (`each`). The event ids with their created_at (epoch ms).
 */
async function emitAll(
  db: Db,
  workspaceId: string,
  objects: Array<Record<string, unknown>>,
  mode: 'batch' | 'each',
): Promise<Map<string, number>> {
  const emitted = new Map<string, number>();
  let next = 0;
  const emitter = async () => {
    while (next < objects.length) {
      const start = next;
      next += TX_SIZE;
      const items = objects.slice(start, start + TX_SIZE).map((object) => ({ workspaceId, type: 'email.delivered', object }));
      const events = await commitAlone(db, async (tx) => {
        if (mode === 'batch') return emitEvents(tx, items);
        const batch = [];
        for (const item of items) batch.push(await emitEvent(tx, item.workspaceId, item.type, item.object));
        return batch;
      });
      for (const event of events) emitted.set(event.id, Date.parse(event.createdAt) + Number(event.createdAt.slice(23, 26)) / 1000);
      await yieldToLoop(); // let the dispatcher (and the receiver) run between transactions
    }
  };
  await Promise.all(Array.from({ length: EMITTERS }, emitter));
  return emitted;
}

/** CPU milliseconds (user + system) this process used since `since`. */
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

interface Instance {
  running: RunningPostlane;
  workspaceId: string;
  /** Starts another Postlane on the same database (the split measurement's worker). */
  startAnother(roles: Role[]): Promise<RunningPostlane>;
  close(): Promise<void>;
}

/** Postlane on a fresh database with a Pro workspace and HOOKS webhooks (created over HTTP) to `receiver`. */
async function startInstance(receiver: Receiver, roles: Role[]): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-bench-webhooks-'));
  const others: RunningPostlane[] = [];
  let database: Awaited<ReturnType<typeof freshBenchDatabase>> | null = null;
  let running: RunningPostlane | null = null;
  const close = async () => {
    for (const other of others) await other.close();
    await running?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    database = await freshBenchDatabase(dataDir);
    const config = loadConfig({
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      SMTP_SUBMISSION_PORT: '0',
      SMTP_INBOUND_PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
    });
    const start = (r: Role[]) => startPostlane(config, { roles: r, schema: database!.schema, logger: pino({ level: 'warn' }) });
    running = await start(roles);
    const { workspace, apiKey } = await createWorkspace(running.ctx.db, {
      name: 'bench-webhooks',
      plan: 'pro',
      credits: 1000,
      verified: true,
    });
    for (let n = 0; n < HOOKS; n++) {
      const response = await fetch(`${running.url}/v2/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bench-${n}`, url: `${receiver.url}/hook/${n}`, all_events: true }),
      });
      if (response.status !== 201) throw new Error(`POST /v2/webhooks: ${response.status} ${await response.text()}`);
    }
    return {
      running,
      workspaceId: workspace.id,
      async startAnother(r) {
        const other = await start(r);
        others.push(other);
        return other;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Completeness and uniqueness of what the receiver holds for `emitted`, and the lags. */
function tally(receiver: Receiver, emitted: Map<string, number>) {
  const lags: number[] = [];
  let missing = 0;
  let unexpected = 0;
  let last = 0;
  for (const seen of receiver.received) {
    for (const [id, createdAt] of emitted) {
      const at = seen.get(id);
      if (at === undefined) missing++;
      else {
        lags.push(at - createdAt);
        last = Math.max(last, at);
      }
    }
    for (const id of seen.keys()) if (!emitted.has(id)) unexpected++;
  }
  lags.sort((a, b) => a - b);
  const duplicates = receiver.duplicates.reduce((a, b) => a + b, 0);
  const requests = receiver.requests.reduce((a, b) => a + b, 0);
  const exact = missing === 0 && duplicates === 0 && unexpected === 0 && receiver.failures.length === 0;
  const check = `${exact ? 'OK' : 'FAILED'}: every event received exactly once by every webhook (missing ${missing}, duplicates ${duplicates}, unexpected ${unexpected}, per webhook ${receiver.received.map((seen) => seen.size).join('/')}${receiver.failures.length ? `, receiver errors: ${receiver.failures.join('; ')}` : ''})`;
  const batches = `${requests} requests, ${(lags.length / Math.max(1, requests)).toFixed(1)} events each on average, largest ${receiver.maxBatch()}`;
  return { lags, deliveries: lags.length, last, check, batches };
}

/**
 * The issue's measurement: emission and delivery at the same time in one process (api +
 * worker), from the first emission until the last receipt; lag = receipt − created_at.
 */
async function live(receiver: Receiver): Promise<string[]> {
  const instance = await startInstance(receiver, ['api', 'worker']);
  try {
    const db = instance.running.ctx.db;
    // Warm-up (JIT, statement caches, keep-alive connections), then the measured run.
    const warm = await emitAll(db, instance.workspaceId, deliveredObjects(WARMUP), EMIT_MODE);
    if (!(await receiver.waitFor([...warm.keys()], 30_000))) throw new Error('warm-up deliveries did not arrive within 30 s');
    receiver.reset();

    const objects = deliveredObjects(COUNT);
    const cpu = process.cpuUsage();
    const started = nowMs();
    const emitted = await emitAll(db, instance.workspaceId, objects, EMIT_MODE);
    const emitMs = nowMs() - started;
    const complete = await receiver.waitFor([...emitted.keys()], Math.max(1000, TIMEOUT_MS - emitMs));
    const cpuUsed = cpuMs(cpu);
    const { lags, deliveries, last, check, batches } = tally(receiver, emitted);
    const elapsedMs = (complete ? last : nowMs()) - started;
    const eventsPerSecond = (deliveries / HOOKS / elapsedMs) * 1000;
    const p99 = percentile(lags, 99);
    return [
      `emitted ${COUNT} events in ${Math.ceil(COUNT / TX_SIZE)} transactions of ${TX_SIZE} by ${EMITTERS} concurrent emitters, ${EMIT_MODE === 'batch' ? 'one emitEvents call each' : 'one emitEvent call per event'}, in ${(emitMs / 1000).toFixed(1)} s (${((COUNT / emitMs) * 1000).toFixed(0)} events/s emitted while delivering)`,
      `delivered ${deliveries}/${COUNT * HOOKS} in ${(elapsedMs / 1000).toFixed(1)} s from the first emission: ${((deliveries / elapsedMs) * 1000).toFixed(0)} deliveries/s = ${eventsPerSecond.toFixed(0)} events/s to each of ${HOOKS} webhooks${complete ? '' : `   TIMED OUT after ${TIMEOUT_MS / 1000} s`}`,
      `lag from created_at to receipt: p50 ${percentile(lags, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${lags.length ? lags[lags.length - 1].toFixed(0) : 'NaN'} ms   (${batches})`,
      `process CPU ${((cpuUsed * 1000) / COUNT).toFixed(0)} µs per event (emission + fan-out + delivery + this receiver), ${((cpuUsed / elapsedMs) * 100).toFixed(0)}% of one core over the run`,
      `check ${check}`,
      `aims: ${eventsPerSecond.toFixed(0)} events/s >= ${AIM_EVENTS_PER_SECOND}: ${eventsPerSecond >= AIM_EVENTS_PER_SECOND ? 'met' : 'NOT met'}; p99 lag ${(p99 / 1000).toFixed(2)} s < ${AIM_P99_MS / 1000} s: ${p99 < AIM_P99_MS ? 'met' : 'NOT met'}`,
    ];
  } finally {
    await instance.close();
  }
}

/**
 * Where the time goes: the same events emitted by an api-only Postlane (queued, nothing
 * delivered), then a worker-only Postlane started on the same database drains the backlog.
 */
async function split(receiver: Receiver): Promise<string[]> {
  const instance = await startInstance(receiver, ['api']);
  try {
    const db = instance.running.ctx.db;
    // Half the events with one emitEvent call each, half with one emitEvents call per transaction.
    const objects = deliveredObjects(COUNT);
    const half = Math.floor(COUNT / 2);
    const emission = [];
    const emitted = new Map<string, number>();
    for (const [mode, part] of [
      ['each', objects.slice(0, half)],
      ['batch', objects.slice(half)],
    ] as const) {
      const cpu = process.cpuUsage();
      const started = nowMs();
      for (const [id, at] of await emitAll(db, instance.workspaceId, part, mode)) emitted.set(id, at);
      emission.push({ mode, rate: (part.length / (nowMs() - started)) * 1000, cpuPerEvent: (cpuMs(cpu) * 1000) / part.length });
    }
    receiver.reset();
    const cpu = process.cpuUsage();
    const started = nowMs();
    await instance.startAnother(['worker']);
    const complete = await receiver.waitFor([...emitted.keys()], TIMEOUT_MS);
    const drainCpu = cpuMs(cpu);
    const { deliveries, last, check, batches } = tally(receiver, emitted);
    const drainMs = (complete ? last : nowMs()) - started;
    return [
      ...emission.map(
        (e) =>
          `split, emission alone (api role, events queued for ${HOOKS} webhooks), ${e.mode === 'each' ? 'one emitEvent call per event' : 'one emitEvents call per transaction'}: ${e.rate.toFixed(0)} events/s, CPU ${e.cpuPerEvent.toFixed(0)} µs per event`,
      ),
      `split, backlog drained by a worker-role Postlane: ${((deliveries / HOOKS / drainMs) * 1000).toFixed(0)} events/s to each webhook (${deliveries}/${COUNT * HOOKS} in ${(drainMs / 1000).toFixed(1)} s, start-up included), CPU ${((drainCpu * 1000) / COUNT).toFixed(0)} µs per event incl. this receiver${complete ? '' : '   TIMED OUT'}   (${batches}); check ${check}`,
    ];
  } finally {
    await instance.close();
  }
}

export const scenario: Scenario = {
  name: 'webhooks',
  description: `${COUNT.toLocaleString('en')} email.delivered events (transactions of ${TX_SIZE} events emitted ${EMIT_MODE === 'batch' ? 'together' : 'one by one'}, ${EMITTERS} concurrent emitters) fanned out to ${HOOKS} webhooks on a loopback receiver; Postlane api+worker runs in the bench process (emitEvent at volume needs it in-process) on ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, receiver in the same process (aims: >= ${AIM_EVENTS_PER_SECOND.toLocaleString('en')} events/s delivered, p99 lag < ${AIM_P99_MS / 1000} s)`,
  async run() {
    const receiver = await startReceiver();
    try {
      const lines = await live(receiver);
      receiver.reset();
      lines.push(...(await split(receiver)));
      return { name: this.name, lines };
    } finally {
      await receiver.close();
    }
  },
};
