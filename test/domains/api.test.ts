// The domains API over HTTP: create, retrieve, list, update, delete; shapes, errors, plan
// gates and limits, events, and API keys restricted to a real domain.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { startDomainApp, HOSTS, type DomainTestApp } from './helpers.ts';
import type { ApiClient } from '../helpers/app.ts';
import { findDomainByHost, findSendingDomain, findSendingDomainById } from '../../src/resources/domains/service.ts';
import { findWorkspaceDomainId } from '../../src/resources/domains/lookup.ts';
import { newId } from '../../src/platform/ids.ts';
import { getWorkspace, updateWorkspace } from '../../src/resources/workspaces/service.ts';

let app: DomainTestApp;
before(async () => {
  app = await startDomainApp();
});
after(() => app.close());

async function workspace(plan: 'payg' | 'pro' | 'business' | 'custom' = 'pro') {
  return app.newWorkspace({ plan });
}

async function events(workspaceId: string, type: string) {
  const rows = await app.running.ctx.db
    .selectFrom('events')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', type)
    .orderBy('seq')
    .execute();
  return rows.map((row) => JSON.parse(row.data));
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

test("POST /domains answers 201 with the full domain object and the spec's six DNS records", async () => {
  const { api, workspace: ws } = await workspace('pro');
  const response = await api.post('/v2/domains', { name: 'acme-mail.com' });
  assert.equal(response.status, 201);
  const body = response.body;
  assert.match(body.id, /^dom_[A-Za-z0-9]{27}$/);
  assert.match(body.created_at, ISO);
  assert.match(body.verification_token, /^[A-Za-z0-9]{32}$/);
  const p = /^v=DKIM1; t=s; h=sha256; p=([A-Za-z0-9+/=]+)$/.exec(body.dns_records[2].value)![1];
  const pending = { status: 'pending', error: null, ttl: 'auto' };
  assert.deepEqual(body, {
    object: 'domain',
    id: body.id,
    name: 'acme-mail.com',
    verification_status: 'pending',
    verified_at: null,
    manual_review_required: false,
    manually_verified_at: null,
    dns_checked_at: null,
    spf_status: 'pending',
    dkim_status: 'pending',
    return_path_status: 'pending',
    mx_status: 'pending',
    dmarc_status: 'pending',
    tracking_status: 'pending',
    inbound_status: 'pending',
    spf_error: null,
    dkim_error: null,
    mx_error: null,
    return_path_error: null,
    dmarc_error: null,
    tracking_error: null,
    inbound_error: null,
    tracking_key: null,
    inbound_key: null,
    track_loads: 0,
    track_clicks: 0,
    dmarc_reports: false,
    dmarc_address: null,
    verification_token: body.verification_token,
    verification_method: 'dns',
    dkim_identifier_string: 'postlane',
    created_at: body.created_at,
    updated_at: body.created_at,
    dns_records: [
      { type: 'MX', name: 'postlane.acme-mail.com', value: HOSTS.RETURN_PATH_HOST, priority: 10, required: true, ...pending },
      {
        type: 'TXT',
        name: 'postlane.acme-mail.com',
        value: `v=spf1 include:${HOSTS.SPF_INCLUDE_HOST} ~all`,
        priority: null,
        required: true,
        ...pending,
      },
      {
        type: 'TXT',
        name: 'postlane._domainkey.acme-mail.com',
        value: `v=DKIM1; t=s; h=sha256; p=${p}`,
        priority: null,
        required: true,
        ...pending,
      },
      { type: 'TXT', name: '_dmarc.acme-mail.com', value: 'v=DMARC1; p=none;', priority: null, required: false, ...pending },
      { type: 'CNAME', name: 'go.acme-mail.com', value: HOSTS.TRACKING_CNAME_TARGET, priority: null, required: false, ...pending },
      { type: 'MX', name: 'inbound.acme-mail.com', value: HOSTS.INBOUND_MX_HOST, priority: 10, required: false, ...pending },
    ],
  });

  // domain.created carries its documented payload, in the same transaction as the domain.
  assert.deepEqual(await events(ws.id, 'domain.created'), [
    {
      id: body.id,
      object: 'domain',
      name: 'acme-mail.com',
      tracking_key: null,
      inbound_key: null,
      track_loads: false,
      track_clicks: false,
      created_at: body.created_at,
      dns_records: body.dns_records,
    },
  ]);
});

test('the DKIM p= is a 2048-bit RSA public key matching the private key, which is sealed and never shown', async () => {
  const { api, workspace: ws } = await workspace('pro');
  const created = (await api.post('/v2/domains', { name: 'keys-example.com' })).body;
  const p = created.dns_records[2].value.split('p=')[1];
  const publicKey = createPublicKey({ key: Buffer.from(p, 'base64'), format: 'der', type: 'spki' });
  assert.equal(publicKey.asymmetricKeyType, 'rsa');
  assert.equal(publicKey.asymmetricKeyDetails?.modulusLength, 2048);

  const row = await app.running.ctx.db.selectFrom('domains').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
  assert.doesNotMatch(row.dkim_private_key, /PRIVATE KEY/, 'stored sealed, not as PEM');
  const privateKey = createPrivateKey(app.running.ctx.secrets.open(row.dkim_private_key));
  assert.equal(privateKey.asymmetricKeyDetails?.modulusLength, 2048);
  const derived = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).toString('base64');
  assert.equal(derived, p, 'the published key is the public half of the stored private key');

  const sending = await findSendingDomain(app.running.ctx.db, app.running.ctx.secrets, ws.id, 'KEYS-example.com');
  assert.equal(sending?.dkimPrivateKeyPem, app.running.ctx.secrets.open(row.dkim_private_key));

  // Nothing a client or webhook can read carries the private key.
  const texts = [
    (await api.get(`/v2/domains/${created.id}`)).text,
    (await api.get('/v2/domains')).text,
    (await api.post(`/v2/domains/${created.id}/verify`)).text,
    (await api.patch(`/v2/domains/${created.id}`, { inbound_key: 'mail-in' })).text,
    JSON.stringify(await app.running.ctx.db.selectFrom('events').select('data').where('workspace_id', '=', ws.id).execute()),
  ];
  const secretPart = row.dkim_private_key.slice(3, 40);
  for (const text of texts) {
    assert.doesNotMatch(text, /PRIVATE KEY|dkim_private_key/);
    assert.equal(text.includes(secretPart), false);
  }
});

