// Makes the upgrade fixture of a release: runs THAT release (a checkout of its commit, with its
// node_modules) against a fresh SQLite file and a fresh PostgreSQL schema, fills every table
// through its API and CLI (test/upgrade/seed-api.ts; SQL only for tables no API reaches, see
// test/upgrade/fill-gaps.ts), checks that no table is empty, and writes into
// test/upgrade/fixtures/: NAME.sqlite.gz, NAME.postgres.sql.gz (pg_dump, plain SQL) and
// NAME.json (row counts per table, the ids and keys the upgrade test reads back).
//
//   git worktree add /tmp/fixture-src v0.1.0 && (cd /tmp/fixture-src && npm ci)
//   node scripts/make-upgrade-fixture.ts --source /tmp/fixture-src --name v0.1.0-3ed13c5 \
//     --postgres postgres://postgres@127.0.0.1:5432/postlane
//
// docs/releasing.md says when to run it.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { startDnsServer } from '../src/dev/dns-server.ts';
import { startSmtpSink } from '../src/dev/smtp-sink.ts';
import { freePort } from '../src/dev/ports.ts';
import { seedThroughApi, type SeededObjects } from '../test/upgrade/seed-api.ts';
import { fillGaps, type FixtureDb } from '../test/upgrade/fill-gaps.ts';
import { FIXTURE_ENCRYPTION_KEY, FIXTURE_SCHEMA, FIXTURES_DIR, type FixtureManifest } from '../test/upgrade/fixture.ts';

