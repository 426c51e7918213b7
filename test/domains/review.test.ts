// Pay as you go review: a domain registered under 30 days ago (read from RDAP, here a fake
// RDAP server on loopback) waits in pending_review until `postlane domain approve`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startDomainApp, publish, REQUIRED, HOSTS, type DomainTestApp } from './helpers.ts';
import { startRdapServer, type TestRdapServer } from '../helpers/rdap-server.ts';
import { eventually, databaseUrlOf } from '../helpers/app.ts';
import { createServer } from 'node:http';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { lookupRegistration } from '../../src/resources/domains/rdap.ts';
import { approveDomain } from '../../src/resources/domains/service.ts';
import { domainCommand } from '../../src/cli/domain.ts';
import { UsageError } from '../../src/cli/index.ts';
import { createResolver } from '../../src/platform/dns.ts';

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

let app: DomainTestApp;
let rdap: TestRdapServer;
before(async () => {
  rdap = await startRdapServer();
  app = await startDomainApp({ env: { RDAP_URL: `${rdap.url}/`, ALLOW_PRIVATE_URLS: 'true' } });
});
after(async () => {
  await app.close();
  await rdap.close();
});

let counter = 0;
async function addDomain(plan: 'payg' | 'pro', registered: Date | null) {
  const ws = await app.newWorkspace({ plan });
  const name = `review-${++counter}-example.com`;
  if (registered) rdap.register(name, registered);
  const created = await ws.api.post('/v2/domains', { name });
  assert.equal(created.status, 201);
  publish(app.dns, created.body, REQUIRED);
  return { ...ws, name, domain: created.body };
}

async function verify(api: DomainTestApp['api'], id: string) {
  const response = await api.post(`/v2/domains/${id}/verify`);
  assert.equal(response.status, 200);
  return response.body;
}

