// CSV exports opened in a spreadsheet: text that would run as a formula (planted anonymously
// through the public subscribe page and the subscribe-by-token endpoint, as an attacker
// would) comes out neutralised, a single quote before it and the cell quoted, in the API's
// export and the CLI's; numbers, ordinary names and addresses come out as they are, and the
// export imports back to exactly the values planted. (The verification-list export:
// test/email-verification-lists/lists.test.ts.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { startTestApp, databaseUrlOf, type TestApp } from '../helpers/app.ts';
import { checkAgainstContract } from '../helpers/contract.ts';
import { csvCell, restoreNeutralised } from '../../src/platform/csv.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

const HOSTILE = ['=HYPERLINK("http://x","y")', '+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1', ' =1+1', "'=1"];
// What a spreadsheet would run: a cell starting with = + - @, a tab or a carriage return.
const FORMULA = /^[=+\-@\t\r]/;

/** Plants HOSTILE[i] as contact i's first name (the hosted subscribe page, a plain HTML form)
 *  and as its `note` custom field (the subscribe-by-token endpoint): no key for either. */
async function plant(token: string) {
  for (const [i, value] of HOSTILE.entries()) {
    const email = `visitor${i}@example.com`;
    const page = await fetch(`${app.url}/subscribe/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, first_name: value, last_name: 'Lee' }),
    });
    assert.equal(page.status, 200, await page.text());
  }
  const visitor = app.as(null);
  for (const [i, value] of HOSTILE.entries()) {
    const res = await visitor.post(`/v1/audiences/subscribe/${token}`, {
      email: `field${i}@example.com`,
      first_name: 'Ann',
      custom_fields: { note: value, score: -5 - i },
    });
    assert.ok(res.status === 201 || res.status === 200, res.text);
  }
}

function rowsOf(csv: string): Record<string, string>[] {
  return parse(csv, { columns: true, bom: true }) as Record<string, string>[];
}

/** Every cell of the export, checked: none a spreadsheet would run, except numbers. */
function assertNeutralised(csv: string) {
  const rows = rowsOf(csv);
  for (const row of rows) {
    for (const [column, cell] of Object.entries(row)) {
      if (column === 'score') continue;
      assert.doesNotMatch(cell, FORMULA, `${column} of ${row.email}: ${JSON.stringify(cell)}`);
    }
  }
  const byEmail = new Map(rows.map((row) => [row.email, row]));
  for (const [i, value] of HOSTILE.entries()) {
    const visitor = byEmail.get(`visitor${i}@example.com`)!;
    const stored = value.trim() === value ? value : value.trim();
    // The public page trims what it is given; what was stored is what must come back.
    assert.equal(visitor.first_name, `'${stored}`, `first name ${JSON.stringify(value)}`);
    assert.equal(visitor.last_name, 'Lee');
    const field = byEmail.get(`field${i}@example.com`)!;
    assert.equal(field.note, `'${value}`, `note ${JSON.stringify(value)}`);
    // A number field's negative number is a number to a spreadsheet, never a formula: as it is.
    assert.equal(field.score, String(-5 - i));
    assert.equal(field.first_name, 'Ann');
  }
  // Every neutralised cell is quoted in the file itself, as OWASP's guidance says.
  assert.ok(csv.includes(`"'=HYPERLINK(""http://x"",""y"")"`), 'the HYPERLINK cell is quoted with its quote prefix');
  assert.ok(csv.includes(`,"'+1",`) && csv.includes(`"'@SUM(A1)"`) && csv.includes(`"'-2+3"`));
  assert.ok(csv.includes('"\'\t=1"') && csv.includes('"\'\r=1"'));
}

test('contacts export (API and CLI): formulas planted through the public subscribe page come out neutralised; numbers, names and addresses as they are; the file imports back exactly', async () => {
  const { workspace, api, key } = await app.newWorkspace();
  assert.equal((await api.post('/v2/custom-fields', { key: 'note', type: 'text' })).status, 201);
  assert.equal((await api.post('/v2/custom-fields', { key: 'score', type: 'number' })).status, 201);
  const audience = (await api.post('/v2/audiences', { name: 'Signups', visibility: 'public' })).body;
  await plant(audience.token);
  const planted = (await api.get('/v2/contacts?limit=100')).body.data as Array<{
    email: string;
    first_name: string;
    custom_fields: Record<string, unknown>;
  }>;
  assert.equal(planted.length, HOSTILE.length * 2);
  assert.ok(
    planted.some((c) => c.custom_fields.note === '=HYPERLINK("http://x","y")'),
    'the attack is stored as sent',
  );

  const response = await fetch(`${app.url}/v2/contacts/export?sort=email&order=asc`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(response.status, 200);
  const csv = await response.text();
  await checkAgainstContract(app.url, 'GET', '/v2/contacts/export', response.status, response.headers.get('content-type'), csv);
  assertNeutralised(csv);

  const bin = join(import.meta.dirname, '..', '..', 'bin', 'postlane.js');
  const env = { ...process.env, DATABASE_URL: await databaseUrlOf(app), DATA_DIR: app.config.dataDir, LOG_LEVEL: 'warn' };
  const cli = spawnSync(process.execPath, [bin, 'contacts', 'export', '--workspace', workspace.id, '--sort', 'email'], {
    env,
    encoding: 'utf8',
  });
  assert.equal(cli.status, 0, cli.stderr);
  assertNeutralised(cli.stdout);

  // The export imported into another workspace: every value exactly as planted.
  const other = await app.newWorkspace();
  assert.equal((await other.api.post('/v2/custom-fields', { key: 'score', type: 'number' })).status, 201);
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
  const imported = await fetch(`${app.url}/v2/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${other.key}` },
    body: form,
  });
  const summary = (await imported.json()) as { status: string; created: number };
  assert.equal(imported.status, 200, JSON.stringify(summary));
  assert.equal(summary.created, HOSTILE.length * 2);
  const back = (await other.api.get('/v2/contacts?limit=100')).body.data as typeof planted;
  const strip = (c: (typeof planted)[number]) => ({
    email: c.email,
    first_name: c.first_name,
    note: c.custom_fields.note ?? null,
    score: c.custom_fields.score ?? null,
  });
  const byEmail = (a: { email: string }, b: { email: string }) => (a.email < b.email ? -1 : 1);
  // (An import trims the text of every cell, as it always has: '\t=1' comes back as '=1'.)
  const trimmed = (c: ReturnType<typeof strip>) => ({ ...c, note: typeof c.note === 'string' ? c.note.trim() : c.note });
  assert.deepEqual(back.map(strip).sort(byEmail), planted.map(strip).map(trimmed).sort(byEmail));
});

test('the shared CSV cell: OWASP triggers neutralised and quoted, typed numbers and ordinary text untouched, read back exactly', () => {
  for (const value of [...HOSTILE, '\n=1', '＝1+1', "''x", "'"]) {
    const cell = csvCell(value);
    assert.ok(cell.startsWith(`"'`), `${JSON.stringify(value)} → ${JSON.stringify(cell)}`);
    const [[read]] = parse(cell) as string[][];
    assert.equal(restoreNeutralised(read), value);
  }
  assert.equal(csvCell(-5), '-5');
  assert.equal(csvCell(-2.5e-7), '-2.5e-7');
  assert.equal(csvCell(true), 'true');
  assert.equal(csvCell('ann@example.com'), 'ann@example.com');
  assert.equal(csvCell('Ann-Marie'), 'Ann-Marie');
  assert.equal(csvCell("O'Brien"), "O'Brien");
  assert.equal(restoreNeutralised("O'Brien"), "O'Brien");
  assert.equal(restoreNeutralised("'Tis"), "'Tis", 'a single quote before harmless text was not put there by an export');
  assert.equal(csvCell('a;=1+1'), '"a;=1+1"', 'quoted: a semicolon-separated spreadsheet would start a cell after it');
});
