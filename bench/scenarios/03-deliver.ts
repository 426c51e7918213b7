// The whole outbound pipeline against Postfix, in the same run on the same machine:
// - Postlane: N single-recipient POST /v2/emails → stored, queued → worker composes the MIME,
//   DKIM-signs it, resolves the MX through a loopback DNS server and delivers over SMTP to a
//   local sink (one process, role all, SQLite unless BENCH_DATABASE_URL).
// - Postfix (Debian package, installed with apt-get when missing): a throwaway instance with a
//   private config and queue directory, relaying everything to the same sink; the same N
//   messages are submitted to it over SMTP.
// Measured for each: from the first submission until the sink has accepted the N-th message,
// and the CPU time all the server's processes used meanwhile, with its share in the kernel (a
// machine where system calls are dear slows Postfix, many processes handing each message on
// through files and sockets, more than Postlane). Postlane runs two ways: as one process
// doing everything at once, and staged (an API process accepts all N, then a worker process
// drains the queue), which times the delivery engine alone against Postfix.
// One process and Postfix run in rounds, one right after the other (see ROUNDS).
// The sink offers no STARTTLS, so both keep plain connections open and reuse them (Postfix
// does not reuse TLS connections by default). Postfix's in_flow_delay is off, so submission is
// not slowed down by its queue manager.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Scenario } from '../run.ts';
import {
  freePort,
  keepAliveClient,
  memoryMb,
  postlanePid,
  startChild,
  startPostlane,
  treeCpuSeconds,
  treeCpuTimes,
  type ChildServer,
} from '../lib.ts';
import { startDnsServer } from '../../test/helpers/dns-server.ts';
import { startSmtpSink, type SmtpSink } from '../../test/helpers/smtp-sink.ts';

/** Messages per side. 10,000: at 5,000 Postlane's side lasted about 4 s, less than the harness's
 *  10 s measurements, and its first second (the JIT warming up under load, the queue filling)
 *  weighed a quarter of the figure; Postfix's rate hardly changes with the count. */
const COUNT = Number(process.env.BENCH_DELIVER_COUNT ?? 10_000);
/** Longest a side may take for the N messages before it is reported as timed out. */
const PHASE_TIMEOUT_MS = Number(process.env.BENCH_DELIVER_TIMEOUT_MS ?? 180_000);
const WARMUP = 50;
/** Rounds of Postlane (one process) then Postfix. This machine's speed drifts within a minute
 *  (the same code's server CPU per message went from 1.9 to 2.5 ms between two runs, Postfix's
 *  rate held), so each round's ratio compares two phases measured back to back, and the median
 *  of the rounds is the figure held against the aim; every round is printed. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_DELIVER_ROUNDS ?? 3));
const dialect = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
/** The aim (docs/performance.md, "deliver"): end to end at least twice Postfix's rate on SQLite,
 *  at least its rate on PostgreSQL. */
const END_TO_END_AIM = dialect === 'SQLite' ? 2 : 1;

const HTML = `<html><body><h1>Hello from the benchmark</h1><p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12)}</p><p><a href="https://example.com/account">Your account</a></p></body></html>`;
const TEXT = `Hello from the benchmark\n\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12)}\n`;

function message(i: number, run: string) {
  return { from: 'Bench <hello@bench.test>', to: `user${i}.${run}@example.org`, subject: `Benchmark ${run} #${i}`, html: HTML, text: TEXT };
}

/** Runs `task(i)` for i in [0, count) with `concurrency` workers. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

interface PhaseResult {
  /** CPU seconds the server side (all its processes and threads) used for the phase. */
  cpuSeconds?: number;
  /** The same per server process (API and worker when split). */
  cpuByProcess?: number[];
  /** Of cpuSeconds, the time spent in the kernel (system calls). */
  kernelSeconds?: number;
  /** Postlane's peak RSS (VmHWM) so far, in MB (Postfix's is spread over many processes). */
  peakRssMb?: number;
  /** CPU seconds this process (the clients and the sink) used meanwhile: it shares the machine. */
  benchCpuSeconds?: number;
  submitted: number;
  submitMs: number;
  delivered: number;
  totalMs: number;
  timedOut: boolean;
}

