// Scaling out on PostgreSQL (docs/performance.md, "scale"; docs/deploying.md, "Scaling"): the
// same N single-recipient sends (each with an Idempotency-Key) posted through the API to a
// loopback MTA, in three layouts:
// - A: one process with every role (`postlane serve`);
// - B: two API processes (--role api, their own HTTP ports) and two worker processes
//   (--role worker), all on one database, the sends split across the two APIs;
// - B under fire: B again while one worker is SIGKILLed mid-run and restarted, and PostgreSQL is
//   restarted once. The restart needs a server of our own: a private throwaway cluster
//   (test/helpers/private-postgres.ts, as `chaos-pg-restart`), never the shared one that
//   BENCH_DATABASE_URL names, which other processes use.
// Measured: accepted per second, delivered per second end to end, CPU of the Postlane processes
// and of the PostgreSQL backends serving the bench database (from /proc), and the transactions
// PostgreSQL committed (pg_stat_database). Checked: every send delivered exactly once (by
// recipient, each send has its own, and by Message-ID at the MTA) and stored once.
// All processes share one machine: the layouts compete for the same cores, so B is not expected
// to be faster here; what it shows is the cost per message and that nothing is lost or doubled.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Scenario } from '../run.ts';
import {
  freePort,
  keepAliveClient,
  postlanePid,
  startChild,
  startPostlane,
  stopChildProcess,
  treeCpuSeconds,
  type ChildServer,
} from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { startStallingMta, type StallingMta } from '../../test/helpers/stalling-mta.ts';
import { startPrivatePostgres } from '../../test/helpers/private-postgres.ts';

const COUNT = Number(process.env.BENCH_SCALE_EMAILS ?? 4_000);
/** Longest a layout may take to deliver everything (a killed worker's jobs wait out their lease). */
const TIMEOUT_MS = Number(process.env.BENCH_SCALE_TIMEOUT_MS ?? 300_000);
const WARMUP = 50;
const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');
const TEXT = `Hello from the scale benchmark\n\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12)}\n`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Dns = Awaited<ReturnType<typeof startDnsServer>>;

/** CPU seconds (user + system) of one process, from /proc/PID/stat; null once it is gone. */
function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * The CPU the PostgreSQL backends serving one database used: their pids from pg_stat_activity,
 * sampled twice a second (a backend that exits keeps what it had used at its last sample; one
 * that appears mid-run counts from zero). The server's own background processes (WAL writer,
 * checkpointer) are not counted: on a shared server they work for every database.
 */
function watchBackends(url: string) {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let stopped = false;
  let started = false;
  const sample = async () => {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()",
      );
      for (const { pid } of rows) {
        const cpu = processCpuSeconds(pid);
        if (cpu === null) continue;
        if (!first.has(pid)) first.set(pid, started ? 0 : cpu);
        last.set(pid, cpu);
      }
    } catch {
      // the server is restarting: the next sample catches up
    } finally {
      await client.end().catch(() => {});
    }
  };
  const loop = (async () => {
    await sample();
    started = true;
    while (!stopped) {
      await sleep(500);
      await sample();
    }
  })();
  return {
    ready: sample,
    async stop(): Promise<number> {
      stopped = true;
      await loop;
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? 0);
      return total;
    },
  };
}

