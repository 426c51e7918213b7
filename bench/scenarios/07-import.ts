// Contact import at volume: a CSV of N contacts (default 1,000,000: email, first_name,
// last_name, a custom field) imported into one audience by `postlane contacts import` in a
// child process, on SQLite and, when BENCH_DATABASE_URL is set, on PostgreSQL (a fresh schema).
// Reported: contacts per second, the child's peak RSS (VmHWM, read while it runs), and beside
// them the physical limit measured in the same run: a plain multi-row insert of the same rows
// (contacts and their memberships, pre-built, no file) into tables with the same indexes.
// Also the CPU time per contact of each (steadier than rates on a shared machine).
// Aims: >= 50,000 contacts/s on SQLite, >= 30,000 on PostgreSQL, peak RSS < 300 MB.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import type { Scenario } from '../run.ts';
import { freshBenchDatabase } from '../lib.ts';
import { openDatabase, type Db } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { createWorkspace } from '../../src/resources/workspaces/service.ts';
import { createAudience } from '../../src/resources/audiences/service.ts';
import { newId } from '../../src/platform/ids.ts';
import { nowIso } from '../../src/platform/clock.ts';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000);
const AIMS = { sqlite: 50_000, postgres: 30_000 };
const AIM_RSS_MB = 300;
const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');

