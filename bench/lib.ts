// Shared pieces of the benchmark scenarios: child-process servers and autocannon runs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort } from '../src/dev/ports.ts';

export { freePort };

export interface ChildServer {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `node <script> <args>` and waits until `readyPath` answers 200 on `port`. */
export async function startChild(
  script: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  readyPath: string,
): Promise<ChildServer> {
  // BENCH_NODE_ARGS: node flags for the servers, for profiling (--cpu-prof, --trace-gc).
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  child.on('exit', (code, signal) => (output += `\n[exited: code ${code} signal ${signal}]\n`));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited early:\n${output}`);
    try {
      if ((await fetch(url + readyPath)).ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${script} not ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => output,
    stop: () => stopChildProcess(child),
  };
}

/** SIGTERM, resolved once the process has exited (at once when it already has). */
export function stopChildProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

export interface BenchDatabase {
  /** What a Postlane process is given as DATABASE_URL (the schema pinned by search_path). */
  url: string;
  /** The schema's name on PostgreSQL, for in-process servers and direct connections. */
  schema?: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for one phase: a SQLite file in `dataDir`, or a new schema of
 *  BENCH_DATABASE_URL, so every phase of every scenario runs on both dialects from zero. */
export async function freshBenchDatabase(
  dataDir: string,
  kind: 'sqlite' | 'postgres' = process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite',
): Promise<BenchDatabase> {
  const base = process.env.BENCH_DATABASE_URL;
  if (kind === 'sqlite' || !base) return { url: `sqlite:${join(dataDir, 'postlane.db')}`, drop: async () => {} };
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`create schema ${schema}`).catch(async (error: { code?: string }) => {
    if (error.code !== '3D000') throw error; // 3D000: the database itself does not exist yet
    await createBenchDatabase(base);
    await admin(`create schema ${schema}`);
  });
  const url = `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return { url, schema, drop: () => admin(`drop schema if exists ${schema} cascade`) };
}

/** Creates BENCH_DATABASE_URL's database, so a fresh machine needs no manual createdb. */
async function createBenchDatabase(base: string): Promise<void> {
  const url = new URL(base);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`create database "${name.replaceAll('"', '""')}"`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // 42P04: created meanwhile
  } finally {
    await client.end();
  }
}

