// Imports and exports over HTTP and the CLI: bad rows named with their reasons, no
// resubscribing, suppressions untouched, the plan cap, a file that breaks after a committed
// batch, JSON arrays, the export's filters, and an export imported back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, databaseUrlOf, usingPostgres, type TestApp, type ApiClient } from '../helpers/app.ts';
import { BATCH_ROWS } from '../../src/resources/contacts/import/run.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

async function workspace(plan = 'pro') {
  const { workspace, api, key } = await app.newWorkspace({ plan });
  return { id: workspace.id, api, key };
}

async function upload(key: string, file: string, name: string, query = '', fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([file], { type: name.endsWith('.json') ? 'application/json' : 'text/csv' }), name);
  const response = await fetch(`${app.url}/v2/contacts/import${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as any };
}

test('a CSV with bad rows: each skipped row named with its reason, the rest imported into the audience', async () => {
  const { api, key } = await workspace();
  assert.equal((await api.post('/v2/custom-fields', { key: 'birthday', type: 'date' })).status, 201);
  const audience = (await api.post('/v2/audiences', { name: 'Imported' })).body;
  // Someone who unsubscribed from everything, a member who left the audience, a suppression.
  await api.post('/v2/contacts', { email: 'gone@example.com', unsubscribed: true });
  await api.post('/v2/contacts', { email: 'left@example.com', audiences: [audience.id] });
  await api.post(`/v2/audiences/${audience.id}/subscribers/left%40example.com`, { subscribed: false });
  await api.post('/v2/contacts', { email: 'member@example.com', first_name: 'Old', audiences: [audience.id] });
  await api.post('/v2/suppressions', { email: 'blocked@example.com', type: 'bounce' });

  const csv = [
    'Email,First Name,last_name,birthday,plan,unsubscribed',
    'ann@example.com,Ann,Lee,1990-01-31,gold,',
    'not-an-email,Bad,Row,,,',
    'bob@example.com,Bob,,31/01/1990,,',
    ',No,Email,,,',
    'gone@example.com,Gone,,,,',
    'left@example.com,Left,,,,',
    'member@example.com,New,,,,',
    'blocked@example.com,,,,,',
    'quit@example.com,,,,,yes',
    'ann@example.com,Annie,,,platinum,',
    'maybe@example.com,,,,,perhaps',
  ].join('\n');
  const res = await upload(key, csv, 'contacts.csv', `?audience_id=${audience.id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const s = res.body;
  assert.equal(s.status, 'completed');
  assert.equal(s.format, 'csv');
  assert.equal(s.rows, 11);
  assert.deepEqual(s.errors, [
    { row: 3, email: 'not-an-email', reason: 'invalid email address' },
    { row: 4, email: 'bob@example.com', reason: 'Invalid value for custom field "birthday": a date must be written YYYY-MM-DD' },
    { row: 5, email: null, reason: 'no email address' },
    { row: 12, email: 'maybe@example.com', reason: 'unsubscribed must be true or false, got "perhaps"' },
  ]);
  assert.equal(s.skipped, 4);
  assert.equal(s.created, 3, 'ann, blocked, quit');
  assert.equal(s.updated, 4, 'gone, left and member got names, ann again');
  assert.equal(s.unchanged, 0);
  assert.equal(s.subscribed, 2, 'ann and blocked joined');
  assert.equal(s.already_subscribed, 2, 'member, then ann again');
  assert.equal(s.kept_unsubscribed, 3, 'gone, left and quit are not subscribed by an import');
  assert.equal(s.suppressed, 1);
  assert.equal(s.committed_rows, 12);

  const ann = (await api.get('/v2/contacts/ann%40example.com')).body;
  assert.equal(ann.first_name, 'Annie', 'the later row wins');
  assert.equal(ann.last_name, 'Lee');
  assert.deepEqual(ann.custom_fields, { birthday: '1990-01-31', plan: 'platinum' });
  const gone = (await api.get('/v2/contacts/gone%40example.com')).body;
  assert.equal(gone.unsubscribed, true);
  assert.equal(gone.audiences[0].subscriber.subscribed, false);
  assert.equal((await api.get(`/v2/audiences/${audience.id}/subscribers/left%40example.com`)).body.subscribed, false);
  assert.equal((await api.get('/v2/contacts/member%40example.com')).body.first_name, 'New');
  assert.equal((await api.get('/v2/contacts/quit%40example.com')).body.unsubscribed, true);
  assert.equal((await api.get('/v2/suppressions/blocked%40example.com')).status, 200, 'the suppression stays');
  assert.equal((await api.get('/v2/contacts/bob%40example.com')).status, 404);
  assert.equal((await api.get(`/v2/audiences/${audience.id}`)).body.subscribers_count, 6, 'left, member, ann, blocked, gone, quit');
});

