// A 10,000-address list verified to completion against 20 loopback mail servers hosting 100
// domains (existing, unknown, full and disabled mailboxes; every tenth domain catch-all), its
// XLSX and CSV exports opened and read back with exceljs, every address's result checked, and
// no server ever seeing more than 3 connections at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { eventually, startTestApp, type TestApp } from '../helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startMailboxFarm, type MailboxState, type MailDomain } from '../helpers/mailbox-servers.ts';
import { EXPORT_COLUMNS } from '../../src/resources/email-verification-lists/export.ts';

// Cells read as the text they are (exceljs otherwise tries every cell against date formats,
// which takes most of a minute for 10,000 rows).
const CSV_AS_TEXT = { map: (value: string) => value } as never;

const SERVERS = 20;
const DOMAINS = 100;
const PER_DOMAIN = 100;

const isCatchAll = (d: number) => d % 10 === 0;
function stateOf(j: number): MailboxState | 'missing' {
  return (['missing', 'full', 'disabled'] as const)[j % 10] ?? 'exists';
}
function expectedResult(d: number, j: number): string {
  if (isCatchAll(d)) return 'unknown';
  return { missing: 'unknown', full: 'inbox_full', disabled: 'disabled', exists: 'safe', 'full-permanent': 'inbox_full' }[stateOf(j)];
}

let app: TestApp;
let dns: TestDnsServer;
let farm: Awaited<ReturnType<typeof startMailboxFarm>>;

before(async () => {
  dns = await startDnsServer();
  farm = await startMailboxFarm(SERVERS, (server) => {
    const domains: Record<string, MailDomain> = {};
    for (let d = server; d < DOMAINS; d += SERVERS) {
      const mailboxes: Record<string, MailboxState> = {};
      for (let j = 0; j < PER_DOMAIN; j++) {
        const state = stateOf(j);
        if (state !== 'missing') mailboxes[`user${j}`] = state;
      }
      domains[`d${d}.test`] = isCatchAll(d) ? { catchAll: true } : { mailboxes };
    }
    return domains;
  });
  for (let d = 0; d < DOMAINS; d++) {
    dns.set(`d${d}.test`, 'MX', [{ exchange: `mx.d${d}.test`, priority: 10 }]);
    dns.set(`mx.d${d}.test`, 'A', [farm.servers[d % SERVERS].host]);
  }
  app = await startTestApp({
    workspace: { credits: 50_000 },
    env: {
      DNS_SERVERS: dns.address,
      MX_PORT: String(farm.port),
      MAIL_HOSTNAME: 'mail.postlane.test',
      VERIFY_SMTP_TIMEOUT_MS: '5000',
      ALLOW_PRIVATE_URLS: 'true',
    },
  });
});
after(async () => {
  await app?.close();
  await farm?.close();
  await dns?.close();
});

// Its own timeout: on a busy machine the 10,000 checks alone can take minutes.
test('10,000 addresses over 100 domains: completed, every result right, XLSX and CSV read back', { timeout: 480_000 }, async () => {
  const emails: string[] = [];
  const expected = new Map<string, string>();
  // Interleaved by domain, as a real export of contacts would be.
  for (let j = 0; j < PER_DOMAIN; j++) {
    for (let d = 0; d < DOMAINS; d++) {
      const email = `user${j}@d${d}.test`;
      emails.push(email);
      expected.set(email, expectedResult(d, j));
    }
  }
  const created = await app.api.post('/v2/email-verification-lists', { name: 'Ten thousand', emails });
  assert.equal(created.status, 201, created.text.slice(0, 300));
  assert.equal(created.body.unique_emails_count, 10_000);
  assert.equal(created.body.dispatched_jobs, 10_000);
  assert.equal(created.body.stats.pending_emails, 10_000);

  const done = await eventually(
    async () => {
      const res = await app.api.get(`/v2/email-verification-lists/${created.body.id}`);
      return res.body.status === 'completed' && res.body;
    },
    400_000,
    500,
  );
  const tally = { safe: 0, role: 0, catch_all: 0, unknown: 0, inbox_full: 0, disabled: 0, disposable: 0, invalid: 0 } as Record<
    string,
    number
  >;
  for (const result of expected.values()) tally[result]++;
  tally.catch_all = (DOMAINS / 10) * PER_DOMAIN;
  assert.deepEqual(done.stats, {
    total_emails: 10_000,
    processed_emails: 10_000,
    successful_verifications: 10_000,
    failed_verifications: 0,
    pending_emails: 0,
    results: tally,
  });

  for (const server of farm.servers) {
    assert.ok(server.maxOpenConnections <= 3, `${server.host} saw ${server.maxOpenConnections} connections at once`);
    assert.equal(server.dataCommands, 0);
  }
  // Each address asked once, in sessions of up to 20 addresses of a domain.
  const asked = farm.servers.flatMap((server) => server.rcpts).filter((rcpt) => expected.has(rcpt));
  assert.equal(asked.length, 10_000);
  assert.equal(new Set(asked).size, 10_000);
  const connections = farm.servers.reduce((sum, server) => sum + server.connections, 0);
  assert.ok(connections <= 1_000, `${connections} connections for 10,000 addresses`);

  const column = (name: string) => EXPORT_COLUMNS.indexOf(name as never) + 1;
  const xlsx = await fetch(`${app.url}/v2/email-verification-lists/${created.body.id}/export`, {
    headers: { authorization: `Bearer ${app.key}` },
  });
  assert.equal(xlsx.status, 200);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(await xlsx.arrayBuffer());
  const sheet = workbook.worksheets[0];
  assert.equal(sheet.rowCount, 10_001);
  assert.equal(sheet.getRow(1).getCell(column('email')).value, 'email');
  for (let i = 0; i < emails.length; i++) {
    const row = sheet.getRow(i + 2);
    assert.equal(row.getCell(column('email')).value, emails[i]);
    assert.equal(row.getCell(column('result')).value, expected.get(emails[i]), emails[i]);
    assert.equal(row.getCell(column('status')).value, 'completed');
  }

  const csv = await fetch(`${app.url}/v2/email-verification-lists/${created.body.id}/export?format=csv`, {
    headers: { authorization: `Bearer ${app.key}` },
  });
  assert.equal(csv.status, 200);
  const csvSheet = await new ExcelJS.Workbook().csv.read(Readable.from(Buffer.from(await csv.arrayBuffer())), CSV_AS_TEXT);
  assert.equal(csvSheet.rowCount, 10_001);
  for (let i = 0; i < emails.length; i++) {
    const row = csvSheet.getRow(i + 2);
    assert.equal(row.getCell(column('email')).value, emails[i]);
    assert.equal(row.getCell(column('result')).value, expected.get(emails[i]), emails[i]);
  }
});