async function writeCsv(path: string): Promise<void> {
  const out = createWriteStream(path);
  out.write('email,first_name,last_name,city\n');
  const cities = ['Oslo', 'Lisbon', 'Lyon', 'Kyoto', 'Quito'];
  let chunk = '';
  for (let i = 0; i < ROWS; i++) {
    chunk += `person${i}@example${i % 97}.com,First${i},Last${i % 1000},${cities[i % 5]}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

interface Database {
  url: string;
  kind: 'sqlite' | 'postgres';
  open(): { db: Db; close(): Promise<void> };
  drop(): Promise<void>;
}

async function freshDatabase(kind: 'sqlite' | 'postgres', dir: string): Promise<Database> {
  const fresh = await freshBenchDatabase(dir, kind);
  const open = () => (fresh.schema ? openDatabase(process.env.BENCH_DATABASE_URL!, { schema: fresh.schema }) : openDatabase(fresh.url));
  return { url: fresh.url, kind, open, drop: fresh.drop };
}

/** Peak RSS in MB of a running process (VmHWM), or 0 when it cannot be read. */
function peakRssMb(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system, every thread) a running process has used, or 0. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

async function runImport(database: Database, file: string, workspaceId: string, audienceId: string) {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [MAIN, 'contacts', 'import', file, '--workspace', workspaceId, '--audience', audienceId, '--json'],
    {
      env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  let peak = 0;
  let cpu = 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, peakRssMb(child.pid!));
    cpu = Math.max(cpu, cpuSeconds(child.pid!));
  }, 50);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(poll);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`import failed (${code}): ${stdout}\n${stderr.slice(-2000)}`);
  const summary = JSON.parse(stdout);
  if (summary.created !== ROWS || summary.subscribed !== ROWS)
    throw new Error(`import counted ${summary.created} created, ${summary.subscribed} subscribed`);
  return { seconds, peak, cpu };
}

/** The physical limit: the same rows, pre-built, in multi-row inserts of 5,000-row transactions
 *  into copies of the two tables with the same indexes. */
async function plainInsert(database: Database): Promise<{ seconds: number; cpu: number }> {
  const { db, close } = database.open();
  try {
    const sqlite = database.kind === 'sqlite';
    const suffix = sqlite ? ' without rowid' : '';
    await sql
      .raw(
        `create table plain_contacts (id text primary key not null, workspace_id text not null, email text not null, first_name text, last_name text, custom_fields text not null, unsubscribed integer not null, created_at text not null, updated_at text not null)${suffix}`,
      )
      .execute(db);
    await sql.raw('create unique index plain_contacts_email on plain_contacts (workspace_id, email)').execute(db);
    await sql.raw('create index plain_contacts_created on plain_contacts (workspace_id, created_at)').execute(db);
    await sql
      .raw(
        `create table plain_subscribers (id text primary key not null, workspace_id text not null, audience_id text not null, contact_id text not null, subscribed integer not null, subscribed_at text, unsubscribed_at text, created_at text not null, updated_at text not null)${suffix}`,
      )
      .execute(db);
    await sql.raw('create unique index plain_subscribers_contact on plain_subscribers (contact_id, audience_id)').execute(db);
    await sql.raw('create index plain_subscribers_audience on plain_subscribers (audience_id, subscribed, contact_id)').execute(db);
    const perStatement = sqlite ? 3000 : 1000;
    const insert = (table: string, rows: unknown[][]) => {
      const width = rows[0].length;
      const tuples = rows.map((_, r) => `(${Array.from({ length: width }, (_, c) => (sqlite ? '?' : `$${r * width + c + 1}`)).join(',')})`);
      return CompiledQuery.raw(`insert into ${table} values ${tuples.join(',')}`, rows.flat());
    };
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    for (let base = 0; base < ROWS; base += 5000) {
      const now = nowIso();
      const contacts: unknown[][] = [];
      const members: unknown[][] = [];
      for (let i = base; i < Math.min(ROWS, base + 5000); i++) {
        const id = newId('con');
        contacts.push([id, 'wsp', `person${i}@example${i % 97}.com`, `First${i}`, `Last${i % 1000}`, '{"city":"Oslo"}', 0, now, now]);
        members.push([newId('sub'), 'wsp', 'aud', id, 1, now, null, now, now]);
      }
      await db.transaction().execute(async (tx) => {
        for (let i = 0; i < contacts.length; i += perStatement)
          await tx.executeQuery(insert('plain_contacts', contacts.slice(i, i + perStatement)));
        for (let i = 0; i < members.length; i += perStatement)
          await tx.executeQuery(insert('plain_subscribers', members.slice(i, i + perStatement)));
      });
    }
    const cpu = process.cpuUsage(cpuBefore);
    return { seconds: (performance.now() - started) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
  } finally {
    await close();
  }
}

async function measure(kind: 'sqlite' | 'postgres', dir: string, file: string): Promise<string[]> {
  const database = await freshDatabase(kind, dir);
  try {
    const { db, close } = database.open();
    let workspaceId: string;
    let audienceId: string;
    try {
      await migrateToLatest(db);
      workspaceId = (await createWorkspace(db, { name: 'bench', plan: 'custom' })).workspace.id;
      audienceId = (await db.transaction().execute((tx) => createAudience(tx, workspaceId, { name: 'Everyone' }))).id;
    } finally {
      await close();
    }
    const imported = await runImport(database, file, workspaceId, audienceId);
    const plain = await plainInsert(database);
    const plainSeconds = plain.seconds;
    const rate = ROWS / imported.seconds;
    const plainRate = ROWS / plainSeconds;
    // CPU per contact: steadier than rates on a busy machine (on PostgreSQL most of the work is
    // the server's, not counted here).
    const perContact = (seconds: number) => `${((seconds * 1e6) / ROWS).toFixed(1)} µs CPU/contact`;
    return [
      `${kind.padEnd(8)} import    ${Math.round(rate).toLocaleString('en').padStart(9)} contacts/s  (${imported.seconds.toFixed(1)} s, aim >= ${AIMS[kind].toLocaleString('en')}: ${rate >= AIMS[kind] ? 'met' : 'MISSED'})   peak RSS ${imported.peak.toFixed(0)} MB (aim < ${AIM_RSS_MB}: ${imported.peak > 0 && imported.peak < AIM_RSS_MB ? 'met' : 'MISSED'})   ${perContact(imported.cpu)} (all threads)`,
      `${kind.padEnd(8)} plain     ${Math.round(plainRate).toLocaleString('en').padStart(9)} rows/s      (${plainSeconds.toFixed(1)} s: contacts + memberships, multi-row inserts, same indexes)   import/plain ${(rate / plainRate).toFixed(2)}   ${perContact(plain.cpu)}`,
    ];
  } finally {
    await database.drop();
  }
}

export const scenario: Scenario = {
  name: 'import',
  description: `${ROWS.toLocaleString('en')} contacts from a CSV into one audience with postlane contacts import, on SQLite${process.env.BENCH_DATABASE_URL ? ' and PostgreSQL' : ' (set BENCH_DATABASE_URL for PostgreSQL too)'}, beside a plain multi-row insert of the same rows (aims: >= 50,000/s SQLite, >= 30,000/s PostgreSQL, peak RSS < 300 MB)`,
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'postlane-bench-import-'));
    try {
      const file = join(dir, 'contacts.csv');
      await writeCsv(file);
      const lines = [`file: ${(statSync(file).size / 1e6).toFixed(0)} MB, ${ROWS.toLocaleString('en')} rows`];
      lines.push(...(await measure('sqlite', dir, file)));
      if (process.env.BENCH_DATABASE_URL) lines.push(...(await measure('postgres', dir, file)));
      return { name: this.name, lines };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