test('a JSON array as the streamed body; an unknown audience is 404 before anything is read; no email column is 400', async () => {
  const { api, key } = await workspace();
  const body = JSON.stringify([
    { email: 'j1@example.com', first_name: 'J', custom_fields: { tier: 2 } },
    'oops',
    { email: 'J2@Example.com', unsubscribed: true },
  ]);
  const res = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  const s = (await res.json()) as any;
  assert.equal(res.status, 200, JSON.stringify(s));
  assert.equal(s.format, 'json');
  assert.deepEqual([s.rows, s.created, s.skipped], [3, 2, 1]);
  assert.deepEqual(s.errors, [{ row: 2, email: null, reason: 'not an object' }]);
  assert.deepEqual((await api.get('/v2/contacts/j1%40example.com')).body.custom_fields, { tier: 2 });
  assert.equal((await api.get('/v2/contacts/j2%40example.com')).body.unsubscribed, true);

  const unknown = await upload(key, 'email\nx@example.com\n', 'a.csv', '?audience_id=aud_000000000000000000000000000');
  assert.equal(unknown.status, 404);
  const noEmail = await upload(key, 'name,phone\nAnn,123\n', 'a.csv');
  assert.equal(noEmail.status, 400);
  assert.equal(noEmail.body.status, 'failed');
  assert.match(noEmail.body.error, /no email column/);
  const broken = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '[{"email":"a@example.com"},',
  });
  assert.equal(broken.status, 400, 'nothing was committed');
  assert.match(((await broken.json()) as any).error, /not closed/);
});

