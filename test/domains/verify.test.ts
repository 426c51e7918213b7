// POST /domains/{id}/verify against a real DNS server on loopback that publishes, withholds
// and corrupts each record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDomainApp, publish, REQUIRED, HOSTS, type DomainTestApp } from './helpers.ts';
import { generateDkimKey, dkimRecordValue } from '../../src/resources/domains/dkim.ts';

let app: DomainTestApp;
before(async () => {
  app = await startDomainApp();
});
after(() => app.close());

let counter = 0;
async function newDomain(body: Record<string, unknown> = {}, plan: 'pro' | 'payg' = 'pro') {
  const ws = await app.newWorkspace({ plan });
  const name = `verify-${++counter}-example.com`;
  const response = await ws.api.post('/v2/domains', { name, ...body });
  assert.equal(response.status, 201);
  return { ...ws, domain: response.body, name };
}

async function domainEvents(workspaceId: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({ type: row.type, data: JSON.parse(row.data) }));
}

test('nothing published: every record is missing, with its reason; the domain stays pending', async () => {
  const { api, domain, name } = await newDomain();
  const response = await api.post(`/v2/domains/${domain.id}/verify`);
  assert.equal(response.status, 200);
  const body = response.body;
  assert.equal('dmarc_reports' in body, false, 'the verify response omits dmarc_reports');
  assert.equal('dmarc_address' in body, false, 'the verify response omits dmarc_address');
  assert.equal(body.verification_status, 'pending');
  assert.equal(body.verified_at, null);
  assert.match(body.dns_checked_at, /^\d{4}-\d{2}-\d{2}T.*Z$/);
  const errors = {
    return_path: `No MX record found at postlane.${name}`,
    spf: `No SPF record (TXT starting with v=spf1) found at postlane.${name}`,
    dkim: `No DKIM record found at postlane._domainkey.${name}`,
    dmarc: `No DMARC record (TXT starting with v=DMARC1) found at _dmarc.${name}`,
    tracking: `No CNAME record found at go.${name}`,
    inbound: `No MX record found at inbound.${name}`,
  };
  for (const [key, error] of Object.entries(errors)) {
    assert.equal(body[`${key}_status`], 'missing', key);
    assert.equal(body[`${key}_error`], error, key);
  }
  assert.deepEqual([body.mx_status, body.mx_error], ['missing', errors.return_path]);
  assert.deepEqual(
    body.dns_records.map((r: any) => [r.status, r.error]),
    Object.values(errors).map((e) => ['missing', e]),
  );

  const retrieved = (await api.get(`/v2/domains/${domain.id}`)).body;
  assert.deepEqual(
    { ...retrieved, dmarc_reports: undefined, dmarc_address: undefined },
    { ...body, dmarc_reports: undefined, dmarc_address: undefined },
  );
  assert.equal(retrieved.dmarc_reports, false);
});

test('the three required records verify the domain; DMARC, tracking and inbound absent do not matter', async () => {
  const { api, domain, workspace: ws } = await newDomain();
  publish(app.dns, domain, REQUIRED);
  const response = await api.post(`/v2/domains/${domain.name}/verify`);
  assert.equal(response.status, 200);
  const body = response.body;
  assert.deepEqual(
    [
      body.verification_status,
      body.spf_status,
      body.dkim_status,
      body.return_path_status,
      body.mx_status,
      body.dmarc_status,
      body.tracking_status,
      body.inbound_status,
    ],
    ['verified', 'ok', 'ok', 'ok', 'ok', 'missing', 'missing', 'missing'],
  );
  assert.deepEqual([body.spf_error, body.dkim_error, body.return_path_error, body.mx_error], [null, null, null, null]);
  assert.equal(body.verified_at, body.dns_checked_at);
  assert.deepEqual(
    body.dns_records.map((r: any) => r.status),
    ['ok', 'ok', 'ok', 'missing', 'missing', 'missing'],
  );

  // The state change is an event; a re-check that changes nothing is not.
  const updates = (await domainEvents(ws.id)).filter((e) => e.type === 'domain.updated');
  assert.equal(updates.length, 1);
  assert.deepEqual(
    [updates[0].data.id, updates[0].data.verification_status, updates[0].data.verified_at, updates[0].data.dns_checked_at],
    [domain.id, 'verified', body.verified_at, body.dns_checked_at],
  );
  const again = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.equal(again.verification_status, 'verified');
  assert.ok(again.verified_at > body.verified_at, 'verified_at is the last passing check');
  assert.equal((await domainEvents(ws.id)).filter((e) => e.type === 'domain.updated').length, 1);
});