test('names must be a bare registrable apex: 400 {error} otherwise', async () => {
  const { api } = await workspace('pro');
  const cases: Array<[string, string]> = [
    ['https://example.com', 'Domain name must not include a scheme: use the bare domain, such as example.com'],
    ['www.example.com', 'Domain name must not start with www.: use the apex domain example.com'],
    ['mail.example.com', '"mail.example.com" is not an apex domain: add the registrable domain example.com'],
    ['co.uk', '"co.uk" is a public suffix, not a registrable domain'],
    ['example.invalidtld', '"example.invalidtld" does not end in a known public suffix (top-level domain)'],
    ['10.0.0.1', 'Domain name must be a domain, not an IP address'],
    ['example.com/path', 'Domain name must be a bare domain such as example.com, without path, port, user or spaces'],
    ['bad_name.com', '"bad_name.com" is not a valid domain name'],
    ['   ', 'Domain name is required'],
  ];
  for (const [name, error] of cases) {
    const response = await api.post('/v2/domains', { name });
    assert.equal(response.status, 400, name);
    assert.deepEqual(response.body, { error }, name);
  }
  const missing = await api.post('/v2/domains', {});
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'Bad Request');
  assert.equal(missing.body.details[0].keyword, 'required');
  const wrongType = await api.post('/v2/domains', { name: 42 });
  assert.equal(wrongType.status, 400);
  assert.equal(wrongType.body.details[0].instancePath, '/name');

  // Mixed case and a trailing dot are the same apex, stored lowercase.
  const ok = await api.post('/v2/domains', { name: 'Upper-Case.com.' });
  assert.equal(ok.status, 201);
  assert.equal(ok.body.name, 'upper-case.com');
});