test('the plan cap: rows beyond it are skipped with the reason and write nothing', async () => {
  const { api, key } = await workspace('payg');
  const audience = (await api.post('/v2/audiences', { name: 'Nearly full' })).body;
  await app.running.ctx.db.updateTable('audiences').set({ subscriber_count: 9_998 }).where('id', '=', audience.id).execute();
  const res = await upload(key, 'email\na@example.com\nb@example.com\nc@example.com\nd@example.com\n', 'cap.csv', '', {
    audience_id: 'Nearly full',
  });
  assert.equal(res.status, 200);
  assert.deepEqual([res.body.created, res.body.subscribed, res.body.skipped], [2, 2, 2]);
  assert.deepEqual(
    res.body.errors.map((e: any) => [e.row, e.email]),
    [
      [4, 'c@example.com'],
      [5, 'd@example.com'],
    ],
  );
  assert.match(res.body.errors[0].reason, /at its plan's limit of 10,000 subscribers/);
  assert.equal((await api.get('/v2/contacts/c%40example.com')).status, 404);
  assert.equal((await api.get(`/v2/audiences/${audience.id}`)).body.subscribers_count, 10_000);
});

test('a file that breaks after a committed batch: the summary says which rows were committed, nothing after them is written', async () => {
  const { api, key } = await workspace();
  const good = Array.from({ length: BATCH_ROWS * 3 + 10 }, (_, i) => `user${i}@example.com,User ${i}`);
  const csv = ['email,first_name', ...good, 'broken@example.com,"unclosed', 'after@example.com,After'].join('\n');
  const res = await upload(key, csv, 'big.csv');
  assert.equal(res.status, 422, JSON.stringify({ ...res.body, errors: undefined }));
  const s = res.body;
  assert.equal(s.status, 'failed');
  assert.ok(s.created >= BATCH_ROWS && s.created % BATCH_ROWS === 0, `whole batches are committed: ${s.created}`);
  assert.equal(s.committed_rows, s.created + 1, 'every row up to the last committed batch (row 1 is the header)');
  assert.match(s.error, new RegExp(`could not be read at row ${BATCH_ROWS * 3 + 12} `));
  assert.match(s.error, new RegExp(`Rows up to ${s.committed_rows} are committed`));
  assert.equal((await api.get('/v2/contacts?limit=1')).body.total_records, s.created);
  assert.equal((await api.get(`/v2/contacts/user${s.created}%40example.com`)).status, 404, 'the next batch was not written');
});

test('a batch the database refuses (PostgreSQL: a NUL character in text): the rows before it are committed, the summary says from which row nothing was written', {
  skip: !usingPostgres && 'SQLite stores NUL characters',
}, async () => {
  const { api, key } = await workspace('custom');
  const good = Array.from({ length: BATCH_ROWS + 3 }, (_, i) => ({ email: `nul${i}@example.com` }));
  const body = JSON.stringify([...good, { email: 'bad@example.com', first_name: 'a\u0000b' }, { email: 'later@example.com' }]);
  const res = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  assert.equal(res.status, 422);
  const s = (await res.json()) as any;
  assert.equal(s.status, 'failed');
  assert.equal(s.created, BATCH_ROWS);
  assert.equal(s.committed_rows, BATCH_ROWS);
  assert.match(
    s.error,
    new RegExp(
      `^row ${BATCH_ROWS + 1} onwards could not be written: .*Rows up to ${BATCH_ROWS} are committed; nothing after them was written\\.$`,
      's',
    ),
  );
  assert.equal((await api.get('/v2/contacts?limit=1')).body.total_records, BATCH_ROWS);
  assert.equal((await api.get('/v2/contacts/later%40example.com')).status, 404);
});

test('export: streamed CSV with the list filters; importing it into another workspace gives the same contacts', async () => {
  const { api, key } = await workspace();
  await api.post('/v2/custom-fields', { key: 'city', type: 'text' });
  const list = (await api.post('/v2/audiences', { name: 'Export me' })).body;
  await api.post('/v2/contacts', {
    email: 'e1@example.com',
    first_name: 'Comma, Name',
    custom_fields: { city: 'Oslo', extra: 'x"y' },
    audiences: [list.id],
  });
  await api.post('/v2/contacts', { email: 'e2@example.com', last_name: 'Two', unsubscribed: true });
  const res = await fetch(`${app.url}/v2/contacts/export`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
  assert.equal(res.headers.get('x-total-count'), '2', 'how many contacts follow, for a progress bar');
  const csv = await res.text();
  const lines = csv.trim().split('\r\n');
  assert.equal(lines[0], 'email,first_name,last_name,unsubscribed,audiences,city,custom_fields,id,created_at,updated_at');
  assert.equal(lines.length, 3);
  assert.match(
    lines.find((l) => l.startsWith('e1@'))!,
    /^e1@example\.com,"Comma, Name",,false,Export me,Oslo,"{""extra"":""x\\""y""}",con_/,
  );
  const filtered = await (
    await fetch(`${app.url}/v2/contacts/export?audience_id=${list.id}`, { headers: { authorization: `Bearer ${key}` } })
  ).text();
  assert.equal(filtered.trim().split('\r\n').length, 2);
  assert.equal(
    (await (await fetch(`${app.url}/v2/contacts/export?unsubscribed=true`, { headers: { authorization: `Bearer ${key}` } })).text())
      .trim()
      .split('\r\n').length,
    2,
  );

  const other = await workspace();
  await other.api.post('/v2/custom-fields', { key: 'city', type: 'text' });
  const back = await upload(other.key, csv, 'contacts.csv');
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.created, 2);
  const e1 = (await other.api.get('/v2/contacts/e1%40example.com')).body;
  assert.equal(e1.first_name, 'Comma, Name');
  assert.deepEqual(e1.custom_fields, { city: 'Oslo', extra: 'x"y' });
  assert.equal((await other.api.get('/v2/contacts/e2%40example.com')).body.unsubscribed, true);
});

test('progress through the API: with Accept: application/x-ndjson, a line per committed batch, then the summary', async () => {
  const { key } = await workspace('custom');
  const rows = BATCH_ROWS * 2 + 5;
  const csv = ['email', ...Array.from({ length: rows }, (_, i) => `progress${i}@example.com`)].join('\n');
  const res = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', accept: 'application/x-ndjson' },
    body: csv,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
  const lines = (await res.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const progress = lines.slice(0, -1);
  assert.deepEqual(
    progress.map((p) => [p.object, p.created]),
    [
      ['contact_import_progress', BATCH_ROWS],
      ['contact_import_progress', BATCH_ROWS * 2],
      ['contact_import_progress', rows],
    ],
  );
  assert.deepEqual(
    progress.map((p) => p.committed_rows),
    [BATCH_ROWS + 1, BATCH_ROWS * 2 + 1, rows + 1],
  );
  const summary = lines.at(-1);
  assert.equal(summary.object, 'contact_import');
  assert.equal(summary.status, 'completed');
  assert.equal(summary.created, rows);
  // Without the header: one JSON summary, as before.
  const plain = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body: 'email\nprogress0@example.com\n',
  });
  assert.equal((await plain.json()).unchanged, 1);
});