test('all six records published: every status ok', async () => {
  const { api, domain } = await newDomain();
  publish(app.dns, domain);
  const body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual(
    body.dns_records.map((r: any) => [r.status, r.error]),
    Array(6).fill(['ok', null]),
  );
  assert.equal(body.verification_status, 'verified');
});

test('a DKIM record carrying another key is invalid and the domain is not verified', async () => {
  const { api, domain, name } = await newDomain();
  publish(app.dns, domain, REQUIRED);
  const other = await generateDkimKey();
  app.dns.set(`postlane._domainkey.${name}`, 'TXT', [dkimRecordValue(other.publicKeyBase64)]);
  const body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual(
    [body.dkim_status, body.dkim_error],
    ['invalid', `The public key (p=) of the DKIM record at postlane._domainkey.${name} does not match this domain's DKIM key`],
  );
  assert.equal(body.verification_status, 'pending');
  assert.equal(body.verified_at, null);
  assert.deepEqual([body.spf_status, body.return_path_status], ['ok', 'ok']);
});

test('a DKIM TXT record split into character-strings is joined before comparing', async () => {
  const { api, domain, name } = await newDomain();
  publish(app.dns, domain, ['spf', 'return_path']);
  const value: string = domain.dns_records[2].value;
  // Arbitrary split points, as DNS providers do (the test server also splits long strings at 255 bytes).
  app.dns.set(`postlane._domainkey.${name}`, 'TXT', [[value.slice(0, 100), value.slice(100, 300), value.slice(300)]]);
  const body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.equal(body.dkim_status, 'ok');
  assert.equal(body.verification_status, 'verified');
  assert.ok(value.length > 255, 'the default record needs more than one string');
});

test('SPF without the include, a wrong or second return-path MX: invalid, with the reason', async () => {
  const { api, domain, name } = await newDomain();
  publish(app.dns, domain, REQUIRED);
  app.dns.set(`postlane.${name}`, 'TXT', ['v=spf1 include:_spf.elsewhere.test ~all']);
  app.dns.set(`postlane.${name}`, 'MX', [{ exchange: 'mx.elsewhere.test', priority: 10 }]);
  let body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual(
    [body.spf_status, body.spf_error],
    ['invalid', `The SPF record at postlane.${name} does not include include:${HOSTS.SPF_INCLUDE_HOST}`],
  );
  assert.deepEqual(
    [body.return_path_status, body.return_path_error],
    ['invalid', `The MX record at postlane.${name} points to mx.elsewhere.test instead of ${HOSTS.RETURN_PATH_HOST}`],
  );
  assert.equal(body.verification_status, 'pending');

  app.dns.set(`postlane.${name}`, 'TXT', [domain.dns_records[1].value]);
  app.dns.set(`postlane.${name}`, 'MX', [
    { exchange: HOSTS.RETURN_PATH_HOST, priority: 10 },
    { exchange: 'mx.elsewhere.test', priority: 20 },
  ]);
  body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.equal(body.spf_status, 'ok');
  assert.deepEqual(
    [body.mx_status, body.mx_error],
    ['invalid', `Found 2 MX records at postlane.${name}; exactly one, pointing to ${HOSTS.RETURN_PATH_HOST}, is required`],
  );
  assert.equal(body.verification_status, 'pending');
});

test('a DNS timeout is an error on the record, never a 500, and never un-verifies by itself', async () => {
  const { api, domain, name } = await newDomain();
  publish(app.dns, domain, REQUIRED);
  assert.equal((await api.post(`/v2/domains/${domain.id}/verify`)).body.verification_status, 'verified');

  app.dns.hang(`postlane._domainkey.${name}`);
  app.dns.hang(`_dmarc.${name}`);
  const response = await api.post(`/v2/domains/${domain.id}/verify`);
  assert.equal(response.status, 200);
  const body = response.body;
  assert.equal(
    body.dkim_error,
    `DNS lookup of TXT postlane._domainkey.${name} timed out; the record could not be checked, try again later`,
  );
  assert.equal(body.dkim_status, 'ok', 'the last known result is kept');
  assert.equal(body.verification_status, 'verified', 'a timeout neither verifies nor un-verifies');
  assert.deepEqual(
    [body.dmarc_status, body.dmarc_error],
    ['error', `DNS lookup of TXT _dmarc.${name} timed out; the record could not be checked, try again later`],
  );

  // A domain never seen passing stays pending while its DKIM cannot be read.
  const fresh = await newDomain();
  publish(app.dns, fresh.domain, ['spf', 'return_path']);
  app.dns.hang(`postlane._domainkey.${fresh.name}`);
  const pending = await fresh.api.post(`/v2/domains/${fresh.domain.id}/verify`);
  assert.equal(pending.status, 200);
  assert.deepEqual([pending.body.dkim_status, pending.body.verification_status], ['pending', 'pending']);
  assert.match(pending.body.dkim_error, /timed out/);
});

