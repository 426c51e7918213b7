// Hostile import files against a real server process: a CSV of 50,000 columns and a JSON
// array of 50,000-field objects fail (the file, or its rows) with a clear message while the
// server's peak RSS stays within a bound and /healthz answers throughout; imports run one
// at a time per workspace and two per server, the others refused with 429 and retry-after;
// an import whose parsing outgrows its thread's heap ceiling fails with its own error while
// the process goes on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { freshDatabase, freshMigratedDb, freePort, startChildApp, startTestApp, urlWithSchema, type ChildApp } from '../helpers/app.ts';
import { checkAgainstContract } from '../helpers/contract.ts';
import { runImport } from '../../src/resources/contacts/import/run.ts';
import { createWorkspace } from '../../src/resources/workspaces/service.ts';

// The server's peak RSS may grow this much over its peak before the hostile files (measured
// after the bounds: about 20 MB; before them the wide CSV alone took it up by ~270 MB).
const RSS_GROWTH_BOUND_MB = 80;
const FILE_MB = 20;

const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** A CSV of `columns` columns (email first), `mb` megabytes long, made as it is sent. */
function* wideCsv(columns: number, mb: number): Generator<Buffer> {
  const header = `email,${Array.from({ length: columns - 1 }, (_, i) => `c${i}`).join(',')}\n`;
  yield Buffer.from(header);
  const cells = ',x'.repeat(columns - 1);
  let bytes = header.length;
  for (let i = 0; bytes < mb * 1024 * 1024; i++) {
    const row = Buffer.from(`wide${i}@example.com${cells}\n`);
    bytes += row.length;
    yield row;
  }
}

/** A JSON array of objects with `fields` fields each, `mb` megabytes long. */
function* wideJson(fields: number, mb: number): Generator<Buffer> {
  const rest = Array.from({ length: fields - 1 }, (_, i) => `,"f${i}":1`).join('');
  let bytes = 1;
  yield Buffer.from('[');
  for (let i = 0; bytes < mb * 1024 * 1024; i++) {
    const element = Buffer.from(`${i === 0 ? '' : ','}{"email":"json${i}@example.com"${rest}}`);
    bytes += element.length;
    yield element;
  }
  yield Buffer.from(']');
}

