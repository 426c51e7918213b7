// A throwaway PostgreSQL cluster of our own (initdb + pg_ctl into a temporary directory, on a
// free loopback port), for tests that stop and restart the database server itself: the shared
// server that other tests and helpers use is never touched. PostgreSQL refuses to run as root,
// so as root the cluster runs as the `postgres` system user.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/dev/ports.ts';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication). */
  url: string;
  /** Restarts the server: `fast` (clients disconnected, checkpoint) or `immediate` (a crash:
   *  every process killed at once, WAL replayed at the next start). */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  stop(): Promise<void>;
}

/** The bin directory of the newest PostgreSQL with initdb (PG_BIN wins), or null. */
export function postgresBinDir(): string | null {
  const candidates = process.env.PG_BIN ? [process.env.PG_BIN] : [];
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join('/usr/lib/postgresql', v, 'bin')));
  } catch {
    // no Debian-style installation
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

function systemUser(name: string): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Starts a private cluster; null when PostgreSQL's server binaries are not installed. */
export async function startPrivatePostgres(): Promise<PrivatePostgres | null> {
  const bin = postgresBinDir();
  if (!bin) return null;
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? systemUser('postgres') : null;
  if (asRoot && !owner) throw new Error('running as root and there is no postgres user to run a private PostgreSQL as');
  const dir = mkdtempSync(join(tmpdir(), 'postlane-pg-'));
  const data = join(dir, 'data');
  if (owner) chownSync(dir, owner.uid, owner.gid);
  // Asynchronous, so that the clients and servers of the same process keep running meanwhile.
  const run = async (tool: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    await promisify(execFile)(file, argv, { timeout: 120_000 });
  };
  const port = await freePort();
  // fsync off: the tests restart the server, they never crash the machine, and a shared
  // machine's disk is slow. Sockets in the cluster's own directory, TCP on loopback only.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const logFile = join(dir, 'server.log');
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    await run('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode = 'fast') {
      await run('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-m', mode, '-w', '-t', '60', 'restart']);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