test('a required record removed: the next verify clears verified_at', async () => {
  const { api, domain, name, workspace: ws } = await newDomain();
  publish(app.dns, domain, REQUIRED);
  assert.equal((await api.post(`/v2/domains/${domain.id}/verify`)).body.verification_status, 'verified');
  app.dns.remove(`postlane.${name}`, 'MX');
  const body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual([body.verification_status, body.verified_at, body.return_path_status], ['pending', null, 'missing']);
  const updates = (await domainEvents(ws.id)).filter((e) => e.type === 'domain.updated');
  assert.deepEqual(
    updates.map((e) => e.data.verification_status),
    ['verified', 'pending'],
  );
});

test('tracking can be turned on once its CNAME verifies; a moved tracking key must verify again', async () => {
  const { api, domain, name } = await newDomain();
  publish(app.dns, domain);
  app.dns.set(`go.${name}`, 'CNAME', ['elsewhere.test']);
  let body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual(
    [body.tracking_status, body.tracking_error],
    ['invalid', `The CNAME record at go.${name} points to elsewhere.test instead of ${HOSTS.TRACKING_CNAME_TARGET}`],
  );
  assert.equal((await api.patch(`/v2/domains/${domain.id}`, { track_loads: true })).status, 422);

  app.dns.set(`go.${name}`, 'CNAME', [HOSTS.TRACKING_CNAME_TARGET]);
  body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.equal(body.tracking_status, 'ok');
  const on = await api.patch(`/v2/domains/${domain.id}`, { track_loads: true, track_clicks: true });
  assert.equal(on.status, 200);
  assert.deepEqual([on.body.track_loads, on.body.track_clicks], [1, 1]);

  const moved = await api.patch(`/v2/domains/${domain.id}`, { tracking_key: 'links' });
  assert.deepEqual(
    [moved.status, moved.body],
    [422, { error: 'Tracking can only be turned on once the tracking CNAME record is verified' }],
  );
  const movedOff = await api.patch(`/v2/domains/${domain.id}`, { tracking_key: 'links', track_loads: false, track_clicks: false });
  assert.equal(movedOff.status, 200);
  assert.deepEqual(
    [movedOff.body.tracking_status, movedOff.body.tracking_error, movedOff.body.dns_records[4].status],
    ['pending', null, 'pending'],
  );
});

test("DMARC with reports on must send reports to the domain's address", async () => {
  const { api, domain, name } = await newDomain({ dmarc_reports: true });
  publish(app.dns, domain, REQUIRED);
  app.dns.set(`_dmarc.${name}`, 'TXT', ['v=DMARC1; p=quarantine;']);
  let body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.equal(body.dmarc_status, 'invalid');
  assert.match(body.dmarc_error, /does not send aggregate reports/);
  assert.equal(body.verification_status, 'verified', 'DMARC never blocks verification');
  publish(app.dns, domain, ['dmarc']);
  body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual([body.dmarc_status, body.dmarc_error], ['ok', null]);
});

test('inbound MX pointing elsewhere is invalid; verify of an unknown domain is 404', async () => {
  const { api, domain, name } = await newDomain({ inbound_key: 'replies' });
  publish(app.dns, domain);
  app.dns.add(`replies.${name}`, 'MX', { exchange: 'mx.other.test', priority: 20 });
  const body = (await api.post(`/v2/domains/${domain.id}/verify`)).body;
  assert.deepEqual(
    [body.inbound_status, body.inbound_error],
    ['invalid', `The MX records at replies.${name} point to mx.other.test; the only MX host must be ${HOSTS.INBOUND_MX_HOST}`],
  );
  const missing = await api.post('/v2/domains/nope-example.com/verify');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Domain not found' }]);
});

test('every lookup went to the configured DNS server', async () => {
  const { api, domain, name } = await newDomain();
  const before = app.dns.queries.length;
  await api.post(`/v2/domains/${domain.id}/verify`);
  const asked = app.dns.queries
    .slice(before)
    .map((q) => `${q.type} ${q.name}`)
    .sort();
  assert.deepEqual(asked, [
    `CNAME go.${name}`,
    `MX inbound.${name}`,
    `MX postlane.${name}`,
    `TXT _dmarc.${name}`,
    `TXT postlane._domainkey.${name}`,
    `TXT postlane.${name}`,
  ]);
});
