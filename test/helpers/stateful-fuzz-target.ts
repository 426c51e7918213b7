// The server the stateful fuzzer attacks: `postlane serve` in a child process (a crash ends the
// child, not the fuzzer, and its RSS can be read from /proc), on a fresh SQLite file or
// PostgreSQL schema, with a loopback DNS server that sends every example.org recipient to an
// SMTP sink. The mail the server sends (campaigns, confirmations, tracked emails) lands in that
// sink, where the fuzzer finds the links of the hosted pages, the pixel and the click links.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startChildApp, urlWithSchema, type ChildApp } from './app.ts';
import { startDnsServer, type TestDnsServer } from './dns-server.ts';
import { startSmtpSink, type SmtpSink } from './smtp-sink.ts';

export interface FuzzDatabase {
  /** sqlite:… or a PostgreSQL URL; with `schema`, the server's search_path is pinned to it. */
  url: string;
  schema?: string;
  dataDir: string;
  drop(): Promise<void>;
}

export interface FuzzTarget {
  url: string;
  port: number;
  /** The server's process id (for its RSS). */
  pid: number;
  /** The default workspace's full key, as printed on the first start. */
  key: string;
  /** The first start's one-time set-up token (the first admin's invitation). */
  setupToken: string;
  dns: TestDnsServer;
  sink: SmtpSink;
  child: ChildApp;
  /** The server's resident memory now, in MB (0 once it is gone). */
  rssMb(): number;
  alive(): boolean;
  stop(): Promise<void>;
}

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');

export async function startFuzzTarget(database: FuzzDatabase): Promise<FuzzTarget> {
  const dns = await startDnsServer();
  const sink = await startSmtpSink({ rules: [], starttls: false, keepMessages: true });
  dns.set('example.org', 'MX', [{ exchange: 'mx.example.org', priority: 10 }]);
  dns.set('mx.example.org', 'A', ['127.0.0.1']);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    DATA_DIR: database.dataDir,
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    PUBLIC_URL: url,
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    VERIFY_SMTP_TIMEOUT_MS: '2000',
    MX_PORT: String(sink.port),
    ALLOW_PRIVATE_URLS: 'true',
    MAIL_HOSTNAME: 'mail.fuzz.test',
    LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'warn',
  };
  let child: ChildApp;
  try {
    child = await startChildApp(env);
  } catch (error) {
    await Promise.all([dns.close(), sink.close(), database.drop()]);
    throw error;
  }
  const output = child.output();
  const key = /secret_[A-Za-z0-9]{32}/.exec(output)?.[0];
  const setupToken = /\/dashboard\/accept#([A-Za-z0-9_-]+)/.exec(output)?.[1];
  if (!key || !setupToken) throw new Error(`no key or set-up link printed:\n${output}`);
  // Enough credits and sending room that the fuzzer's sends are judged on their input, not a quota.
  const cli = (...args: string[]) => {
    const result = spawnSync(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`postlane ${args.join(' ')} failed: ${result.error ?? ''} ${result.stderr ?? ''}`);
    return result.stdout;
  };
  const workspace = (JSON.parse(cli('workspace', 'list', '--json')) as Array<{ id: string }>)[0];
  cli('workspace', 'update', workspace.id, '--send-rate', '1000000', '--daily-limit', '1000000000', '--credits', '1000000000');
  const pid = child.process.pid!;
  return {
    url,
    port,
    pid,
    key,
    setupToken,
    dns,
    sink,
    child,
    rssMb() {
      try {
        return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    },
    alive: () => child.process.exitCode === null && child.process.signalCode === null,
    async stop() {
      await child.kill('SIGTERM');
      await Promise.all([dns.close(), sink.close()]);
      await database.drop();
    },
  };
}