test('tracking_key and inbound_key name the tracking and inbound records; bad labels are 400', async () => {
  const { api } = await workspace('pro');
  const created = await api.post('/v2/domains', { name: 'labels-example.com', tracking_key: 'Links', inbound_key: 'replies' });
  assert.equal(created.status, 201);
  assert.equal(created.body.tracking_key, 'links');
  assert.equal(created.body.inbound_key, 'replies');
  assert.deepEqual(
    created.body.dns_records.slice(4).map((r: any) => r.name),
    ['links.labels-example.com', 'replies.labels-example.com'],
  );

  const bad = await api.post('/v2/domains', { name: 'labels2-example.com', tracking_key: 'no.dots' });
  assert.deepEqual(
    [bad.status, bad.body],
    [
      400,
      { error: 'tracking_key must be one DNS label of letters, digits and hyphens (at most 63, not starting or ending with a hyphen)' },
    ],
  );
  const clash = await api.post('/v2/domains', { name: 'labels2-example.com', tracking_key: 'mail', inbound_key: 'mail' });
  assert.deepEqual(
    [clash.status, clash.body],
    [400, { error: 'tracking_key and inbound_key must differ (a CNAME and an MX record cannot share a name)' }],
  );
  const selector = await api.post('/v2/domains', { name: 'labels2-example.com', inbound_key: 'postlane' });
  assert.deepEqual(
    [selector.status, selector.body],
    [400, { error: 'inbound_key must differ from the DKIM selector label "postlane" used by the return path' }],
  );
  const nullKeys = await api.post('/v2/domains', { name: 'labels2-example.com', tracking_key: null, inbound_key: null });
  assert.equal(nullKeys.status, 201);
  assert.equal(nullKeys.body.dns_records[4].name, 'go.labels2-example.com');
});

test('dmarc_reports is for Pro and up: 403 plan_required on Pay as you go, report addresses in the DMARC record otherwise', async () => {
  const payg = await workspace('payg');
  const refused = await payg.api.post('/v2/domains', { name: 'dmarc-example.com', dmarc_reports: true });
  assert.deepEqual([refused.status, refused.body], [403, { error: 'plan_required', required_plan: 'pro' }]);
  assert.equal((await payg.api.post('/v2/domains', { name: 'dmarc-example.com', dmarc_reports: false })).status, 201);

  const pro = await workspace('pro');
  const created = await pro.api.post('/v2/domains', { name: 'dmarc-example.com', dmarc_reports: true });
  assert.equal(created.status, 201);
  assert.equal(created.body.dmarc_reports, true);
  assert.match(created.body.dmarc_address, /^dmarc-[0-9a-f]{16}@postlane\.test$/);
  const address = created.body.dmarc_address;
  assert.equal(created.body.dns_records[3].value, `v=DMARC1; p=none; rua=mailto:${address}; ruf=mailto:${address};`);
});

test('track_loads and track_clicks must be false at creation (422); legacy flags are accepted and ignored', async () => {
  const { api } = await workspace('pro');
  for (const body of [{ track_loads: true }, { track_clicks: true }, { track_loads: 1 }]) {
    const response = await api.post('/v2/domains', { name: 'track-example.com', ...body });
    assert.deepEqual(
      [response.status, response.body],
      [422, { error: 'Tracking can only be turned on once the tracking CNAME record is verified' }],
    );
  }
  const created = await api.post('/v2/domains', {
    name: 'track-example.com',
    track_loads: false,
    track_clicks: 0,
    outgoing: true,
    incoming: false,
    use_for_any: 'yes',
  });
  assert.equal(created.status, 201);
  assert.deepEqual([created.body.track_loads, created.body.track_clicks], [0, 0]);
  assert.equal('outgoing' in created.body, false);
});

test('a duplicate name is 409 with `existing`; another workspace may add the same name', async () => {
  const { api } = await workspace('pro');
  const first = (await api.post('/v2/domains', { name: 'dup-example.com' })).body;
  const again = await api.post('/v2/domains', { name: 'DUP-example.com' });
  assert.deepEqual(
    [again.status, again.body],
    [409, { error: 'Domain already exists', existing: { object: 'domain', id: first.id, name: 'dup-example.com' } }],
  );
  const other = await workspace('pro');
  assert.equal((await other.api.post('/v2/domains', { name: 'dup-example.com' })).status, 201);
});

async function fillDomains(workspaceId: string, count: number) {
  const db = app.running.ctx.db;
  const template = await db.selectFrom('domains').selectAll().limit(1).executeTakeFirstOrThrow();
  for (let start = 0; start < count; start += 200) {
    const rows = Array.from({ length: Math.min(200, count - start) }, (_, i) => ({
      ...template,
      id: newId('dom'),
      workspace_id: workspaceId,
      name: `fill-${start + i}-${workspaceId.slice(-6).toLowerCase()}.com`,
    }));
    await db.insertInto('domains').values(rows).execute();
  }
}

