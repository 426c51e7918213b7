// Verification lists (https://emailit.com/docs/api-reference/email-verifications/lists.md) against
// loopback DNS and mail servers: create (counts, credits, all or nothing), background verification
// in full mode to `completed`, stats, paged results, XLSX and CSV exports read back, per-MX
// politeness, errors, tenancy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { eventually, type ApiClient } from '../helpers/app.ts';
import { startVerificationApp, type VerificationApp } from '../email-verifications/helpers.ts';
import { checkEventPayload } from '../../src/resources/events/payloads.ts';
import { getCredits } from '../../src/platform/credits.ts';
import { EXPORT_COLUMNS } from '../../src/resources/email-verification-lists/export.ts';

// Cells read as the text they are (exceljs otherwise tries every cell against date formats,
// which takes most of a minute for 10,000 rows).
const CSV_AS_TEXT = { map: (value: string) => value } as never;

let app: VerificationApp;
before(async () => {
  app = await startVerificationApp();
});
after(() => app.close());

const ZERO_RESULTS = { safe: 0, role: 0, catch_all: 0, unknown: 0, inbox_full: 0, disabled: 0, disposable: 0, invalid: 0 };

async function createList(api: ApiClient, name: string, emails: string[]) {
  const res = await api.post('/v2/email-verification-lists', { name, emails });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function completed(api: ApiClient, id: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const res = await api.get(`/v2/email-verification-lists/${id}`);
      assert.equal(res.status, 200, res.text);
      return res.body.status === 'completed' && res.body;
    },
    timeoutMs,
    100,
  );
}

async function allResults(api: ApiClient, id: string, limit = 100) {
  const items: any[] = [];
  for (let page = 1; ; page++) {
    const res = await api.get(`/v2/email-verification-lists/${id}/results?page=${page}&limit=${limit}`);
    assert.equal(res.status, 200, res.text);
    items.push(...res.body.data);
    if (!res.body.next_page_url) return items;
  }
}

async function listEvents(workspaceId: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('type', 'like', 'email_verification%')
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ type: row.type, object: JSON.parse(row.data) }));
}

// What each address of the mixed list must come out as.
const EXPECTED: Record<string, { result: string; deliverable: boolean | null; catch_all: boolean | null; outcome: string }> = {
  'jane@acme.test': { result: 'safe', deliverable: true, catch_all: false, outcome: 'accepted' },
  'full@acme.test': { result: 'inbox_full', deliverable: false, catch_all: false, outcome: 'inbox_full' },
  'disabled@acme.test': { result: 'disabled', deliverable: false, catch_all: false, outcome: 'disabled' },
  'paul.smith@acme.test': { result: 'unknown', deliverable: false, catch_all: false, outcome: 'rejected' },
  'info@acme.test': { result: 'role', deliverable: true, catch_all: false, outcome: 'accepted' },
  'someone@catchall.test': { result: 'unknown', deliverable: true, catch_all: true, outcome: 'accepted' },
  'jane@grey.test': { result: 'unknown', deliverable: null, catch_all: null, outcome: 'greylisted' },
  'jane@silent.test': { result: 'unknown', deliverable: null, catch_all: null, outcome: 'timeout' },
  'jane@mailinator.com': { result: 'disposable', deliverable: true, catch_all: true, outcome: 'accepted' },
  'jane@nomx.test': { result: 'invalid', deliverable: false, catch_all: null, outcome: 'no_mx' },
};
const MIXED_INPUT = [
  ' Jane@Acme.TEST ',
  'jane@acme.test',
  'not an address',
  'full@acme.test',
  'disabled@acme.test',
  'paul.smith@acme.test',
  'info@acme.test',
  'someone@catchall.test',
  'JANE@grey.test',
  'jane@silent.test',
  'jane@mailinator.com',
  'jane@nomx.test',
  'also@@bad',
];