async function measure(sink: SmtpSink, count: number, submit: () => Promise<void>, serverPids: number[] = []): Promise<PhaseResult> {
  sink.reset();
  const cpu = () => serverPids.map((pid) => treeCpuTimes(pid));
  const cpuBefore = cpu();
  const benchCpuBefore = process.cpuUsage();
  const start = performance.now();
  await submit();
  const submitMs = performance.now() - start;
  let timedOut = false;
  await sink.waitForMessages(count, Math.max(1000, PHASE_TIMEOUT_MS - submitMs)).catch(() => (timedOut = true));
  const totalMs = performance.now() - start;
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const benchCpuSeconds = (benchCpu.user + benchCpu.system) / 1e6;
  const used = cpu().map((after, i) => ({ user: after.user - cpuBefore[i].user, system: after.system - cpuBefore[i].system }));
  const server = serverPids.length
    ? { ...cpuFields(used.map((t) => t.user + t.system)), kernelSeconds: used.reduce((sum, t) => sum + t.system, 0) }
    : {};
  return { submitted: count, submitMs, delivered: sink.accepted, totalMs, timedOut, benchCpuSeconds, ...server };
}

function cpuFields(byProcess: number[]): Pick<PhaseResult, 'cpuSeconds' | 'cpuByProcess'> {
  return { cpuSeconds: byProcess.reduce((a, b) => a + b, 0), cpuByProcess: byProcess };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const perMessage = (seconds: number, r: PhaseResult) => ((seconds * 1000) / Math.max(1, r.delivered)).toFixed(1);

function describe(label: string, r: PhaseResult): string {
  const rate = (r.delivered / r.totalMs) * 1000;
  return `${label.padEnd(30)} ${rate.toFixed(0).padStart(6)} msg/s end to end   ${r.delivered}/${r.submitted} delivered in ${(r.totalMs / 1000).toFixed(1)} s   (submission took ${(r.submitMs / 1000).toFixed(1)} s)${r.cpuSeconds !== undefined ? `   server CPU ${perMessage(r.cpuSeconds, r)} ms/msg${r.kernelSeconds !== undefined ? ` (${((100 * r.kernelSeconds) / r.cpuSeconds).toFixed(0)} % in the kernel)` : ''}${r.cpuByProcess && r.cpuByProcess.length > 1 ? ` (api ${perMessage(r.cpuByProcess[0], r)} + worker ${perMessage(r.cpuByProcess[1], r)})` : ''}` : ''}${r.peakRssMb !== undefined ? `   peak RSS ${r.peakRssMb.toFixed(0)} MB` : ''}${r.benchCpuSeconds !== undefined ? `   bench client and sink CPU ${perMessage(r.benchCpuSeconds, r)} ms/msg` : ''}${r.timedOut ? '   TIMED OUT' : ''}`;
}

function describeDrain(label: string, r: PhaseResult): string {
  const rate = (r.delivered / r.totalMs) * 1000;
  return `${label.padEnd(30)} ${rate.toFixed(0).padStart(6)} msg/s delivered   ${r.delivered + 1}/${r.submitted} in ${(r.totalMs / 1000).toFixed(1)} s after the first   worker CPU ${perMessage(r.cpuSeconds ?? NaN, r)} ms/msg${r.timedOut ? '   TIMED OUT' : ''}`;
}

// ---- Postlane ------------------------------------------------------------------------------

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');

/** A Postlane child with a verified bench.test domain and the sending limits lifted. */
async function preparedPostlane(
  sink: SmtpSink,
  dnsAddress: string,
  setDns: (records: any[]) => void,
  role: 'all' | 'api',
  connections: number,
) {
  const postlane = await startPostlane({ DNS_SERVERS: dnsAddress, MX_PORT: String(sink.port), MAIL_HOSTNAME: 'mail.bench.test' }, role);
  try {
    const headers = { authorization: `Bearer ${postlane.key}`, 'content-type': 'application/json' };
    const workspace = JSON.parse(postlane.cli('workspace', 'list', '--json'))[0];
    postlane.cli('workspace', 'update', workspace.id, '--send-rate', '1000000', '--daily-limit', '1000000000', '--credits', '1000000000');
    const created = await (
      await fetch(`${postlane.url}/v2/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench.test' }) })
    ).json();
    setDns(created.dns_records);
    const verified = await (await fetch(`${postlane.url}/v2/domains/${created.id}/verify`, { method: 'POST', headers })).json();
    if (!verified.verified_at) throw new Error(`domain not verified: ${JSON.stringify(verified)}`);
    const client = keepAliveClient(postlane.url, connections);
    const send = (run: string) => async (i: number) => {
      const response = await client.request('POST', '/v2/emails', headers, JSON.stringify(message(i, run)));
      if (response.status !== 200) throw new Error(`POST /v2/emails: ${response.status} ${response.text}`);
    };
    return { postlane, send, stop: async () => (client.close(), await postlane.stop()) };
  } catch (error) {
    await postlane.stop();
    throw error;
  }
}

/** One process does everything (what `npm start` runs): the API accepts while the workers deliver. */
async function runPostlane(
  sink: SmtpSink,
  dnsAddress: string,
  setDns: (records: any[]) => void,
  connections: number,
): Promise<PhaseResult> {
  const { postlane, send, stop } = await preparedPostlane(sink, dnsAddress, setDns, 'all', connections);
  try {
    await measure(sink, WARMUP, () => pool(WARMUP, connections, send('warmup')));
    const pid = postlanePid(postlane.env.HTTP_PORT);
    const result = await measure(sink, COUNT, () => pool(COUNT, connections, send('run')), [pid]);
    return { ...result, peakRssMb: memoryMb(pid, 'VmHWM') };
  } catch (error) {
    throw new Error(`${(error as Error).message}\npostlane output:\n${postlane.output().slice(-4000)}`);
  } finally {
    await stop();
  }
}

interface StagedResult {
  acceptedPerSecond: number;
  acceptCpuMs: number;
  drain: PhaseResult;
}

/**
 * The two halves apart: an API process (--role api) accepts all N emails first, then a worker
 * process on the same database starts and drains the queue (DKIM, SMTP). The drain is timed
 * from the first to the N-th message at the sink: the delivery engine alone, the part that
 * compares with Postfix relaying.
 */
async function runPostlaneStaged(
  sink: SmtpSink,
  dnsAddress: string,
  setDns: (records: any[]) => void,
  connections: number,
): Promise<StagedResult> {
  const { postlane, send, stop } = await preparedPostlane(sink, dnsAddress, setDns, 'api', connections);
  let worker: ChildServer | null = null;
  try {
    const apiPid = postlanePid(postlane.env.HTTP_PORT);
    const cpu0 = treeCpuSeconds(apiPid);
    const start = performance.now();
    await pool(COUNT, connections, send('run'));
    const acceptMs = performance.now() - start;
    const acceptCpuMs = ((treeCpuSeconds(apiPid) - cpu0) * 1000) / COUNT;

    sink.reset();
    const port = await freePort();
    worker = await startChild(MAIN, ['serve', '--role', 'all'], { ...postlane.env, HTTP_PORT: String(port) }, port, '/healthz');
    const workerPid = postlanePid(String(port));
    await sink.waitForMessages(1, PHASE_TIMEOUT_MS);
    const first = performance.now();
    const workerCpu0 = treeCpuSeconds(workerPid);
    let timedOut = false;
    await sink.waitForMessages(COUNT, PHASE_TIMEOUT_MS).catch(() => (timedOut = true));
    const drain: PhaseResult = {
      submitted: COUNT,
      submitMs: 0,
      delivered: sink.accepted - 1,
      totalMs: performance.now() - first,
      timedOut,
      ...cpuFields([treeCpuSeconds(workerPid) - workerCpu0]),
    };
    return { acceptedPerSecond: (COUNT / acceptMs) * 1000, acceptCpuMs, drain };
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\npostlane output:\n${postlane.output().slice(-4000)}${worker ? `\nworker output:\n${worker.output().slice(-4000)}` : ''}`,
    );
  } finally {
    await worker?.stop();
    await stop();
  }
}

// ---- Postfix -------------------------------------------------------------------------------

function ensurePostfix(): void {
  if (existsSync('/usr/sbin/postfix')) return;
  // "No configuration": the package must not set up (or start) a system mail server.
  execFileSync('sh', ['-c', 'echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections'], {
    stdio: 'ignore',
  });
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', 'postfix'], { env, encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    // A fresh machine may have no package lists yet.
    spawnSync('apt-get', ['update', '-qq'], { env, stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0 || !existsSync('/usr/sbin/postfix')) throw new Error(`apt-get install postfix failed:\n${result.stderr}`);
}

/** A Postfix instance of its own (config, queue and data in a temporary directory) relaying everything to `relayPort`. */
async function startPostfix(relayPort: number): Promise<{ port: number; masterPid(): number; stop(): void }> {
  ensurePostfix();
  const dir = mkdtempSync(join(tmpdir(), 'postfix-bench-'));
  chmodSync(dir, 0o755); // Postfix's own processes run as the postfix user
  const [etc, queue, data] = ['etc', 'queue', 'data'].map((name) => join(dir, name));
  for (const path of [etc, queue, data]) mkdirSync(path);
  execFileSync('chown', ['postfix:postfix', data]);
  const port = await freePort();
  writeFileSync(
    join(etc, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${queue}`,
      `data_directory = ${data}`,
      'mail_owner = postfix',
      'setgid_group = postdrop',
      'myhostname = postfix.bench.test',
      'mydestination =',
      'inet_interfaces = 127.0.0.1',
      'inet_protocols = ipv4',
      'mynetworks = 127.0.0.0/8',
      `relayhost = [127.0.0.1]:${relayPort}`,
      'smtpd_relay_restrictions = permit_mynetworks, reject',
      'smtpd_peername_lookup = no',
      'in_flow_delay = 0',
      'alias_maps =',
      'alias_database =',
      'local_recipient_maps =',
      `maillog_file_prefixes = ${dir}`,
      `maillog_file = ${join(dir, 'maillog')}`,
      '',
    ].join('\n'),
  );
  const services = [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    'pickup unix n - n 60 1 pickup',
    'cleanup unix n - n - 0 cleanup',
    'qmgr unix n - n 300 1 qmgr',
    'rewrite unix - - n - - trivial-rewrite',
    'bounce unix - - n - 0 bounce',
    'defer unix - - n - 0 bounce',
    'trace unix - - n - 0 bounce',
    'verify unix - - n - 1 verify',
    'flush unix n - n 1000? 0 flush',
    'proxymap unix - - n - - proxymap',
    'proxywrite unix - - n - 1 proxymap',
    'smtp unix - - n - - smtp',
    'relay unix - - n - - smtp',
    'showq unix n - n - - showq',
    'error unix - - n - - error',
    'retry unix - - n - - error',
    'discard unix - - n - - discard',
    'anvil unix - - n - 1 anvil',
    'scache unix - - n - 1 scache',
    'postlog unix-dgram n - n - 1 postlogd',
  ];
  writeFileSync(join(etc, 'master.cf'), services.join('\n') + '\n');
  const started = spawnSync('postfix', ['-c', etc, 'start'], { encoding: 'utf8' });
  if (started.status !== 0) {
    const log = existsSync(join(dir, 'maillog')) ? readFileSync(join(dir, 'maillog'), 'utf8') : '';
    throw new Error(`postfix start failed: ${started.stderr}${started.stdout}${log}`);
  }
  // Wait for the listener.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const probe = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    try {
      await probe.verify();
      probe.close();
      break;
    } catch (error) {
      probe.close();
      if (Date.now() > deadline) throw new Error(`postfix did not listen on ${port}: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    port,
    masterPid: () => Number(readFileSync(join(queue, 'pid', 'master.pid'), 'utf8').trim()),
    stop() {
      spawnSync('postfix', ['-c', etc, 'stop'], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function runPostfix(sink: SmtpSink, connections: number): Promise<PhaseResult> {
  const postfix = await startPostfix(sink.port);
  const transport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port: postfix.port,
    secure: false,
    ignoreTLS: true,
    maxConnections: connections,
    maxMessages: Infinity,
  });
  try {
    const send = (run: string) => async (i: number) => {
      await transport.sendMail(message(i, run));
    };
    await measure(sink, WARMUP, () => pool(WARMUP, connections, send('warmup')));
    return await measure(sink, COUNT, () => pool(COUNT, connections, send('run')), [postfix.masterPid()]);
  } finally {
    transport.close();
    postfix.stop();
  }
}

export const scenario: Scenario = {
  name: 'deliver',
  description: `${COUNT.toLocaleString('en')} single-recipient emails API → DKIM → SMTP to a local sink, beside Postfix relaying the same messages to the same sink, on ${dialect} (aim: end to end >= ${END_TO_END_AIM}× Postfix's rate)`,
  async run({ connections }) {
    const sink = await startSmtpSink({ rules: [], starttls: false, keepMessages: false });
    const dns = await startDnsServer();
    dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
    dns.set('mx.example.org', 'A', ['127.0.0.1']);
    const setDns = (records: Array<{ type: string; name: string; value: string; priority: number | null }>) => {
      for (const record of records) {
        if (record.type === 'MX') dns.set(record.name, 'MX', [{ exchange: record.value, priority: record.priority ?? 10 }]);
        else if (record.type === 'CNAME') dns.set(record.name, 'CNAME', [record.value]);
        else dns.set(record.name, 'TXT', [record.value]);
      }
    };
    try {
      const rate = (r: PhaseResult) => (r.delivered / r.totalMs) * 1000;
      const cpuPerMessage = (r: PhaseResult) => (r.cpuSeconds ?? NaN) / Math.max(1, r.delivered);
      const lines: string[] = [];
      const rounds: Array<{ postlane: PhaseResult; postfix: PhaseResult }> = [];
      let staged: StagedResult | null = null;
      for (let round = 1; round <= ROUNDS; round++) {
        const postlane = await runPostlane(sink, dns.address, setDns, connections);
        lines.push(describe(`${round}: postlane, one process`, postlane));
        let postfix: PhaseResult;
        try {
          postfix = await runPostfix(sink, connections);
        } catch (error) {
          lines.push(`postfix: not measured: ${(error as Error).message}`);
          break;
        }
        lines.push(describe(`${round}: postfix (SMTP → SMTP)`, postfix));
        rounds.push({ postlane, postfix });
        // The halves apart once, after the first round (they are compared with its Postfix).
        staged ??= await runPostlaneStaged(sink, dns.address, setDns, connections);
      }
      staged ??= await runPostlaneStaged(sink, dns.address, setDns, connections);
      lines.push(
        `postlane API alone (--role api)   ${staged.acceptedPerSecond.toFixed(0).padStart(6)} accepted/s   API CPU ${staged.acceptCpuMs.toFixed(1)} ms/msg`,
        describeDrain('postlane delivery alone', staged.drain),
      );
      if (rounds.length > 0) {
        const endToEnd = rounds.map(({ postlane, postfix }) => rate(postlane) / rate(postfix));
        const cpu = rounds.map(({ postlane, postfix }) => cpuPerMessage(postfix) / cpuPerMessage(postlane));
        const first = rounds[0].postfix;
        const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
        lines.push(
          `ratio to postfix, messages per second: end to end (one process) ${median(endToEnd).toFixed(2)}, the median of rounds ${list(endToEnd)} (aim >= ${END_TO_END_AIM.toFixed(2)} on ${dialect}); delivery alone ${(rate(staged.drain) / rate(first)).toFixed(2)} (to round 1)   (${connections} client connections)`,
          `ratio of server CPU per message (postfix / postlane): end to end ${median(cpu).toFixed(2)}, the median of rounds ${list(cpu)}; delivery alone ${(cpuPerMessage(first) / cpuPerMessage(staged.drain)).toFixed(2)} (to round 1)   (above 1: postlane needs less)`,
        );
      }
      return { name: this.name, lines };
    } finally {
      await dns.close();
      await sink.close();
    }
  },
};