test('plan domain limits: 3 on Pay as you go, 100 on Pro, 1,000 on Business, none on Custom (422 {error})', async () => {
  const payg = await workspace('payg');
  for (const name of ['one-example.com', 'two-example.com', 'three-example.com']) {
    assert.equal((await payg.api.post('/v2/domains', { name })).status, 201);
  }
  const fourth = await payg.api.post('/v2/domains', { name: 'four-example.com' });
  assert.deepEqual([fourth.status, fourth.body], [422, { error: 'Domain limit reached: the Pay as you go plan allows 3 domains' }]);
  // A retried create of an existing domain still answers 409 with `existing`.
  assert.equal((await payg.api.post('/v2/domains', { name: 'one-example.com' })).status, 409);

  const pro = await workspace('pro');
  await fillDomains(pro.workspace.id, 99);
  assert.equal((await pro.api.post('/v2/domains', { name: 'hundredth-example.com' })).status, 201);
  const over = await pro.api.post('/v2/domains', { name: 'over-example.com' });
  assert.deepEqual([over.status, over.body], [422, { error: 'Domain limit reached: the Pro plan allows 100 domains' }]);

  const business = await workspace('business');
  await fillDomains(business.workspace.id, 1000);
  const overBusiness = await business.api.post('/v2/domains', { name: 'over-example.com' });
  assert.deepEqual(
    [overBusiness.status, overBusiness.body],
    [422, { error: 'Domain limit reached: the Business plan allows 1000 domains' }],
  );
  const list = await business.api.get('/v2/domains?limit=1');
  assert.deepEqual([list.body.domain_limit, list.body.domain_count, list.body.plan_name], [1000, 1000, 'Business']);

  const custom = await workspace('custom');
  await fillDomains(custom.workspace.id, 1000);
  assert.equal((await custom.api.post('/v2/domains', { name: 'more-example.com' })).status, 201);
  const customList = await custom.api.get('/v2/domains?limit=1');
  assert.deepEqual([customList.body.domain_limit, customList.body.domain_count, customList.body.plan_name], [null, 1001, 'Custom']);
});

test('Pay as you go allows 25 domains once the workspace has bought credits (`workspace update --add-credits`)', async () => {
  const db = app.running.ctx.db;
  const payg = await workspace('payg');
  const id = payg.workspace.id;
  for (const name of ['one-example.com', 'two-example.com', 'three-example.com']) {
    assert.equal((await payg.api.post('/v2/domains', { name })).status, 201);
  }
  const refused = { error: 'Domain limit reached: the Pay as you go plan allows 3 domains' };
  const fourth = await payg.api.post('/v2/domains', { name: 'four-example.com' });
  assert.deepEqual([fourth.status, fourth.body], [422, refused]);
  // Setting the balance (the operator's correction) is no purchase.
  await updateWorkspace(db, id, { credits: 500 });
  const stillRefused = await payg.api.post('/v2/domains', { name: 'four-example.com' });
  assert.deepEqual([stillRefused.status, stillRefused.body], [422, refused]);
  assert.equal((await payg.api.get('/v2/domains?limit=1')).body.domain_limit, 3);

  const bought = await updateWorkspace(db, id, { addCredits: 1000 });
  assert.equal(bought.credits, 1500);
  assert.ok(bought.firstCreditPurchaseAt, 'the first purchase is recorded');
  assert.equal((await payg.api.post('/v2/domains', { name: 'four-example.com' })).status, 201);
  assert.deepEqual((await payg.api.get('/v2/domains?limit=1')).body.domain_limit, 25);

  // A later purchase keeps the first date; spending every credit does not take the limit back.
  await updateWorkspace(db, id, { addCredits: 5 });
  await updateWorkspace(db, id, { credits: 0 });
  assert.equal((await getWorkspace(db, id))!.firstCreditPurchaseAt, bought.firstCreditPurchaseAt);
  await fillDomains(id, 20);
  assert.equal((await payg.api.post('/v2/domains', { name: 'twenty-fifth-example.com' })).status, 201);
  const over = await payg.api.post('/v2/domains', { name: 'twenty-sixth-example.com' });
  assert.deepEqual([over.status, over.body], [422, { error: 'Domain limit reached: the Pay as you go plan allows 25 domains' }]);
  const list = await payg.api.get('/v2/domains?limit=1');
  assert.deepEqual([list.body.domain_limit, list.body.domain_count, list.body.plan_name], [25, 25, 'Pay as you go']);
});