test('a mixed list: counts, credits up front, processing → completed with stats, results in order, events', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 1000 });
  const created = await createList(api, 'Newsletter import', MIXED_INPUT);
  assert.match(created.id, /^evl_[A-Za-z0-9]{27}$/);
  const total = Object.keys(EXPECTED).length;
  assert.deepEqual(created, {
    object: 'email_verification_list',
    id: created.id,
    name: 'Newsletter import',
    status: 'processing',
    stats: {
      total_emails: total,
      processed_emails: 0,
      successful_verifications: 0,
      failed_verifications: 0,
      pending_emails: total,
      results: ZERO_RESULTS,
    },
    created_at: created.created_at,
    updated_at: created.updated_at,
    valid_emails_count: total + 1,
    unique_emails_count: total,
    dispatched_jobs: total,
  });
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 1000 - total * 5);

  const done = await completed(api, created.id);
  assert.deepEqual(done.stats, {
    total_emails: total,
    processed_emails: total,
    successful_verifications: total,
    failed_verifications: 0,
    pending_emails: 0,
    results: { safe: 1, role: 1, catch_all: 2, unknown: 4, inbox_full: 1, disabled: 1, disposable: 1, invalid: 1 },
  });

  const results = await allResults(api, created.id, 3);
  assert.deepEqual(
    results.map((r) => r.email),
    Object.keys(EXPECTED),
  );
  for (const item of results) {
    const expected = EXPECTED[item.email];
    assert.equal(item.object, 'email_verification');
    assert.equal(item.mode, 'full');
    assert.equal(item.status, 'completed');
    assert.deepEqual(
      { result: item.result, deliverable: item.checks.deliverable, catch_all: item.checks.catch_all, outcome: item.mailbox_check.outcome },
      expected,
      item.email,
    );
  }

  const events = await listEvents(workspace.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['email_verification_list.created', 'email_verification_list.updated'],
  );
  for (const event of events) assert.deepEqual(checkEventPayload(event.type, event.object), []);
  assert.equal(events[0].object.status, 'processing');
  assert.deepEqual(events[1].object, done);
});

test('results: default limit 50, page URLs, pending rows while processing; the list endpoint and its status filter', async () => {
  const { api } = await app.newWorkspace({ credits: 10_000 });
  const emails = Array.from({ length: 120 }, (_, i) => `person${i}@catchall.test`);
  const created = await createList(api, 'Paged', emails);
  const first = await api.get(`/v2/email-verification-lists/${created.id}/results`);
  assert.equal(first.status, 200);
  assert.equal(first.body.data.length, 50);
  assert.equal(first.body.previous_page_url, null);
  assert.equal(first.body.next_page_url, `/v2/email-verification-lists/${created.id}/results?page=2`);
  for (const item of first.body.data) assert.ok(['pending', 'completed'].includes(item.status));
  await completed(api, created.id);
  const third = await api.get(`/v2/email-verification-lists/${created.id}/results?page=3`);
  assert.deepEqual(
    third.body.data.map((r: any) => r.email),
    emails.slice(100),
  );
  assert.equal(third.body.next_page_url, null);
  const searched = await api.get(`/v2/email-verification-lists/${created.id}/results?search=person11`);
  assert.deepEqual(
    searched.body.data.map((r: any) => r.email),
    [
      'person11@catchall.test',
      'person110@catchall.test',
      'person111@catchall.test',
      'person112@catchall.test',
      'person113@catchall.test',
      'person114@catchall.test',
      'person115@catchall.test',
      'person116@catchall.test',
      'person117@catchall.test',
      'person118@catchall.test',
      'person119@catchall.test',
    ],
  );

  const second = await createList(api, 'Second', ['jane@acme.test']);
  const all = await api.get('/v2/email-verification-lists');
  assert.equal(all.status, 200);
  assert.deepEqual(
    all.body.data.map((l: any) => l.id),
    [second.id, created.id],
  );
  await completed(api, second.id);
  const done = await api.get('/v2/email-verification-lists?status=completed&limit=1');
  assert.equal(done.body.data.length, 1);
  assert.ok(done.body.next_page_url);
  const processing = await api.get('/v2/email-verification-lists?status=processing');
  assert.deepEqual(processing.body.data, []);
  assert.equal((await api.get('/v2/email-verification-lists?status=paused')).status, 400);
});