/** Transactions committed in the database so far (pg_stat_database, flushed about once a second). */
async function commits(url: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query<{ n: string }>(
        'select xact_commit as n from pg_stat_database where datname = current_database()',
      );
      return Number(rows[0].n);
    } catch (error) {
      if (attempt > 50) throw error;
      await sleep(200);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** A `postlane serve --role worker` process: it listens on nothing, so it is taken as ready once
 *  it has run a moment without exiting. HTTP_PORT only tells it apart in /proc. */
async function startWorker(env: Record<string, string>): Promise<{ process: ChildProcess; output(): string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--role', 'worker'], {
    env: { ...process.env, ...env, HTTP_PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await sleep(2000);
  if (child.exitCode !== null) throw new Error(`worker exited at start:\n${output}`);
  return {
    process: child,
    output: () => output,
    stop: () => stopChildProcess(child),
  };
}

interface LayoutResult {
  label: string;
  processes: string;
  acceptedPerSecond: number;
  deliveredPerSecond: number;
  acceptSeconds: number;
  totalSeconds: number;
  postlaneCpuMsPerMessage: number;
  /** The same split: API processes (or the one process) and worker processes. */
  apiCpuMsPerMessage: number;
  workerCpuMsPerMessage: number;
  postgresCpuMsPerMessage: number;
  commitsPerMessage: number;
  delivered: number;
  deliveredTwice: number;
  missing: number;
  stored: number;
  clientRetries: number;
  /** Under fire: what happened, and when. */
  events: string[];
  /** Under fire: from the end of the last disruption until the MTA had every email (sends may
   *  still have been arriving meanwhile: compare with the time after the last accept). */
  drainSeconds?: number;
}

interface FireOptions {
  /** Kill worker 0 once this share of the sends has reached the MTA, then restart it. */
  killAt: number;
  /** Restart PostgreSQL once this share has reached the MTA. */
  restartAt: number;
  restartDatabase(): Promise<void>;
}

async function runLayout(
  label: string,
  layout: 'A' | 'B',
  dns: Dns,
  mta: StallingMta,
  connections: number,
  fire?: FireOptions,
): Promise<LayoutResult> {
  const sinkEnv = { DNS_SERVERS: dns.address, MX_PORT: String(mta.port), MAIL_HOSTNAME: 'mail.bench.test' };
  const first = await startPostlane(sinkEnv, layout === 'A' ? 'all' : 'api');
  const apis: ChildServer[] = [first];
  let clients: Array<ReturnType<typeof keepAliveClient>> = [];
  const workers: Array<Awaited<ReturnType<typeof startWorker>>> = [];
  const killedCpu: number[] = [];
  const workerPids = new Set<number>();
  try {
    const headers = { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' };
    const workspace = JSON.parse(first.cli('workspace', 'list', '--json'))[0];
    first.cli('workspace', 'update', workspace.id, '--send-rate', '1000000', '--daily-limit', '1000000000', '--credits', '1000000000');
    const created = await (
      await fetch(`${first.url}/v2/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench.test' }) })
    ).json();
    for (const record of created.dns_records as Array<{ type: string; name: string; value: string; priority: number | null }>) {
      if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
      else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
      else dns.set(record.name, 'TXT', [record.value]);
    }
    const verified = await (await fetch(`${first.url}/v2/domains/${created.id}/verify`, { method: 'POST', headers })).json();
    if (!verified.verified_at) throw new Error(`domain not verified: ${JSON.stringify(verified)}`);
    if (layout === 'B') {
      const port = await freePort();
      apis.push(
        await startChild(
          MAIN,
          ['serve', '--role', 'api'],
          { ...process.env, ...first.env, HTTP_PORT: String(port) } as Record<string, string>,
          port,
          '/healthz',
        ),
      );
      for (let w = 0; w < 2; w++) workers.push(await startWorker(first.env));
    }
    clients = apis.map((api) => keepAliveClient(api.url, connections));
    let retries = 0;
    /** One send with its Idempotency-Key, retried (same key) until answered 200, as a client should. */
    const send = (run: string) => async (i: number) => {
      const body = JSON.stringify({
        from: 'Bench <hello@bench.test>',
        to: `user${i}.${run}@example.org`,
        subject: `Scale ${run} #${i}`,
        text: TEXT,
      });
      for (let attempt = 0; ; attempt++) {
        const client = clients[(i + attempt) % clients.length];
        try {
          const response = await client.request('POST', '/v2/emails', { ...headers, 'idempotency-key': `${run}-${i}` }, body);
          if (response.status === 200) return;
          if (![409, 429, 500, 503].includes(response.status) || attempt > 500)
            throw new Error(`POST /v2/emails: ${response.status} ${response.text}`);
        } catch (error) {
          if ((error as Error).message.startsWith('POST') || attempt > 500) throw error;
        }
        retries++;
        await sleep(50 + Math.random() * 100);
      }
    };
    const pool = async (count: number, task: (i: number) => Promise<void>) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (next < count) await task(next++);
        }),
      );
    };
    const waitFor = async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (mta.accepted.length < count && Date.now() < deadline) await sleep(20);
      return mta.accepted.length >= count;
    };

    // Warm-up: the JIT and the connection pools, outside the measurement.
    mta.accepted.length = 0;
    await pool(WARMUP, send('warmup'));
    if (!(await waitFor(WARMUP, 60_000))) throw new Error('warm-up not delivered');
    await sleep(500);
    mta.accepted.length = 0;

    const databaseUrl = first.env.DATABASE_URL;
    const postlanePids = (): number[] => [...apis.map((api) => postlanePid(new URL(api.url).port)), ...workers.map((w) => w.process.pid!)];
    const cpuBefore = new Map(postlanePids().map((pid) => [pid, treeCpuSeconds(pid)]));
    const backends = watchBackends(databaseUrl);
    await backends.ready();
    const commitsBefore = await commits(databaseUrl);
    const start = performance.now();

    const events: string[] = [];
    let lastDisruption = 0;
    const chaos = fire
      ? (async () => {
          await waitFor(Math.floor(COUNT * fire.killAt), TIMEOUT_MS);
          // As `chaos` does: the MTA holds its next replies, and the worker is killed once it has
          // read every 250 sent so far (most likely before their batched commit); the journal
          // must keep those from being sent again. The other worker's held replies are sent on.
          mta.hold();
          const read = await mta.repliesRead(2000);
          const victim = workers[0];
          killedCpu.push(treeCpuSeconds(victim.process.pid!) - (cpuBefore.get(victim.process.pid!) ?? 0));
          victim.process.kill('SIGKILL');
          await new Promise((r) =>
            victim.process.exitCode !== null || victim.process.signalCode ? r(null) : victim.process.once('exit', r),
          );
          await sleep(300); // the MTA sees the killed connections close: their held replies are dropped
          mta.release();
          events.push(
            `worker SIGKILLed at ${mta.accepted.length} delivered (${read ? 'after it read every 250' : '250s maybe unread'}) at ${((performance.now() - start) / 1000).toFixed(1)} s`,
          );
          workers[0] = await startWorker(first.env);
          cpuBefore.set(workers[0].process.pid!, treeCpuSeconds(workers[0].process.pid!));
          lastDisruption = performance.now();
          await waitFor(Math.floor(COUNT * fire.restartAt), TIMEOUT_MS);
          const restarting = performance.now();
          await fire.restartDatabase();
          lastDisruption = performance.now();
          events.push(
            `PostgreSQL restarted at ${mta.accepted.length} delivered, at ${((restarting - start) / 1000).toFixed(1)} s (down ${((lastDisruption - restarting) / 1000).toFixed(1)} s)`,
          );
        })()
      : Promise.resolve();

    await pool(COUNT, send('run'));
    const acceptSeconds = (performance.now() - start) / 1000;
    await chaos;
    const complete = await waitFor(COUNT, TIMEOUT_MS);
    const totalSeconds = (performance.now() - start) / 1000;
    const end = performance.now();
    // A killed worker's share was read just before the kill; a gone pid reads 0 here.
    for (const worker of workers) workerPids.add(worker.process.pid!);
    let apiCpu = 0;
    let workerCpu = killedCpu.reduce((a, b) => a + b, 0);
    for (const [pid, before] of cpuBefore) {
      if (processCpuSeconds(pid) === null) continue;
      const used = treeCpuSeconds(pid) - before;
      if (workerPids.has(pid)) workerCpu += used;
      else apiCpu += used;
    }
    const cpu = apiCpu + workerCpu;
    // Anything sent twice arrives late: wait a little longer before counting.
    await sleep(fire ? 3000 : 1000);
    const postgresCpu = await backends.stop();
    const commitsAfter = await commits(databaseUrl);

    const byRecipient = new Map<string, number>();
    const byMessageId = new Map<string, number>();
    for (const message of mta.accepted) {
      for (const rcpt of message.rcptTo) byRecipient.set(rcpt, (byRecipient.get(rcpt) ?? 0) + 1);
      const messageId = /^Message-ID:\s*(\S+)/im.exec(message.raw.toString('utf8'))?.[1] ?? '?';
      byMessageId.set(messageId, (byMessageId.get(messageId) ?? 0) + 1);
    }
    let missing = 0;
    for (let i = 0; i < COUNT; i++) if (!byRecipient.has(`user${i}.run@example.org`)) missing++;
    const deliveredTwice = [...byRecipient.values()].filter((n) => n > 1).length + [...byMessageId.values()].filter((n) => n > 1).length;
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const stored = Number((await db.query<{ n: string }>("select count(*) as n from emails where subject like 'Scale run #%'")).rows[0].n);
    await db.end();
    if (!complete) events.push(`TIMED OUT: ${mta.accepted.length} of ${COUNT} delivered`);
    return {
      label,
      processes: layout === 'A' ? '1 (all roles)' : '2 api + 2 worker',
      acceptedPerSecond: COUNT / acceptSeconds,
      deliveredPerSecond: byRecipient.size / totalSeconds,
      acceptSeconds,
      totalSeconds,
      postlaneCpuMsPerMessage: (cpu * 1000) / COUNT,
      apiCpuMsPerMessage: (apiCpu * 1000) / COUNT,
      workerCpuMsPerMessage: (workerCpu * 1000) / COUNT,
      postgresCpuMsPerMessage: (postgresCpu * 1000) / COUNT,
      commitsPerMessage: (commitsAfter - commitsBefore) / COUNT,
      delivered: byRecipient.size,
      deliveredTwice,
      missing,
      stored,
      clientRetries: retries,
      events,
      ...(fire ? { drainSeconds: (end - lastDisruption) / 1000 } : {}),
    };
  } catch (error) {
    const outputs = [first.output(), ...apis.slice(1).map((a) => a.output()), ...workers.map((w) => w.output())]
      .map((o) => o.slice(-2000))
      .join('\n----\n');
    throw new Error(`${(error as Error).message}\nprocess output:\n${outputs}`);
  } finally {
    for (const client of clients) client.close();
    for (const worker of workers) await worker.stop();
    for (const api of apis.slice(1)) await api.stop();
    await first.stop();
  }
}

