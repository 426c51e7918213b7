// The baseline of the send scenario on PostgreSQL: pgbench running, with the same number of
// clients, a transaction of the same shape as one send's writes — the content, email, event and
// job rows (copied from a real send, with fresh ids), the credit spend and both send counters
// of the one workspace — on the same schema, so the same tables and indexes.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { percentile } from './lib.ts';

const SERIAL_COLUMNS: Record<string, string[]> = { events: ['seq'], jobs: ['id'] };
// A delivery job's key is its email's id: unique among live jobs, so it is fresh too.
const UNIQUE_TEXT_COLUMNS = new Set(['id', 'token', 'message_id', 'key']);

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return `'${text.replaceAll("'", "''")}'`;
}

/** Writes the pgbench script copying the newest row of each table a send writes. */
async function sendScript(url: string, path: string, sharedRows: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const lines = ['begin;'];
    for (const table of ['email_contents', 'emails', 'events', 'jobs']) {
      const { rows } = await client.query(`select row_to_json(t) as row from ${table} t limit 1`);
      if (!rows[0]) throw new Error(`no ${table} row to copy: send once first`);
      const row = rows[0].row as Record<string, unknown>;
      const columns = Object.keys(row).filter((c) => !(SERIAL_COLUMNS[table] ?? []).includes(c));
      const values = columns.map((c) => (UNIQUE_TEXT_COLUMNS.has(c) ? 'md5(random()::text)' : literal(row[c])));
      lines.push(`insert into ${table} (${columns.map((c) => `"${c}"`).join(', ')}) values (${values.join(', ')});`);
    }
    const { rows } = await client.query('select id from workspaces limit 1');
    if (sharedRows) {
      const workspace = literal(rows[0].id);
      lines.push(`update workspaces set credits = credits - 1 where id = ${workspace} and credits >= 1;`);
      lines.push(
        `insert into send_window_counts (workspace_id, bucket, units) values (${workspace}, (extract(epoch from clock_timestamp()) * 100)::bigint * 10, 1) on conflict (workspace_id, bucket) do update set units = send_window_counts.units + 1;`,
      );
      lines.push(
        `insert into send_daily_counts (workspace_id, day, units) values (${workspace}, to_char(now() at time zone 'utc', 'YYYY-MM-DD'), 1) on conflict (workspace_id, day) do update set units = send_daily_counts.units + 1;`,
      );
    }
    lines.push('commit;');
    // pgbench reads one statement per line.
    writeFileSync(path, lines.map((l) => l.replaceAll('\n', ' ')).join('\n') + '\n');
  } finally {
    await client.end();
  }
}

/** Transactions per second pgbench commits with `clients` clients for `seconds` seconds; with
 *  `sharedRows` false, the four inserts alone (no row every client updates). */
export async function pgbenchSendRate(url: string, dir: string, clients: number, seconds: number, sharedRows = true): Promise<number> {
  const script = join(dir, `send-${sharedRows}.sql`);
  await sendScript(url, script, sharedRows);
  const result = spawnSync('pgbench', ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, url], {
    encoding: 'utf8',
  });
  const tps = /tps = ([\d.]+)/.exec(result.stdout);
  if (result.status !== 0 || !tps) throw new Error(`pgbench failed: ${result.stderr || result.stdout}`);
  return Number(tps[1]);
}

/** The p99 latency (ms) of pgbench committing the writes of one send at a fixed `rate` a second
 *  with `clients` clients, from when each transaction was due (its schedule lag included, as
 *  the send scenario's paced load counts from when each request was due). */
export async function pgbenchSendP99AtRate(url: string, dir: string, clients: number, seconds: number, rate: number): Promise<number> {
  const script = join(dir, 'send-true.sql');
  await sendScript(url, script, true);
  const prefix = join(dir, 'pgbench-paced');
  const result = spawnSync(
    'pgbench',
    ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-R', String(rate), '-l', '--log-prefix', prefix, '-f', script, url],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`pgbench failed: ${result.stderr || result.stdout}`);
  // Each line: client, transaction, latency µs, script, epoch s, µs, schedule lag µs.
  const latencies: number[] = [];
  for (const file of readdirSync(dir).filter((name) => name.startsWith('pgbench-paced'))) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const fields = line.split(' ');
      if (fields.length >= 7) latencies.push((Number(fields[2]) + Number(fields[6])) / 1000);
    }
  }
  if (latencies.length === 0) throw new Error('pgbench logged no transaction');
  return percentile(latencies, 99);
}