test('export: XLSX and CSV hold every result in order, read back with exceljs', async () => {
  const { api, key } = await app.newWorkspace({ credits: 1000 });
  const created = await createList(api, 'Export: Q1/2026', MIXED_INPUT);
  await completed(api, created.id);
  const results = await allResults(api, created.id);

  const exported = await download(key, created.id);
  assert.equal(exported.status, 200);
  assert.equal(exported.contentType, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  assert.equal(exported.disposition, 'attachment; filename="Export_ Q1_2026.xlsx"');
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(exported.body as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0];
  assert.deepEqual(rowValues(sheet, 1), [...EXPORT_COLUMNS]);
  assert.equal(sheet.rowCount, results.length + 1);
  const column = (name: string) => EXPORT_COLUMNS.indexOf(name as never);
  results.forEach((item, i) => {
    const row = rowValues(sheet, i + 2);
    assert.equal(row[column('email')], item.email);
    assert.equal(row[column('result')], item.result);
    assert.equal(row[column('score')], item.score);
    assert.equal(row[column('risk')], item.risk);
    assert.equal(row[column('deliverable')], item.checks.deliverable);
    assert.equal(row[column('catch_all')], item.checks.catch_all);
    assert.equal(row[column('mailbox_check')], item.mailbox_check.outcome);
  });

  const csv = await download(key, created.id, 'csv');
  assert.equal(csv.status, 200);
  assert.equal(csv.contentType, 'text/csv; charset=utf-8');
  assert.equal(csv.disposition, 'attachment; filename="Export_ Q1_2026.csv"');
  const csvBook = new ExcelJS.Workbook();
  const csvSheet = await csvBook.csv.read(Readable.from(csv.body), CSV_AS_TEXT);
  assert.deepEqual(rowValues(csvSheet, 1), [...EXPORT_COLUMNS]);
  assert.equal(csvSheet.rowCount, results.length + 1);
  results.forEach((item, i) => {
    const row = rowValues(csvSheet, i + 2);
    assert.equal(row[column('email')], item.email);
    assert.equal(row[column('result')], item.result);
    assert.equal(Number(row[column('score')]), item.score);
  });
});

test('export: an address a spreadsheet would run as a formula comes out neutralised in the CSV; XLSX cells are typed text, never formulas', async () => {
  const { api, key } = await app.newWorkspace({ credits: 1000 });
  const hostile = ['=hyperlink@acme.test', '+1@acme.test', '-2@acme.test', '@sum@acme.test'];
  const created = await createList(api, 'Formulas', [...hostile, 'jane@acme.test']);
  await completed(api, created.id);
  const results = await allResults(api, created.id);
  const stored = results.map((item) => item.email);
  const csv = await download(key, created.id, 'csv');
  const text = csv.body.toString('utf8');
  const csvSheet = await new ExcelJS.Workbook().csv.read(Readable.from(csv.body), CSV_AS_TEXT);
  const emails = stored.map((_, i) => rowValues(csvSheet, i + 2)[0]);
  assert.deepEqual(
    emails,
    stored.map((email) => (/^[=+\-@]/.test(email) ? `'${email}` : email)),
  );
  for (const email of stored.filter((e) => /^[=+\-@]/.test(e)))
    assert.ok(text.includes(`"'${email}"`), `${email} quoted with its quote prefix`);
  assert.ok(
    stored.some((e) => e.startsWith('=')),
    'the list kept the address as given',
  );

  const xlsx = await download(key, created.id);
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(xlsx.body as unknown as ArrayBuffer);
  stored.forEach((email, i) => {
    const cell = book.worksheets[0].getRow(i + 2).getCell(1);
    assert.equal(cell.type, ExcelJS.ValueType.String, `${email} is a text cell`);
    assert.equal(cell.value, email);
  });
});

/** The export as bytes (apiClient reads bodies as text). */
async function download(key: string, id: string, format?: string) {
  const response = await fetch(`${app.url}/v2/email-verification-lists/${id}/export${format ? `?format=${format}` : ''}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    disposition: response.headers.get('content-disposition'),
    body,
  };
}

function rowValues(sheet: ExcelJS.Worksheet, n: number): unknown[] {
  const values = sheet.getRow(n).values as unknown[];
  return Array.from({ length: EXPORT_COLUMNS.length }, (_, i) => values[i + 1] ?? null);
}

test('never more than MAX_CONNECTIONS_PER_MX connections to one mail server at once; many addresses per session', async () => {
  const { api } = await app.newWorkspace({ credits: 10_000 });
  app.mx.reset();
  app.mx.rcptDelayMs = 40;
  try {
    const emails = Array.from({ length: 60 }, (_, i) => `user${i}@catchall.test`);
    const created = await createList(api, 'Polite', emails);
    await completed(api, created.id);
    // Sessions of up to 20 addresses: three connections, each taking its share.
    assert.equal(app.mx.connections, 3);
    assert.deepEqual(app.mx.rcpts.filter((rcpt) => emails.includes(rcpt)).sort(), [...emails].sort());
    assert.ok(app.mx.maxOpenConnections <= 3, `at most 3 at once, saw ${app.mx.maxOpenConnections}`);
    assert.equal(app.mx.dataCommands, 0);
  } finally {
    app.mx.rcptDelayMs = 0;
  }
});

test('402 when the credits do not cover every unique address: nothing created, nothing charged', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 14 });
  const res = await api.post('/v2/email-verification-lists', {
    name: 'Too big',
    emails: ['a@acme.test', 'b@acme.test', 'c@acme.test', 'A@acme.test'],
  });
  assert.equal(res.status, 402);
  assert.deepEqual(res.body, {
    error: 'Insufficient credits',
    message: 'This request needs 15 credits but the workspace has 14 available.',
  });
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 14);
  const db = app.running.ctx.db;
  assert.equal((await db.selectFrom('email_verification_lists').select('id').where('workspace_id', '=', workspace.id).execute()).length, 0);
  assert.equal((await db.selectFrom('email_verifications').select('id').where('workspace_id', '=', workspace.id).execute()).length, 0);
  assert.deepEqual(await listEvents(workspace.id), []);
  // Duplicates are charged once: three unique addresses fit.
  const fits = await createList(api, 'Fits', ['a@acme.test', 'A@acme.test', 'b@acme.test']);
  assert.equal(fits.unique_emails_count, 2);
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 4);
});

test('400: no name, no addresses, more than 10,000, none valid', async () => {
  const { workspace, api } = await app.newWorkspace({ credits: 1_000_000 });
  const bodies = [
    { emails: ['jane@acme.test'] },
    { name: '', emails: ['jane@acme.test'] },
    { name: 'x'.repeat(256), emails: ['jane@acme.test'] },
    { name: 'Empty', emails: [] },
    { name: 'Missing' },
    { name: 'Not strings', emails: [42] },
    { name: 'Too many', emails: Array.from({ length: 10_001 }, (_, i) => `u${i}@acme.test`) },
    { name: 'None valid', emails: ['nope', 'also@@bad'] },
  ];
  for (const body of bodies) {
    const res = await api.post('/v2/email-verification-lists', body);
    assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text.slice(0, 200)}`);
    assert.equal(res.body.statusCode, 400);
    assert.equal(res.body.error, 'Bad Request');
    assert.equal(typeof res.body.message, 'string');
  }
  assert.equal(await getCredits(app.running.ctx.db, workspace.id), 1_000_000);
});

test("404 for an unknown id and for another workspace's list; lists are per workspace", async () => {
  const mine = await app.newWorkspace({ credits: 100 });
  const theirs = await app.newWorkspace({ credits: 100 });
  const created = await createList(mine.api, 'Private', ['jane@acme.test']);
  for (const path of ['', '/results', '/export']) {
    const other = await theirs.api.get(`/v2/email-verification-lists/${created.id}${path}`);
    assert.equal(other.status, 404, path);
    assert.deepEqual(other.body, { error: 'Email verification list not found' });
    assert.equal((await mine.api.get(`/v2/email-verification-lists/evl_${'x'.repeat(27)}${path}`)).status, 404);
    assert.equal((await mine.api.get(`/v2/email-verification-lists/not-an-id${path}`)).status, 404);
  }
  assert.deepEqual((await theirs.api.get('/v2/email-verification-lists')).body.data, []);
  await completed(mine.api, created.id);
});