function table(results: LayoutResult[]): string[] {
  const rows: Array<[string, (r: LayoutResult) => string]> = [
    ['processes', (r) => r.processes],
    ['accepted/s (API)', (r) => r.acceptedPerSecond.toFixed(0)],
    ['delivered/s end to end', (r) => r.deliveredPerSecond.toFixed(0)],
    ['all accepted after (s)', (r) => r.acceptSeconds.toFixed(1)],
    ['all delivered after (s)', (r) => r.totalSeconds.toFixed(1)],
    ['Postlane CPU s / 1,000 msgs', (r) => r.postlaneCpuMsPerMessage.toFixed(2)],
    [
      '  of which API / workers',
      (r) => (r.processes.startsWith('1') ? '-' : `${r.apiCpuMsPerMessage.toFixed(2)} / ${r.workerCpuMsPerMessage.toFixed(2)}`),
    ],
    ['PostgreSQL backends CPU s / 1,000', (r) => r.postgresCpuMsPerMessage.toFixed(2)],
    ['PostgreSQL commits / msg', (r) => r.commitsPerMessage.toFixed(1)],
    ['delivered (of sent)', (r) => `${r.delivered}/${COUNT}`],
    ['delivered twice / missing', (r) => `${r.deliveredTwice} / ${r.missing}`],
    ['stored emails', (r) => String(r.stored)],
    ['client retries', (r) => String(r.clientRetries)],
    ['last delivered after last accept (s)', (r) => (r.totalSeconds - r.acceptSeconds).toFixed(1)],
    ['all delivered after last disruption (s)', (r) => (r.drainSeconds === undefined ? '-' : r.drainSeconds.toFixed(1))],
  ];
  const width = 40;
  const column = 22;
  return [
    ''.padEnd(width) + results.map((r) => r.label.padStart(column)).join(''),
    ...rows.map(([name, value]) => name.padEnd(width) + results.map((r) => value(r).padStart(column)).join('')),
  ];
}