/** Runs `postlane domain …` as the operator would, against this app's database. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const databaseUrl = await databaseUrlOf(app);
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', '..', 'src', 'main.ts'), 'domain', ...args], {
    env: {
      ...process.env,
      ...HOSTS,
      DATABASE_URL: databaseUrl,
      DATA_DIR: app.config.dataDir,
      DNS_SERVERS: app.dns.address,
      RDAP_URL: rdap.url,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}

test('a new Pay as you go domain shows pending_review until its first check; an old registration then verifies', async () => {
  const { api, name, domain } = await addDomain('payg', daysAgo(5 * 365));
  assert.deepEqual([domain.verification_status, domain.manual_review_required], ['pending_review', false]);
  const before = rdap.requests.length;
  const body = await verify(api, domain.id);
  assert.deepEqual([body.verification_status, body.manual_review_required, body.manually_verified_at], ['verified', false, null]);
  assert.deepEqual(rdap.requests.slice(before), [`/domain/${name}`]);
  await verify(api, domain.id);
  assert.equal(rdap.requests.length, before + 1, 'a verified domain is not looked up again');
});

test('a Pay as you go domain registered under 30 days ago waits for manual review, then `domain approve` verifies it', async () => {
  const { api, name, domain, workspace: ws } = await addDomain('payg', daysAgo(10));
  let body = await verify(api, domain.id);
  assert.deepEqual(
    [body.verification_status, body.manual_review_required, body.verified_at, body.manually_verified_at],
    ['pending_review', true, null, null],
  );
  assert.deepEqual([body.spf_status, body.dkim_status, body.return_path_status], ['ok', 'ok', 'ok'], 'records are still checked and shown');
  body = await verify(api, domain.id);
  assert.equal(body.verification_status, 'pending_review', 'verify again does not release it');

  // A webhook subscribed to domain.updated hears about the approval made by the CLI process.
  const received: string[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(body);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as { port: number }).port;
  const hook = await api.post('/v2/webhooks', { name: 'domains', url: `http://127.0.0.1:${port}/hook`, events: ['domain.updated'] });
  assert.equal(hook.status, 201, hook.text);

  const approved = await cli(['approve', ws.id, name, '--json']);
  assert.equal(approved.code, 0, approved.stderr);
  const printed = JSON.parse(approved.stdout);
  try {
    await eventually(
      async () => received.some((body) => body.includes('domain.updated') && body.includes(printed.manually_verified_at)),
      15_000,
    );
  } finally {
    receiver.close();
  }
  assert.equal(printed.id, domain.id);
  assert.deepEqual([printed.verification_status, printed.manual_review_required], ['verified', false]);
  assert.match(printed.manually_verified_at, /^\d{4}-\d{2}-\d{2}T.*Z$/);
  assert.equal(JSON.stringify(printed).includes('PRIVATE'), false);

  body = (await api.get(`/v2/domains/${domain.id}`)).body;
  assert.deepEqual(
    [body.verification_status, body.manual_review_required, body.manually_verified_at, body.verified_at !== null],
    ['verified', false, printed.manually_verified_at, true],
  );
  assert.equal((await verify(api, domain.id)).verification_status, 'verified', 'an approved domain stays out of review');
  const updates = await app.running.ctx.db
    .selectFrom('events')
    .select('data')
    .where('workspace_id', '=', ws.id)
    .where('type', '=', 'domain.updated')
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    updates.map((e) => JSON.parse(e.data).verification_status),
    ['pending_review', 'verified'],
  );
});

test('approval of a domain whose records do not pass leaves it pending, saying which records fail', async () => {
  const { name, domain, workspace: ws } = await addDomain('payg', daysAgo(2));
  app.dns.remove(`postlane._domainkey.${name}`);
  const approved = await cli(['approve', ws.id, domain.id]);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, new RegExp(`^Approved ${name} \\(${domain.id}\\) at .*: verification_status=pending\\n`));
  assert.match(approved.stdout, /failing records: dkim \(missing: No DKIM record found at postlane\._domainkey\./);
});

test('`domain approve` errors: unknown domain or workspace (exit 1), bad usage (exit 2)', async () => {
  const { workspace: ws } = await app.newWorkspace({ plan: 'payg' });
  const unknown = await cli(['approve', ws.id, 'nope-example.com']);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, `postlane domain: no domain "nope-example.com" in workspace ${ws.id}\n`);
  const deps = { db: app.running.ctx.db, config: app.config };
  await assert.rejects(approveDomain(deps, 'wsp_missing', 'nope-example.com'), { message: 'no workspace with id wsp_missing' });
  // Usage errors are UsageError, which the CLI turns into exit code 2.
  await assert.rejects(
    domainCommand(['approve', ws.id]),
    (e: Error) => e instanceof UsageError && /takes a workspace id and a domain/.test(e.message),
  );
  await assert.rejects(domainCommand(['frobnicate']), UsageError);
});

test('other plans skip the review, and leaving Pay as you go releases a held domain', async () => {
  const pro = await addDomain('pro', daysAgo(3));
  assert.equal(pro.domain.verification_status, 'pending');
  const before = rdap.requests.length;
  assert.equal((await verify(pro.api, pro.domain.id)).verification_status, 'verified');
  assert.equal(rdap.requests.length, before, 'no RDAP lookup outside Pay as you go');

  const held = await addDomain('payg', daysAgo(3));
  assert.equal((await verify(held.api, held.domain.id)).verification_status, 'pending_review');
  await updateWorkspace(app.running.ctx.db, held.workspace.id, { plan: 'pro' });
  const released = await verify(held.api, held.domain.id);
  assert.deepEqual([released.verification_status, released.manual_review_required], ['verified', false]);
});

test('RDAP trouble postpones the decision; unknown domains and missing dates skip the rule; redirects are followed', async () => {
  const flaky = await addDomain('payg', null);
  rdap.fail(flaky.name, 503);
  let body = await verify(flaky.api, flaky.domain.id);
  assert.deepEqual([body.verification_status, body.manual_review_required, body.verified_at], ['pending_review', false, null]);
  rdap.clear(flaky.name);
  rdap.register(flaky.name, daysAgo(400));
  body = await verify(flaky.api, flaky.domain.id);
  assert.equal(body.verification_status, 'verified');

  const unknown = await addDomain('payg', null); // 404 from RDAP
  assert.equal((await verify(unknown.api, unknown.domain.id)).verification_status, 'verified');

  const undated = await addDomain('payg', null);
  rdap.registerWithoutDate(undated.name);
  assert.equal((await verify(undated.api, undated.domain.id)).verification_status, 'verified');

  const redirected = await addDomain('payg', daysAgo(1));
  rdap.redirect(redirected.name);
  const before = rdap.requests.length;
  body = await verify(redirected.api, redirected.domain.id);
  assert.deepEqual([body.verification_status, body.manual_review_required], ['pending_review', true]);
  assert.deepEqual(rdap.requests.slice(before), [`/domain/${redirected.name}`, `/registry/domain/${redirected.name}`]);
});

test('without RDAP_URL the age rule is skipped: a Pay as you go domain verifies at its first passing check', async () => {
  const plain = await startDomainApp();
  try {
    const { api } = await plain.newWorkspace({ plan: 'payg' });
    const domain = (await api.post('/v2/domains', { name: 'no-rdap-example.com' })).body;
    assert.equal(domain.verification_status, 'pending_review');
    let body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
    assert.deepEqual([body.verification_status, body.manual_review_required], ['pending', false], 'decided, but records missing');
    publish(plain.dns, domain, REQUIRED);
    body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
    assert.equal(body.verification_status, 'verified');
  } finally {
    await plain.close();
  }
});

test('the RDAP host name is resolved through DNS_SERVERS', async () => {
  const port = new URL(rdap.url).port;
  app.dns.set('rdap.registry.test', 'A', ['127.0.0.1']);
  rdap.register('hosted-example.com', '2001-02-03T04:05:06Z');
  const resolver = createResolver([app.dns.address], { timeoutMs: 300, tries: 2 });
  const result = await lookupRegistration(`http://rdap.registry.test:${port}`, 'hosted-example.com', { resolver });
  assert.deepEqual(result, { kind: 'registered', registeredAt: '2001-02-03T04:05:06.000Z' });
  assert.ok(app.dns.queries.some((q) => q.name === 'rdap.registry.test' && q.type === 'A'));
  const unresolvable = await lookupRegistration(`http://nowhere.registry.test:${port}`, 'hosted-example.com', { resolver });
  assert.deepEqual(unresolvable, { kind: 'failed', reason: 'RDAP lookup failed: cannot resolve nowhere.registry.test' });
});