test('concurrent creates of one name: one 201, the others 409 with that domain as `existing`', async () => {
  const { api } = await workspace('pro');
  const responses = await Promise.all(Array.from({ length: 4 }, () => api.post('/v2/domains', { name: 'same-example.com' })));
  const created = responses.filter((r) => r.status === 201);
  assert.equal(created.length, 1);
  for (const conflict of responses.filter((r) => r.status !== 201)) {
    assert.deepEqual(
      [conflict.status, conflict.body],
      [409, { error: 'Domain already exists', existing: { object: 'domain', id: created[0].body.id, name: 'same-example.com' } }],
    );
  }
});

test('concurrent creates cannot exceed the plan limit', async () => {
  const payg = await workspace('payg');
  const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => payg.api.post('/v2/domains', { name: `race-${i}-example.com` })));
  assert.equal(responses.filter((r) => r.status === 201).length, 3);
  assert.equal(responses.filter((r) => r.status === 422).length, 3);
  assert.equal((await payg.api.get('/v2/domains')).body.domain_count, 3);
});

test('GET /domains/{id} by dom_ id, by name, by an older sd_/sed_ id; 404 otherwise', async () => {
  const { api, workspace: ws } = await workspace('pro');
  const created = (await api.post('/v2/domains', { name: 'lookup-example.com' })).body;
  for (const path of [created.id, 'lookup-example.com', 'LOOKUP-Example.com', encodeURIComponent('lookup-example.com')]) {
    const response = await api.get(`/v2/domains/${path}`);
    assert.equal(response.status, 200, path);
    assert.deepEqual(response.body, created);
  }
  // Domains imported from the older generation keep their sd_ / sed_ ids.
  const db = app.running.ctx.db;
  const row = await db.selectFrom('domains').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
  for (const [id, name] of [
    ['sd_2AbCdEfGhIjKlMnOpQrStUvWxYz', 'old-example.com'],
    ['sed_2AbCdEfGhIjKlMnOpQrStUvWxY', 'older-example.com'],
  ]) {
    await db
      .insertInto('domains')
      .values({ ...row, id, name })
      .execute();
    const response = await api.get(`/v2/domains/${id}`);
    assert.deepEqual([response.status, response.body.id, response.body.name], [200, id, name]);
    assert.equal(await findWorkspaceDomainId(db, ws.id, id), id);
  }
  for (const path of ['dom_2AbCdEfGhIjKlMnOpQrStUvWxYz', 'nope-example.com', 'sd_missing']) {
    const response = await api.get(`/v2/domains/${path}`);
    assert.deepEqual([response.status, response.body], [404, { error: 'Domain not found' }]);
  }
  const stranger = await workspace('pro');
  const foreign = await stranger.api.get(`/v2/domains/${created.id}`);
  assert.deepEqual([foreign.status, foreign.body], [404, { error: 'Domain not found' }]);
});