test('export follows the list sort across pages (ties by id, blanks last) and its filters', async () => {
  const { key } = await workspace('custom');
  const names = ['Ann', 'bob', '', 'Cy', 'ann'];
  const csv = ['email,first_name', ...Array.from({ length: 4600 }, (_, i) => `sorted${i}@example.com,${names[i % names.length]}`)].join(
    '\n',
  );
  assert.equal((await upload(key, csv, 'sorted.csv')).body.created, 4600);
  const exported = async (query: string) => {
    const res = await fetch(`${app.url}/v2/contacts/export?${query}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    return (await res.text())
      .trim()
      .split('\r\n')
      .slice(1)
      .map((line) => {
        const cells = line.split(',');
        return { email: cells[0], first: cells[1], id: cells[cells.length - 3] };
      });
  };
  for (const order of ['desc', 'asc'] as const) {
    const rows = await exported(`sort=first_name&order=${order}`);
    assert.equal(rows.length, 4600);
    assert.equal(new Set(rows.map((r) => r.email)).size, 4600, 'every contact once across the pages');
    const sign = order === 'asc' ? 1 : -1;
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1], rows[i]];
      if (a.first === '') assert.equal(b.first, '', `blank names come last (${order}, row ${i})`);
      else if (b.first !== '') {
        const byName = a.first.toLowerCase().localeCompare(b.first.toLowerCase());
        assert.ok(byName * sign <= 0, `sorted by first name ${order} at row ${i}: ${a.first} then ${b.first}`);
        if (byName === 0) assert.ok((a.id < b.id ? -1 : 1) * sign < 0, `ties by id ${order} at row ${i}`);
      }
    }
  }
  const byEmail = await exported('sort=email&order=asc&first_name.exact=Cy');
  assert.equal(byEmail.length, 920);
  assert.deepEqual(
    byEmail.map((r) => r.email),
    [...byEmail.map((r) => r.email)].sort(),
  );
  const newest = await exported('');
  assert.ok(newest[0].id > newest[newest.length - 1].id, 'the list default: newest first');
});

test('CLI: postlane contacts import FILE --audience ID prints a summary; export writes the CSV', async () => {
  const { id, api } = await workspace();
  const audience = (await api.post('/v2/audiences', { name: 'From the CLI' })).body;
  const dir = mkdtempSync(join(tmpdir(), 'postlane-import-'));
  const file = join(dir, 'people.csv');
  writeFileSync(file, ['email,first_name', 'cli1@example.com,One', 'bad address,Two', 'cli3@example.com,Three'].join('\n'));
  const env = { ...process.env, DATABASE_URL: await databaseUrlOf(app), DATA_DIR: app.config.dataDir, LOG_LEVEL: 'warn' };
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'postlane.js');
  const run = spawnSync(process.execPath, [bin, 'contacts', 'import', file, '--workspace', id, '--audience', audience.id], {
    env,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /Imported 3 rows/);
  assert.match(run.stdout, /created 2, updated 0, unchanged 0, skipped 1/);
  assert.match(run.stdout, /subscribed 2/);
  assert.match(run.stdout, /row 3 \(bad address\): invalid email address/);
  assert.match(run.stderr, /\[#+\] 100% 3 rows/);
  assert.equal((await api.get(`/v2/audiences/${audience.id}`)).body.subscribers_count, 2);

  const json = spawnSync(process.execPath, [bin, 'contacts', 'import', file, '--workspace', id, '--json'], { env, encoding: 'utf8' });
  assert.equal(JSON.parse(json.stdout).unchanged, 2);

  const out = join(dir, 'out.csv');
  const exported = spawnSync(process.execPath, [bin, 'contacts', 'export', '--workspace', id, '--audience', audience.id, '--out', out], {
    env,
    encoding: 'utf8',
  });
  assert.equal(exported.status, 0, exported.stderr);
  const lines = readFileSync(out, 'utf8').trim().split('\r\n');
  assert.deepEqual(
    lines
      .slice(1)
      .map((l) => l.split(',')[0])
      .sort(),
    ['cli1@example.com', 'cli3@example.com'],
  );
  assert.match(exported.stderr, /\[#+\] 100% 2 of 2 contacts/);
  const sorted = spawnSync(
    process.execPath,
    [bin, 'contacts', 'export', '--workspace', id, '--sort', 'email', '--order', 'desc', '--filter', 'first_name.contains=o'],
    { env, encoding: 'utf8' },
  );
  assert.equal(sorted.status, 0, sorted.stderr);
  assert.deepEqual(
    sorted.stdout
      .trim()
      .split('\r\n')
      .slice(1)
      .map((l) => l.split(',')[0]),
    ['cli1@example.com'],
    'One (o) but not Three',
  );
  const both = spawnSync(process.execPath, [bin, 'contacts', 'export', '--workspace', id, '--sort', 'email', '--order', 'desc'], {
    env,
    encoding: 'utf8',
  });
  assert.deepEqual(
    both.stdout
      .trim()
      .split('\r\n')
      .slice(1)
      .map((l) => l.split(',')[0]),
    ['cli3@example.com', 'cli1@example.com'],
  );
  const missing = spawnSync(process.execPath, [bin, 'contacts', 'import', join(dir, 'nope.csv'), '--workspace', id], {
    env,
    encoding: 'utf8',
  });
  assert.equal(missing.status, 2);
});

test('an import that fails before the end of its body: the answer comes, and the same connection serves the next request', async () => {
  const { key } = await workspace();
  const { port } = new URL(app.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const send = (method: string, path: string, body?: string, type = 'application/json') =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const headers = {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) }),
      };
      const request = http.request({ host: '127.0.0.1', port, method, path, agent, headers, timeout: 20_000 }, (response) => {
        let text = '';
        response
          .setEncoding('utf8')
          .on('data', (d) => (text += d))
          .on('end', () => resolve({ status: response.statusCode!, text }));
      });
      request.on('timeout', () => request.destroy(new Error(`${method} ${path}: no answer in 20 s`))).on('error', reject);
      request.end(body);
    });
  try {
    // Not JSON from its first byte, and far larger than what the parser reads before giving up.
    for (const size of [100_000, 2_000_000]) {
      const failed = await send('POST', '/v2/contacts/import?format=json', `{${'x'.repeat(size)}`);
      assert.equal(failed.status, 400, failed.text);
      assert.equal(JSON.parse(failed.text).status, 'failed');
      const next = await send('GET', '/v2/contacts');
      assert.equal(next.status, 200, next.text);
    }
    // The same as a multipart upload.
    const boundary = 'fuzzboundary';
    const form = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="c.json"\r\ncontent-type: application/json\r\n\r\n{${'x'.repeat(2_000_000)}\r\n--${boundary}--\r\n`;
    const multipart = await send('POST', '/v2/contacts/import', form, `multipart/form-data; boundary=${boundary}`);
    assert.equal(multipart.status, 400, multipart.text);
    assert.equal((await send('GET', '/v2/contacts')).status, 200);
    // An unknown audience is refused before the body is read: the connection goes on too.
    const unknown = await send('POST', '/v2/contacts/import?audience_id=aud_nothere', `[${'{"email":"a@example.com"},'.repeat(40_000)}{}]`);
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal((await send('GET', '/v2/contacts')).status, 200);
  } finally {
    agent.destroy();
  }
});