const { values } = parseArgs({
  options: {
    source: { type: 'string' },
    name: { type: 'string' },
    postgres: { type: 'string', default: process.env.TEST_DATABASE_URL },
    out: { type: 'string', default: FIXTURES_DIR },
    commit: { type: 'string' },
    'allow-skips': { type: 'boolean', default: false },
  },
});
if (!values.source || !values.name) {
  process.stderr.write(
    'usage: node scripts/make-upgrade-fixture.ts --source CHECKOUT --name vX.Y.Z-COMMIT [--postgres URL] [--out DIR] [--commit SHA]\n',
  );
  process.exit(2);
}
if (!values.postgres) {
  process.stderr.write('a PostgreSQL URL is needed (--postgres or TEST_DATABASE_URL): the fixture covers both dialects\n');
  process.exit(2);
}
const source = resolve(values.source);
const main = join(source, 'src', 'main.ts');
if (!existsSync(main) || !existsSync(join(source, 'node_modules'))) {
  process.stderr.write(`${source} must be a checkout of the release with its node_modules (npm ci there)\n`);
  process.exit(2);
}
// --commit for a source that is not a git checkout (`git archive COMMIT | tar -x -C DIR`).
const commit = values.commit ?? execFileSync('git', ['-C', source, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const releaseVersion = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')).version as string;
const log = (line: string) => process.stdout.write(`${line}\n`);

function run(env: Record<string, string>, args: string[]): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: source,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) =>
      code === 0 ? resolveRun(stdout) : reject(new Error(`postlane ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

async function makeOne(dialect: 'sqlite' | 'postgres', db: FixtureDb, databaseUrl: string, dataDir: string) {
  log(`\n${dialect}: release ${releaseVersion} (${commit}) from ${source}`);
  const dns = await startDnsServer();
  const sink = await startSmtpSink();
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200).end('ok'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const [httpPort, submissionPort, inboundPort] = [await freePort(), await freePort(), await freePort()];
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    ENCRYPTION_KEY: FIXTURE_ENCRYPTION_KEY,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpPort),
    PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
    SMTP_SUBMISSION_PORT: String(submissionPort),
    SMTP_INBOUND_PORT: String(inboundPort),
    MAIL_HOSTNAME: 'mail.postlane.test',
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    MX_PORT: String(sink.port),
    ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_POLL_MS: '50',
    VERIFY_SMTP_TIMEOUT_MS: '2000',
    LOG_LEVEL: 'warn',
  };
  const created = JSON.parse(
    await run(env, [
      'workspace',
      'create',
      '--name',
      'Fixture',
      '--plan',
      'pro',
      '--credits',
      '100000',
      '--verified',
      '--member',
      'owner@example.org',
      '--json',
    ]),
  );
  // A send rate high enough for the seeder's quick succession of sends.
  await run(env, ['workspace', 'update', created.workspace.id, '--send-rate', '1000', '--json']);
  const server = spawn(process.execPath, [main, 'serve'], {
    cwd: source,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let seeded: SeededObjects;
  try {
    const url = `http://127.0.0.1:${httpPort}`;
    for (let tries = 0; ; tries++) {
      if (server.exitCode !== null) throw new Error(`the release's server exited (${server.exitCode})`);
      if (
        await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (tries > 600) throw new Error('the release did not become healthy');
      await new Promise((r) => setTimeout(r, 100));
    }
    seeded = await seedThroughApi(
      {
        url,
        key: created.api_key,
        workspaceId: created.workspace.id,
        dns,
        sink,
        inboundPort,
        submissionPort,
        webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        cli: (args) => run(env, args),
      },
      log,
    );
    seeded.ids.workspace = created.workspace.id;
    // Let the workers finish what is due (deliveries, webhook posts) before stopping.
    await new Promise((r) => setTimeout(r, 2000));
  } finally {
    await new Promise<void>((r) => (server.exitCode !== null ? r() : (server.once('exit', () => r()), server.kill('SIGTERM'))));
    await dns.close();
    await sink.close();
    receiver.close();
  }
  // A seeding step this release refused means the seeder needs a change for it (or, with
  // --allow-skips, that its tables are filled in SQL by fill-gaps.ts).
  if (seeded.skipped.length > 0 && !values['allow-skips']) throw new Error(`${dialect}: steps failed:\n  ${seeded.skipped.join('\n  ')}`);
  const filled = await fillGaps(db, seeded.ids);
  for (const table of filled) log(`  SQL   ${table} (no API of this release writes it in a fixture run)`);
  const counts: Record<string, number> = {};
  for (const table of await db.tables()) counts[table] = await db.count(table);
  const empty = Object.entries(counts)
    .filter(([, n]) => n === 0)
    .map(([t]) => t);
  if (empty.length > 0) throw new Error(`${dialect}: tables still empty: ${empty.join(', ')}`);
  log(`  ${Object.keys(counts).length} tables, ${Object.values(counts).reduce((a, b) => a + b, 0)} rows`);
  return { seeded, counts, filled_in_sql: filled };
}

const outDir = resolve(values.out!);
const manifest: FixtureManifest = {
  release: releaseVersion,
  commit,
  name: values.name,
  created_at: new Date().toISOString(),
  encryption_key: FIXTURE_ENCRYPTION_KEY,
  dialects: {} as FixtureManifest['dialects'],
};

// SQLite: a fresh file in a temporary DATA_DIR.
{
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-fixture-'));
  const file = join(dataDir, 'postlane.db');
  const sqlite = sqliteFixtureDb(file);
  try {
    manifest.dialects.sqlite = await makeOne('sqlite', sqlite, `sqlite:${file}`, dataDir);
    sqlite.raw().exec('PRAGMA wal_checkpoint(TRUNCATE); VACUUM;');
    sqlite.raw().close();
    writeFileSync(join(outDir, `${values.name}.sqlite.gz`), gzipSync(readFileSync(file), { level: 9 }));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// PostgreSQL: a fresh schema of a fixed name (the test renames it on restore).
{
  const admin = new pg.Client({ connectionString: values.postgres });
  await admin.connect();
  await admin.query(`drop schema if exists ${FIXTURE_SCHEMA} cascade`);
  await admin.query(`create schema ${FIXTURE_SCHEMA}`);
  const schemaUrl = `${values.postgres}${values.postgres.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${FIXTURE_SCHEMA}`)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'postlane-fixture-'));
  const client = new pg.Client({ connectionString: schemaUrl });
  await client.connect();
  try {
    manifest.dialects.postgres = await makeOne('postgres', postgresFixtureDb(client), schemaUrl, dataDir);
    // --inserts: plain statements that one simple query can replay (COPY … FROM stdin needs psql).
    const dump = execFileSync('pg_dump', ['--no-owner', '--no-privileges', '--inserts', '--schema', FIXTURE_SCHEMA, values.postgres], {
      maxBuffer: 256 * 1024 * 1024,
    });
    writeFileSync(join(outDir, `${values.name}.postgres.sql.gz`), gzipSync(dump, { level: 9 }));
  } finally {
    await client.end();
    await admin.query(`drop schema if exists ${FIXTURE_SCHEMA} cascade`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

writeFileSync(join(outDir, `${values.name}.json`), `${JSON.stringify(manifest, null, 2)}\n`);
log(`\nwrote ${values.name}.{sqlite.gz,postgres.sql.gz,json} in ${outDir}`);

function sqliteFixtureDb(file: string): FixtureDb & { raw(): DatabaseSync } {
  let handle: DatabaseSync | null = null;
  const raw = () => (handle ??= new DatabaseSync(file));
  return {
    dialect: 'sqlite',
    raw,
    async tables() {
      return raw()
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
        .all()
        .map((r) => String(r.name));
    },
    async count(table) {
      return Number(raw().prepare(`select count(*) as n from "${table}"`).get()!.n);
    },
    async columns(table) {
      return raw()
        .prepare(`pragma table_info("${table}")`)
        .all()
        .map((r) => ({
          name: String(r.name),
          notNull: Boolean(r.notnull) && r.dflt_value === null && !r.pk,
          type: String(r.type).toLowerCase(),
        }));
    },
    async query(text, params = []) {
      return raw()
        .prepare(text)
        .all(...(params as never[])) as Array<Record<string, unknown>>;
    },
  };
}

function postgresFixtureDb(client: pg.Client): FixtureDb {
  const toPg = (text: string) => {
    let i = 0;
    return text.replace(/\?/g, () => `$${++i}`);
  };
  return {
    dialect: 'postgres',
    async tables() {
      const { rows } = await client.query(
        "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
      );
      return rows.map((r) => String(r.name));
    },
    async count(table) {
      return Number((await client.query(`select count(*) as n from "${table}"`)).rows[0].n);
    },
    async columns(table) {
      const { rows } = await client.query(
        'select column_name, is_nullable, column_default, data_type from information_schema.columns where table_schema = current_schema() and table_name = $1 order by ordinal_position',
        [table],
      );
      return rows.map((r) => ({
        name: r.column_name,
        notNull: r.is_nullable === 'NO' && r.column_default === null,
        type: String(r.data_type),
      }));
    },
    async query(text, params = []) {
      return (await client.query(toPg(text), params as unknown[])).rows;
    },
  };
}