test('GET /domains lists newest first with domain_limit, domain_count, plan_name, paging, search, filters and sorting', async () => {
  const { api } = await workspace('pro');
  const names = ['alpha-example.com', 'bravo-example.com', 'charlie-example.com', 'delta-example.net'];
  const created = [];
  for (const name of names) created.push((await api.post('/v2/domains', { name })).body);

  const all = await api.get('/v2/domains');
  assert.equal(all.status, 200);
  assert.deepEqual(all.body, {
    data: [...created].reverse(),
    next_page_url: null,
    previous_page_url: null,
    domain_limit: 100,
    domain_count: 4,
    plan_name: 'Pro',
  });

  const page1 = await api.get('/v2/domains?limit=3');
  assert.deepEqual(
    page1.body.data.map((d: any) => d.name),
    ['delta-example.net', 'charlie-example.com', 'bravo-example.com'],
  );
  assert.equal(page1.body.next_page_url, '/v2/domains?limit=3&page=2');
  const page2 = await api.get(page1.body.next_page_url);
  assert.deepEqual(
    page2.body.data.map((d: any) => d.name),
    ['alpha-example.com'],
  );
  assert.deepEqual([page2.body.next_page_url, page2.body.previous_page_url], [null, '/v2/domains?limit=3&page=1']);
  assert.equal(page2.body.domain_count, 4, 'the count is the workspace total, not the page');

  const names_ = async (query: string) => (await api.get(`/v2/domains?${query}`)).body.data.map((d: any) => d.name);
  assert.deepEqual(await names_('search=CHAR'), ['charlie-example.com']);
  assert.deepEqual(await names_('name.ends_with=.net'), ['delta-example.net']);
  assert.deepEqual(await names_('name.starts_with=a&name.starts_with=b&match=or&order=name'), ['alpha-example.com', 'bravo-example.com']);
  assert.deepEqual(await names_('order=name&direction=desc&limit=2'), ['delta-example.net', 'charlie-example.com']);
  assert.deepEqual(await names_('order=name'), names, 'order without direction sorts ascending');
  assert.deepEqual(await names_('order=name&direction=sideways'), names, 'an unknown direction is ignored');
  assert.deepEqual(await names_('order=nonsense'), [...names].reverse(), 'an unknown sort key is ignored (newest first)');
  assert.deepEqual(await names_('verification_status.exact=verified'), []);
  assert.equal((await names_('verification_status.exact=pending')).length, 4);
  assert.equal((await names_('dkim_status.in=pending,ok')).length, 4);
  assert.equal((await names_('track_loads.exact=true')).length, 0);
  assert.equal((await names_('created_at.after=2000-01-01')).length, 4);
  assert.equal((await names_('unknown_key.exact=1')).length, 4, 'unknown filter keys are ignored');

  const tooMany = await api.get('/v2/domains?limit=101');
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.body.error, 'Bad Request');

  const empty = await (await workspace('payg')).api.get('/v2/domains');
  assert.deepEqual(empty.body, {
    data: [],
    next_page_url: null,
    previous_page_url: null,
    domain_limit: 3,
    domain_count: 0,
    plan_name: 'Pay as you go',
  });
});

test('PATCH /domains/{id}: tracking needs a verified CNAME (422), dmarc_reports is plan-gated, keys move their records', async () => {
  const { api, workspace: ws } = await workspace('pro');
  const created = (await api.post('/v2/domains', { name: 'patch-example.com' })).body;
  for (const body of [{ track_loads: true }, { track_clicks: true }, { track_clicks: 1, track_loads: false }]) {
    const response = await api.patch(`/v2/domains/${created.id}`, body);
    assert.deepEqual(
      [response.status, response.body],
      [422, { error: 'Tracking can only be turned on once the tracking CNAME record is verified' }],
    );
  }
  // Turning tracking off, or leaving it off, is always allowed; legacy flags are ignored.
  const off = await api.patch(`/v2/domains/${created.id}`, { track_loads: false, track_clicks: false, outgoing: true, use_for_any: false });
  assert.equal(off.status, 200);
  assert.deepEqual(off.body, created, 'nothing changed');
  assert.deepEqual(await events(ws.id, 'domain.updated'), [], 'no event without a change');

  const moved = await api.patch('/v2/domains/patch-example.com', { tracking_key: 'links', inbound_key: 'mail-in', dmarc_reports: true });
  assert.equal(moved.status, 200);
  assert.equal(moved.body.tracking_key, 'links');
  assert.equal(moved.body.inbound_key, 'mail-in');
  assert.equal(moved.body.dmarc_reports, true);
  assert.equal(
    moved.body.dns_records[3].value,
    `v=DMARC1; p=none; rua=mailto:${moved.body.dmarc_address}; ruf=mailto:${moved.body.dmarc_address};`,
  );
  assert.deepEqual(
    moved.body.dns_records.slice(4).map((r: any) => r.name),
    ['links.patch-example.com', 'mail-in.patch-example.com'],
  );
  assert.ok(moved.body.updated_at > created.updated_at);
  assert.deepEqual((await api.get(`/v2/domains/${created.id}`)).body, moved.body);

  const updated = await events(ws.id, 'domain.updated');
  assert.equal(updated.length, 1);
  assert.deepEqual(
    {
      id: updated[0].id,
      object: updated[0].object,
      tracking_key: updated[0].tracking_key,
      inbound_key: updated[0].inbound_key,
      track_loads: updated[0].track_loads,
      verification_status: updated[0].verification_status,
      dmarc_reports: updated[0].dmarc_reports,
      updated_at: updated[0].updated_at,
    },
    {
      id: created.id,
      object: 'domain',
      tracking_key: 'links',
      inbound_key: 'mail-in',
      track_loads: false,
      verification_status: 'pending',
      dmarc_reports: true,
      updated_at: moved.body.updated_at,
    },
  );

  const reset = await api.patch(`/v2/domains/${created.id}`, { tracking_key: null, dmarc_reports: false });
  assert.equal(reset.body.tracking_key, null);
  assert.equal(reset.body.dmarc_address, null);
  assert.equal(reset.body.dns_records[4].name, 'go.patch-example.com');

  const badKey = await api.patch(`/v2/domains/${created.id}`, { inbound_key: 'a b' });
  assert.equal(badKey.status, 400);
  assert.equal((await api.patch(`/v2/domains/${created.id}`, { inbound_key: 'postlane' })).status, 400);
  const wrongType = await api.patch(`/v2/domains/${created.id}`, { track_loads: 'yes' });
  assert.equal(wrongType.status, 400);
  assert.equal(wrongType.body.error, 'Bad Request');
  const missing = await api.patch('/v2/domains/dom_2AbCdEfGhIjKlMnOpQrStUvWxYz', { dmarc_reports: false });
  assert.deepEqual([missing.status, missing.body], [404, { error: 'Domain not found' }]);

  const payg = await workspace('payg');
  const paygDomain = (await payg.api.post('/v2/domains', { name: 'patch-example.com' })).body;
  const gated = await payg.api.patch(`/v2/domains/${paygDomain.id}`, { dmarc_reports: true });
  assert.deepEqual([gated.status, gated.body], [403, { error: 'plan_required', required_plan: 'pro' }]);
  assert.equal((await payg.api.patch(`/v2/domains/${paygDomain.id}`, { dmarc_reports: false })).status, 200);
});