/** A Postlane server on a fresh SQLite file (or a fresh schema of BENCH_DATABASE_URL) in a child process. */
export async function startPostlane(
  env: Record<string, string> = {},
  role = 'all',
): Promise<ChildServer & { key: string; env: Record<string, string>; cli(...args: string[]): string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-bench-'));
  const database = await freshBenchDatabase(dataDir);
  const port = await freePort();
  const fullEnv = {
    DATA_DIR: dataDir,
    HTTP_PORT: String(port),
    HTTP_HOST: '127.0.0.1',
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    LOG_LEVEL: 'warn',
    DOCTOR_AT_START: 'false',
    ...(database.schema ? { DATABASE_URL: database.url } : {}),
    ...env,
  };
  const server = await startChild(MAIN, ['serve', '--role', role], fullEnv, port, '/healthz');
  const key = /secret_[A-Za-z0-9]{32}/.exec(server.output())?.[0];
  if (!key) throw new Error(`no key printed:\n${server.output()}`);
  return {
    ...server,
    key,
    env: fullEnv,
    /** Runs a `postlane` CLI command against the same database; returns its stdout. */
    cli: (...args: string[]) => {
      const result = spawnSync(process.execPath, [MAIN, ...args], { env: { ...process.env, ...fullEnv }, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`postlane ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
    async stop() {
      await server.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  errors: number;
  non2xx: number;
}

export async function load(
  url: string,
  options: { seconds: number; connections: number; headers?: Record<string, string>; method?: string; body?: string; overallRate?: number },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    duration: options.seconds,
    connections: options.connections,
    headers: options.headers,
    method: (options.method ?? 'GET') as 'GET',
    body: options.body,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
  });
  return {
    requestsPerSecond: result.requests.average,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export function describeLoad(label: string, r: LoadResult): string {
  return `${label.padEnd(34)} ${r.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${r.latencyP50} ms   p99 ${r.latencyP99} ms   errors ${r.errors}   non-2xx ${r.non2xx}`;
}

/**
 * A keep-alive HTTP client for load: node:http with a fixed set of sockets. The load generator
 * shares the machine with the server; fetch (undici's WHATWG Request, Response, Headers and
 * streams) spent about twice the CPU per request.
 */
export function keepAliveClient(baseUrl: string, connections: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const base = new URL(baseUrl);
  return {
    request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
      return new Promise((resolve, reject) => {
        const request = http.request({ host: base.hostname, port: base.port, path, agent, method, headers }, (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, text }));
          response.on('error', reject);
        });
        request.on('error', reject);
        request.end(body);
      });
    },
    /** Closes the idle keep-alive connections: the next requests open fresh ones. */
    dropIdle: () => {
      for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    },
    close: () => agent.destroy(),
  };
}

/**
 * Requests at a constant rate whatever the answers' speed (open loop, as wrk2 does), each
 * latency counted from the moment the request was due, so a stall is charged to every request
 * it delayed. autocannon's `overallRate` is not this: each connection sends its share of a
 * second back to back when the second starts (bursts at full speed), and its correction for
 * coordinated omission takes the expected interval as ceil(1 / rate) = 1 ms, recording an
 * L ms answer as L samples, so one slow answer outweighs dozens of fast ones.
 */
export async function pacedLoad(
  url: string,
  options: { seconds: number; rate: number; connections: number; headers?: Record<string, string>; method?: string; body?: string },
): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const target = new URL(url);
  const total = Math.round(options.seconds * options.rate);
  const interval = 1000 / options.rate;
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const request = http.request(target, { agent, method: options.method ?? 'GET', headers: options.headers }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode! >= 200 && response.statusCode! < 300) latencies.push(performance.now() - due);
          else non2xx++;
          resolve();
        });
      });
      request.on('error', () => {
        errors++;
        resolve();
      });
      request.end(options.body);
    });
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(send(due));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  // To a tenth of a millisecond: answers on loopback take about one.
  const at = (q: number) =>
    latencies.length ? Math.round(10 * latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) / 10 : 0;
  return { requestsPerSecond: latencies.length / elapsed, latencyP50: at(0.5), latencyP99: at(0.99), errors, non2xx };
}

/** The pid of the Postlane server listening on `port` (the child's pid is not the server's:
 *  `serve` re-executes itself). */
export function postlanePid(port: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes('main.ts') && readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`HTTP_PORT=${port}`))
        return Number(entry);
    } catch {
      // not ours or gone
    }
  }
  throw new Error(`no postlane process with HTTP_PORT=${port}`);
}

/** A process's resident set now (VmRSS) or at its peak (VmHWM), in MB. */
export function memoryMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

/** CPU seconds (user + system) used so far by a process and all its descendants, reaped ones included. */
export function treeCpuSeconds(rootPid: number): number {
  const { user, system } = treeCpuTimes(rootPid);
  return user + system;
}

/** treeCpuSeconds split into user and system (kernel) time: a server whose work is mostly
 *  system calls (process hand-offs, fsync, small writes) is slowed most by a machine where
 *  those are dear, and the split shows it. */
export function treeCpuTimes(rootPid: number): { user: number; system: number } {
  const ticks = 100; // USER_HZ on Linux
  const stats = new Map<number, { ppid: number; user: number; system: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[1] = ppid; [11] utime, [12] stime, [13] cutime, [14] cstime (stat fields 4, 14-17)
      stats.set(Number(entry), {
        ppid: Number(fields[1]),
        user: Number(fields[11]) + Number(fields[13]),
        system: Number(fields[12]) + Number(fields[14]),
      });
    } catch {
      // gone meanwhile
    }
  }
  const total = { user: 0, system: 0 };
  const walk = (pid: number) => {
    const stat = stats.get(pid);
    if (!stat) return;
    total.user += stat.user;
    total.system += stat.system;
    for (const [child, s] of stats) if (s.ppid === pid) walk(child);
  };
  walk(rootPid);
  return { user: total.user / ticks, system: total.system / ticks };
}

/** The p-th percentile of `values` (nearest rank: the smallest value with at least p % of them
 *  at or below it); NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