export const scenario: Scenario = {
  name: 'scale',
  description: `${COUNT.toLocaleString('en')} sends through the API to a loopback MTA: one all-roles process, then 2 API + 2 worker processes, then the same while a worker is SIGKILLed and PostgreSQL restarted (PostgreSQL only)`,
  async run({ connections }) {
    const shared = process.env.BENCH_DATABASE_URL;
    if (!shared) {
      return {
        name: this.name,
        lines: [
          'not run: this scenario needs PostgreSQL (several processes on one database). Set BENCH_DATABASE_URL, e.g. BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postlane_bench_scale npm run bench scale',
        ],
      };
    }
    const cores = availableParallelism();
    const lines = [
      `machine: ${cores} cores (${cpus()[0]?.model ?? 'unknown CPU'}); every process of every layout, PostgreSQL, the clients and the MTA share them, so layout B cannot be faster here: read the CPU per message and the correctness rows`,
      `${connections} client connections; every send has an Idempotency-Key; layouts A and B on ${new URL(shared).host}, B under fire on a private PostgreSQL cluster (fsync off) that can be restarted`,
    ];
    const dns = await startDnsServer();
    dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
    dns.set('mx.example.org', 'A', ['127.0.0.1']);
    const mta = await startStallingMta({ stalling: false });
    const results: LayoutResult[] = [];
    try {
      results.push(await runLayout('A: one process', 'A', dns, mta, connections));
      results.push(await runLayout('B: 2 api + 2 worker', 'B', dns, mta, connections));
      const postgres = await startPrivatePostgres();
      if (!postgres) lines.push('B under fire: not run (initdb, the PostgreSQL server binaries, not installed)');
      else {
        const url = new URL(postgres.url);
        url.pathname = '/postlane_bench_scale';
        process.env.BENCH_DATABASE_URL = url.toString();
        try {
          results.push(
            await runLayout('B under fire', 'B', dns, mta, connections, {
              killAt: 0.2,
              restartAt: 0.5,
              restartDatabase: () => postgres.restart('fast'),
            }),
          );
        } finally {
          process.env.BENCH_DATABASE_URL = shared;
          await postgres.stop();
        }
      }
    } finally {
      await mta.close();
      await dns.close();
    }
    lines.push(...table(results));
    for (const r of results) for (const event of r.events) lines.push(`${r.label}: ${event}`);
    return { name: this.name, lines };
  },
};