test('there is no POST /domains/{id} update alias (the update is PATCH)', async () => {
  const { api } = await workspace('pro');
  const created = (await api.post('/v2/domains', { name: 'alias-example.com' })).body;
  const response = await api.post(`/v2/domains/${created.id}`, { inbound_key: 'x' });
  assert.equal(response.status, 404);
});

test('DELETE /domains/{id} removes the domain (and its key), emits domain.deleted, frees the name', async () => {
  const { api, workspace: ws } = await workspace('payg');
  const created = (await api.post('/v2/domains', { name: 'delete-example.com' })).body;
  const deleted = await api.delete('/v2/domains/delete-example.com');
  assert.deepEqual([deleted.status, deleted.body], [200, { object: 'domain', id: created.id, name: 'delete-example.com', deleted: true }]);
  assert.deepEqual((await api.get(`/v2/domains/${created.id}`)).status, 404);
  assert.equal((await api.get('/v2/domains')).body.domain_count, 0);
  const again = await api.delete(`/v2/domains/${created.id}`);
  assert.deepEqual([again.status, again.body], [404, { error: 'Domain not found' }]);
  const event = (await events(ws.id, 'domain.deleted'))[0];
  assert.deepEqual([event.id, event.object, event.name, event.deleted], [created.id, 'domain', 'delete-example.com', true]);
  assert.equal(await app.running.ctx.db.selectFrom('domains').select('id').where('id', '=', created.id).executeTakeFirst(), undefined);
  const readded = await api.post('/v2/domains', { name: 'delete-example.com' });
  assert.equal(readded.status, 201);
  assert.notEqual(readded.body.id, created.id);
});

test('domains need a full key: a sending key gets 403, no key 401', async () => {
  const { api } = await workspace('pro');
  const sendingKey = (await api.post('/v2/api-keys', { name: 'sender', scope: 'sending' })).body.key;
  const sending: ApiClient = app.as(sendingKey);
  for (const [method, path] of [
    ['GET', '/v2/domains'],
    ['POST', '/v2/domains'],
    ['GET', '/v2/domains/x.com'],
    ['PATCH', '/v2/domains/x.com'],
    ['DELETE', '/v2/domains/x.com'],
    ['POST', '/v2/domains/x.com/verify'],
  ]) {
    const response = await sending.request(method, path, method === 'POST' || method === 'PATCH' ? {} : undefined);
    assert.equal(response.status, 403, `${method} ${path}`);
    assert.equal(response.body.error, 'Forbidden');
  }
  assert.equal((await app.as(null).get('/v2/domains')).status, 401);
});