async function postImport(url: string, key: string, body: Iterable<Buffer>, type: string) {
  const response = await fetch(`${url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': type },
    body: Readable.toWeb(Readable.from(body)) as never,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as any };
}

/** Polls /healthz every 100 ms until stopped; every answer must be 200. */
function watchHealth(url: string) {
  let stopped = false;
  const failures: string[] = [];
  let checks = 0;
  const loop = (async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
        if (response.status !== 200) failures.push(`status ${response.status}`);
        await response.arrayBuffer();
      } catch (error) {
        failures.push((error as Error).message);
      }
      checks++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return { checks, failures: [...failures] };
  };
}

/** A `postlane serve` process of its own, on a fresh database, and its first key. */
async function startServer(): Promise<{ server: ChildApp; key: string; close(): Promise<void> }> {
  const database = await freshDatabase();
  const port = await freePort();
  const server = await startChildApp({
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    DATA_DIR: database.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
  });
  const key = /secret_[A-Za-z0-9]{32}/.exec(server.output())![0];
  return { server, key, close: async () => (await server.kill(), await database.drop()) };
}

test(`hostile shapes (${FILE_MB} MB each): 50,000 CSV columns fail the import, 50,000-field JSON objects are skipped rows; the server's peak RSS stays within ${RSS_GROWTH_BOUND_MB} MB of where it was; /healthz answers throughout`, {
  timeout: 600_000,
}, async (t) => {
  const { server, key, close } = await startServer();
  t.after(close);
  const pid = server.process.pid!;
  // One small import first: the server's import code loaded and its first worker run.
  const warm = await postImport(server.url, key, [Buffer.from('email\nwarm@example.com\n')], 'text/csv');
  assert.equal(warm.status, 200, JSON.stringify(warm.body));
  const before = peakRssMb(pid);
  const health = watchHealth(server.url);
  t.after(health);

  const wide = await postImport(server.url, key, wideCsv(50_000, FILE_MB), 'text/csv');
  assert.equal(wide.status, 400, JSON.stringify(wide.body).slice(0, 500));
  assert.equal(wide.body.status, 'failed');
  assert.match(
    wide.body.error,
    /^The CSV header has more than 1,000 columns; an import takes at most 1,000 \(email, names, unsubscribed and one per custom field\)\. Rows up to 0 are committed/,
  );
  assert.equal(wide.body.committed_rows, 0);

  const json = await postImport(server.url, key, wideJson(50_000, FILE_MB), 'application/json');
  // Each element is a bad row, skipped with its reason; the import itself completes.
  assert.equal(json.status, 200, JSON.stringify(json.body).slice(0, 500));
  assert.equal(json.body.created, 0);
  assert.ok(json.body.rows > 10, `${json.body.rows} elements read`);
  assert.equal(json.body.skipped, json.body.rows);
  assert.deepEqual(json.body.errors[0], { row: 1, email: null, reason: 'has 50,000 fields; at most 1,000 are taken' });

  // The other header bounds, on a small file (parsed on the server's thread) and a large one.
  const columns = Array.from({ length: 1000 }, (_, i) => `c${i}`).join(',');
  const justOver = await fetch(`${server.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body: `email,${columns}\na@example.com\n`,
  });
  assert.equal(justOver.status, 400);
  assert.match(((await justOver.json()) as any).error, /^The CSV header has 1,001 columns; an import takes at most 1,000/);
  const longNames = Array.from({ length: 900 }, (_, i) => `${'n'.repeat(200)}${i}`).join(',');
  const long = await postImport(server.url, key, [Buffer.from(`email,${longNames}\n`), Buffer.from('a@example.com\n')], 'text/csv');
  assert.equal(long.status, 400);
  assert.match(long.body.error, /^The CSV could not be read at row 1: its header row is longer than 131,072 bytes/);

  const { checks, failures } = await health();
  const after = peakRssMb(pid);
  console.log(`peak RSS ${before.toFixed(0)} MB before the hostile files, ${after.toFixed(0)} MB after (${checks} health checks)`);
  assert.ok(after - before < RSS_GROWTH_BOUND_MB, `peak RSS went from ${before.toFixed(0)} to ${after.toFixed(0)} MB`);
  assert.deepEqual(failures, []);
  assert.ok(checks > 5);
  assert.equal(server.process.exitCode, null, 'the server lives');
});

test('an import whose parsing outgrows its thread heap ceiling fails with its own message; the process goes on', {
  timeout: 300_000,
}, async () => {
  const { db, close } = await freshMigratedDb();
  try {
    const { workspace } = await createWorkspace(db, { name: 'heap', plan: 'pro', credits: 0, verified: true });
    // 1,000 columns of 1,000 characters: rows of a megabyte, each within every bound.
    const summary = await runImport(db, workspace.id, wideCsvOfCells(1000, 1000, 6), { format: 'csv', workerHeapMb: 4 });
    assert.equal(summary.status, 'failed', JSON.stringify(summary).slice(0, 500));
    assert.match(
      summary.error!,
      /^Reading the file took more than the 4 MB of memory an import may use; split it into smaller files or leave out columns it does not need\. Rows up to \d+ are committed/,
    );
    // The same file under the default ceiling imports whole.
    const whole = await runImport(db, workspace.id, wideCsvOfCells(1000, 1000, 6), { format: 'csv' });
    assert.equal(whole.status, 'completed', JSON.stringify(whole).slice(0, 500));
    assert.equal(whole.created, 6);
  } finally {
    await close();
  }
});

async function* wideCsvOfCells(columns: number, cellChars: number, rows: number): AsyncGenerator<Buffer> {
  yield Buffer.from(`email,${Array.from({ length: columns - 1 }, (_, i) => `c${i}`).join(',')}\n`);
  const cells = `,${'y'.repeat(cellChars)}`.repeat(columns - 1);
  for (let i = 0; i < rows; i++) yield Buffer.from(`heavy${i}@example.com${cells}\n`);
}

test('one import at a time per workspace, two per server: the others are refused with 429 and retry-after before their file is read', {
  timeout: 300_000,
}, async (t) => {
  const app = await startTestApp();
  // Held uploads are let go first, whatever happened: an open body would keep the app open.
  const held: Array<() => void> = [];
  t.after(async () => {
    for (const finish of held) finish();
    await app.close();
  });
  const a = await app.newWorkspace();
  const b = await app.newWorkspace();
  const c = await app.newWorkspace();

  /** An import whose body stays open until `finish` is called; resolves once it has committed
   *  its first batch (the NDJSON answer has begun), so it is certainly running. */
  async function holdImport(workspaceKey: string) {
    let finish!: () => void;
    const ended = new Promise<void>((resolve) => (finish = resolve));
    held.push(finish);
    async function* body() {
      yield Buffer.from('email\n');
      let rows = '';
      for (let i = 0; i < 6000; i++) rows += `held${i}@example.com\n`;
      yield Buffer.from(rows);
      await ended;
      yield Buffer.from('last@example.com\n');
    }
    const response = await fetch(`${app.url}/v2/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${workspaceKey}`, 'content-type': 'text/csv', accept: 'application/x-ndjson' },
      body: Readable.toWeb(Readable.from(body())) as never,
      duplex: 'half',
    } as RequestInit);
    assert.equal(response.status, 200);
    const text = response.text();
    return {
      async end() {
        finish();
        const lines = (await text)
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line));
        return lines.at(-1);
      },
    };
  }
  async function importSmall(workspaceKey: string) {
    const response = await fetch(`${app.url}/v2/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${workspaceKey}`, 'content-type': 'text/csv' },
      body: 'email\nlate@example.com\n',
    });
    const body = await response.json();
    await checkAgainstContract(app.url, 'POST', '/v2/contacts/import', response.status, response.headers.get('content-type'), body);
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: body as any };
  }

  const first = await holdImport(a.key);
  // Two more from the same workspace while the first runs: refused, the first unharmed.
  const [second, third] = await Promise.all([importSmall(a.key), importSmall(a.key)]);
  for (const answer of [second, third]) {
    assert.equal(answer.status, 429, JSON.stringify(answer.body));
    assert.equal(answer.retryAfter, '10');
    assert.deepEqual(answer.body, {
      error: 'Too many imports',
      message: 'An import into this workspace is already running; a workspace runs 1 at a time. Retry when it has finished.',
      limit: 1,
      current: 1,
      retry_after: 10,
    });
  }
  assert.equal((await fetch(`${app.url}/healthz`)).status, 200);
  // Another workspace's import runs beside it; a third workspace's is one too many for the server.
  const other = await holdImport(b.key);
  const third_workspace = await importSmall(c.key);
  assert.equal(third_workspace.status, 429);
  assert.equal(third_workspace.body.message, 'The server is running 2 imports, as many as it runs at once. Retry in a moment.');
  assert.equal(third_workspace.body.limit, 2);

  const summary = await first.end();
  assert.equal(summary.status, 'completed');
  assert.equal(summary.created, 6001);
  assert.equal((await other.end()).created, 6001);
  assert.equal((await a.api.get('/v2/contacts?search=late')).body.total_records, 0, 'a refused import wrote nothing');
  // Their places given back: the next import of each workspace runs.
  const again = await importSmall(c.key);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.created, 1);
  assert.equal((await importSmall(a.key)).status, 200);
});