test('API keys: sending_domain_id must be a real domain of the workspace', async () => {
  const { api, workspace: ws } = await workspace('pro');
  const domain = (await api.post('/v2/domains', { name: 'keyed-example.com' })).body;
  const key = await api.post('/v2/api-keys', { name: 'restricted', scope: 'sending', sending_domain_id: domain.id });
  assert.equal(key.status, 201);
  assert.equal(key.body.sending_domain_id, domain.id);

  const unknown = await api.post('/v2/api-keys', { name: 'ghost', scope: 'sending', sending_domain_id: 'dom_2AbCdEfGhIjKlMnOpQrStUvWxYz' });
  assert.equal(unknown.status, 400);
  assert.deepEqual(Object.keys(unknown.body), ['error']);

  const stranger = await workspace('pro');
  const foreign = await stranger.api.post('/v2/api-keys', { name: 'foreign', scope: 'sending', sending_domain_id: domain.id });
  assert.equal(foreign.status, 400);

  assert.equal(await findWorkspaceDomainId(app.running.ctx.db, ws.id, domain.id), domain.id);
  assert.equal(await findWorkspaceDomainId(app.running.ctx.db, stranger.workspace.id, domain.id), null);
  assert.equal(await findWorkspaceDomainId(app.running.ctx.db, ws.id, 'keyed-example.com'), null, 'ids only, not names');
});

test('sending helpers: a domain by exact from-domain or id, and the domain a host belongs to', async () => {
  const { api, workspace: ws } = await workspace('pro');
  const domain = (await api.post('/v2/domains', { name: 'helpers-example.com', tracking_key: 'links' })).body;
  const { db, secrets } = app.running.ctx;
  const found = await findSendingDomain(db, secrets, ws.id, 'Helpers-Example.com');
  assert.ok(found);
  assert.deepEqual(
    { ...found, dkimPrivateKeyPem: found.dkimPrivateKeyPem.split('\n')[0] },
    {
      id: domain.id,
      workspaceId: ws.id,
      name: 'helpers-example.com',
      verificationStatus: 'pending',
      verified: false,
      dkimSelector: 'postlane',
      dkimPrivateKeyPem: '-----BEGIN PRIVATE KEY-----',
      returnPathDomain: 'postlane.helpers-example.com',
      returnPathVerified: false,
      trackingHost: 'links.helpers-example.com',
      trackingVerified: false,
      trackLoads: false,
      trackClicks: false,
      inboundHost: 'inbound.helpers-example.com',
      inboundVerified: false,
    },
  );
  assert.equal(await findSendingDomain(db, secrets, ws.id, 'sub.helpers-example.com'), null, 'a subdomain is its own domain');
  assert.equal((await findSendingDomainById(db, secrets, ws.id, domain.id))?.name, 'helpers-example.com');
  assert.equal(await findSendingDomainById(db, secrets, 'wsp_other', domain.id), null);

  const host = async (h: string) => {
    const result = await findDomainByHost(db, h);
    return result && [result.domainId, result.role];
  };
  assert.deepEqual(await host('inbound.helpers-example.com'), [domain.id, 'inbound']);
  assert.deepEqual(await host('POSTLANE.helpers-example.com.'), [domain.id, 'return_path']);
  assert.deepEqual(await host('links.helpers-example.com'), [domain.id, 'tracking']);
  assert.deepEqual(await host('helpers-example.com'), [domain.id, 'apex']);
  assert.equal(await host('other.helpers-example.com'), null);
});

test('the domain routes are in the OpenAPI document', async () => {
  const paths = (await app.as(null).get('/openapi.json')).body.paths;
  assert.ok(paths['/v2/domains'].post && paths['/v2/domains'].get);
  assert.ok(paths['/v2/domains/{id}'].get && paths['/v2/domains/{id}'].patch && paths['/v2/domains/{id}'].delete);
  assert.ok(paths['/v2/domains/{id}/verify'].post);
  assert.equal(paths['/v2/domains/{id}'].post, undefined);
});
