// DMARC reports as receivers send them: real mail over SMTP to the inbound MX, addressed to
// the domain's published report address, read back through the API. Google's zip, Microsoft's
// gzip, a Yahoo-like plain XML attachment and an RFC 6591 failure report; duplicates, a broken
// report, collection switched off, the plan gate, and two workspaces that never see each other.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { updateWorkspace } from '../../src/resources/workspaces/service.ts';
import { collectingDomain, deliver, fixture, settledReports, startDmarcApp, type DmarcApp } from './helpers.ts';

let app: DmarcApp;
let domain: { id: string; name: string; dmarc_address: string };
const ids: Record<string, string> = {};

before(async () => {
  app = await startDmarcApp();
  domain = await collectingDomain(app.api, 'acme.test');
});
after(async () => {
  await app?.close();
});

const reports = (query = '') => app.api.get(`/v2/domains/acme.test/dmarc/reports${query}`);

test('the DMARC record sends rua and ruf to the report address at the service host', async () => {
  const read = await app.api.get(`/v2/domains/${domain.id}`);
  const record = read.body.dns_records.find((r: { name: string }) => r.name === '_dmarc.acme.test');
  assert.equal(record.value, `v=DMARC1; p=none; rua=mailto:${domain.dmarc_address}; ruf=mailto:${domain.dmarc_address};`);
});

test('Google (zip), Microsoft (gzip) and Yahoo-like (plain XML) reports arrive by mail and are read back with their records', async () => {
  for (const file of ['google-aggregate.eml', 'microsoft-aggregate.eml', 'yahoo-aggregate.eml']) {
    const sent = await deliver(app.inboundPort, domain.dmarc_address, fixture(file), 'noreply-dmarc-support@google.com');
    assert.equal(sent.response, '250 2.0.0 OK', file);
  }
  const list = await settledReports(app.api, 'acme.test', 3);
  // Newest first.
  assert.deepEqual(
    list.map((r) => [
      r.org_name,
      r.report_id,
      r.status,
      r.type,
      r.record_count,
      r.message_count,
      r.pass_count,
      r.fail_count,
      r.pass_rate,
      r.source,
    ]),
    [
      ['Yahoo', '1767225600.184467', 'processed', 'aggregate', 3, 14, 9, 5, 0.6429, 'email'],
      ['Enterprise Outlook', 'f0b3c7a2e4d94b4c8a1e6d5b3c2a1f09', 'processed', 'aggregate', 2, 19, 17, 2, 0.8947, 'email'],
      ['google.com', '4962375528751822301', 'processed', 'aggregate', 3, 50, 45, 5, 0.9, 'email'],
    ],
  );
  for (const r of list) ids[r.org_name] = r.id;
  assert.equal(list[2].filename, 'google.com!acme.test!1767225600!1767311999.zip');
  assert.equal(list[1].filename, 'enterprise.protection.outlook.com!acme.test!1767225600!1767312000.xml.gz');
  assert.deepEqual([list[2].period_start, list[2].period_end], ['2026-01-01T00:00:00.000000Z', '2026-01-01T23:59:59.000000Z']);
  assert.deepEqual([list[2].domain_id, list[2].domain, list[2].org_email], [domain.id, 'acme.test', 'noreply-dmarc-support@google.com']);

  const google = await app.api.get(`/v2/domains/acme.test/dmarc/reports/${ids['google.com']}`);
  assert.equal(google.status, 200);
  assert.equal(google.body.extra_contact_info, 'https://support.google.com/a/answer/2466580');
  assert.deepEqual(google.body.policy_published, {
    domain: 'acme.test',
    adkim: 'r',
    aspf: 'r',
    p: 'none',
    sp: 'none',
    np: 'none',
    pct: 100,
    fo: null,
  });
  assert.deepEqual(google.body.records[0], {
    source_ip: '203.0.113.10',
    count: 42,
    disposition: 'none',
    dkim: 'pass',
    spf: 'pass',
    dmarc: 'pass',
    reasons: [],
    header_from: 'acme.test',
    envelope_from: null,
    envelope_to: null,
    auth_results: {
      dkim: [{ domain: 'acme.test', selector: 'postlane', result: 'pass', human_result: null }],
      spf: [{ domain: 'postlane.acme.test', scope: null, result: 'pass' }],
    },
  });
  assert.deepEqual(
    google.body.records.map((r: any) => [r.source_ip, r.count, r.dmarc]),
    [
      ['203.0.113.10', 42, 'pass'],
      ['198.51.100.7', 3, 'pass'],
      ['192.0.2.99', 5, 'fail'],
    ],
  );

  const microsoft = await app.api.get(`/v2/domains/${domain.id}/dmarc/reports/${ids['Enterprise Outlook']}`);
  assert.equal(microsoft.body.policy_published.p, 'quarantine');
  assert.deepEqual(microsoft.body.records[1], {
    source_ip: '2001:db8::25',
    count: 2,
    disposition: 'quarantine',
    dkim: 'fail',
    spf: 'fail',
    dmarc: 'fail',
    reasons: [],
    header_from: 'acme.test',
    envelope_from: 'acme.test',
    envelope_to: 'hotmail.com',
    auth_results: {
      dkim: [{ domain: 'acme.test', selector: 's1', result: 'fail', human_result: null }],
      spf: [{ domain: 'acme.test', scope: 'mfrom', result: 'softfail' }],
    },
  });

  const yahoo = await app.api.get(`/v2/domains/acme.test/dmarc/reports/${ids.Yahoo}`);
  assert.equal(yahoo.body.policy_published.p, 'reject');
  assert.deepEqual(yahoo.body.records[2].reasons, [{ type: 'mailing_list', comment: 'arc=pass as[1].d=lists.forwarder.example' }]);
  assert.equal(yahoo.body.records[1].header_from, 'news.acme.test');
});

test('a forensic report by mail: in the report list, the forensic list and retrievable both ways', async () => {
  const sent = await deliver(
    app.inboundPort,
    domain.dmarc_address,
    fixture('forensic-auth-failure.eml'),
    'dmarc-failures@mx.receiver.example',
  );
  assert.equal(sent.code, 250);
  const list = await settledReports(app.api, 'acme.test', 4);
  const forensic = list[0];
  assert.deepEqual(
    [forensic.type, forensic.status, forensic.org_name, forensic.report_id, forensic.period_start],
    ['forensic', 'processed', 'mx.receiver.example', 'afrf-20260102091403.4417@mx.receiver.example', '2026-01-02T09:13:58.000000Z'],
  );
  const forensicList = await app.api.get('/v2/domains/acme.test/dmarc/forensic');
  assert.equal(forensicList.status, 200);
  assert.deepEqual(forensicList.body.meta, { total: 1, limit: 25, offset: 0 });
  const item = forensicList.body.data[0];
  assert.equal(item.id, forensic.id);
  assert.deepEqual(
    [
      item.feedback_type,
      item.auth_failure,
      item.source_ip,
      item.original_mail_from,
      item.original_rcpt_to,
      item.delivery_result,
      item.identity_alignment,
      item.reported_domain,
    ],
    ['auth-failure', 'dmarc', '192.0.2.99', 'billing@acme.test', 'alice@receiver.example', 'smg-policy', 'none', 'acme.test'],
  );
  assert.deepEqual(item.original_message, {
    from: '"Acme Billing" <billing@acme.test>',
    to: 'alice@receiver.example',
    subject: 'Your invoice is attached',
    date: 'Fri, 2 Jan 2026 09:13:50 +0000',
    message_id: '<8842.spoof@mail.spoofer.example>',
  });
  const one = await app.api.get(`/v2/domains/acme.test/dmarc/forensic/${forensic.id}`);
  assert.deepEqual(one.body, item);
  assert.deepEqual((await app.api.get(`/v2/domains/acme.test/dmarc/reports/${forensic.id}`)).body, item);
  // An aggregate report is not a forensic one; an unknown id is no report.
  const wrongType = await app.api.get(`/v2/domains/acme.test/dmarc/forensic/${ids['google.com']}`);
  assert.deepEqual([wrongType.status, wrongType.body], [404, { error: 'DMARC report not found' }]);
  assert.equal((await app.api.get('/v2/domains/acme.test/dmarc/reports/dmr_000000000000000000000000000')).status, 404);
});

test('the same report sent again is a duplicate of the first and is counted once', async () => {
  const before = (await app.api.get('/v2/domains/acme.test/dmarc/stats/results')).body.summary;
  assert.equal((await deliver(app.inboundPort, domain.dmarc_address, fixture('google-aggregate.eml'))).code, 250);
  const list = await settledReports(app.api, 'acme.test', 5);
  assert.deepEqual(
    [list[0].status, list[0].duplicate_of, list[0].org_name, list[0].report_id, list[0].message_count],
    ['duplicate', ids['google.com'], 'google.com', '4962375528751822301', 0],
  );
  const copy = await app.api.get(`/v2/domains/acme.test/dmarc/reports/${list[0].id}`);
  assert.deepEqual(copy.body.records, []);
  assert.deepEqual((await app.api.get('/v2/domains/acme.test/dmarc/stats/results')).body.summary, before);
  const duplicates = await reports('?status=duplicate');
  assert.deepEqual(
    duplicates.body.data.map((r: any) => r.id),
    [list[0].id],
  );
});

test('a broken report is failed with the reason, and so is a mail without any report', async () => {
  assert.equal((await deliver(app.inboundPort, domain.dmarc_address, fixture('broken-aggregate.eml'))).code, 250);
  const text = 'From: someone@elsewhere.example\r\nTo: x@y.example\r\nSubject: Hello\r\n\r\nNot a report.\r\n';
  assert.equal((await deliver(app.inboundPort, domain.dmarc_address, text)).code, 250);
  const list = await settledReports(app.api, 'acme.test', 7);
  const [noReport, broken] = list;
  assert.deepEqual(
    [broken.status, broken.failure_reason, broken.org_name, broken.period_start, broken.record_count],
    [
      'failed',
      'The XML is cut off: it ends inside feedback, record, identifiers',
      'mail.receiver.example',
      '2026-01-01T00:00:00.000000Z',
      0,
    ],
  );
  assert.deepEqual(
    [noReport.status, noReport.failure_reason, noReport.filename],
    ['failed', 'The message carries no DMARC report (no XML, gzip or zip attachment, no feedback report)', null],
  );
  const failed = await reports('?status=failed');
  assert.deepEqual(failed.body.meta, { total: 2, limit: 25, offset: 0 });
});

test('breakdowns by source IP, reporter and results add up the processed aggregate reports', async () => {
  const sources = await app.api.get('/v2/domains/acme.test/dmarc/stats/sources');
  assert.equal(sources.status, 200);
  assert.deepEqual(sources.body.meta, { limit: 50, offset: 0 });
  assert.deepEqual(
    sources.body.data.map((s: any) => [s.source_ip, s.message_count, s.dmarc.pass, s.dmarc.pass_rate, s.reporter_count]),
    [
      ['203.0.113.10', 68, 68, 1, 3],
      ['192.0.2.99', 5, 0, 0, 1],
      ['192.0.2.200', 4, 0, 0, 1],
      ['198.51.100.7', 3, 3, 1, 1],
      ['2001:db8::25', 2, 0, 0, 1],
      ['198.51.100.20', 1, 0, 0, 1],
    ],
  );
  const forwarder = sources.body.data[3];
  assert.deepEqual(
    [forwarder.spf, forwarder.dkim],
    [
      { pass: 0, fail: 3, pass_rate: 0 },
      { pass: 3, fail: 0, pass_rate: 1 },
    ],
  );
  assert.deepEqual(sources.body.data[2].dispositions, { none: 0, quarantine: 4, reject: 0 });
  assert.deepEqual(
    [sources.body.data[0].first_seen, sources.body.data[0].last_seen],
    ['2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'],
  );

  const reporters = await app.api.get('/v2/domains/acme.test/dmarc/stats/reporters');
  assert.deepEqual(
    reporters.body.data.map((r: any) => [
      r.org_name,
      r.report_count,
      r.message_count,
      r.dmarc.pass_rate,
      r.spf.pass_rate,
      r.dkim.pass_rate,
      r.source_count,
    ]),
    [
      ['google.com', 1, 50, 0.9, 0.84, 0.9, 3],
      ['Enterprise Outlook', 1, 19, 0.8947, 0.8947, 0.8947, 2],
      ['Yahoo', 1, 14, 0.6429, 0.6429, 0.6429, 3],
    ],
  );

  const results = await app.api.get('/v2/domains/acme.test/dmarc/stats/results');
  assert.deepEqual(results.body.summary, {
    message_count: 83,
    dmarc: { pass: 71, fail: 12, pass_rate: 0.8554 },
    spf: { pass: 68, fail: 15, pass_rate: 0.8193 },
    dkim: { pass: 71, fail: 12, pass_rate: 0.8554 },
    dispositions: { none: 77, quarantine: 6, reject: 0 },
  });
  assert.deepEqual(
    results.body.data.map((r: any) => [r.spf, r.dkim, r.dmarc, r.disposition, r.message_count, r.share]),
    [
      ['pass', 'pass', 'pass', 'none', 68, 0.8193],
      ['fail', 'fail', 'fail', 'none', 6, 0.0723],
      ['fail', 'fail', 'fail', 'quarantine', 6, 0.0723],
      ['fail', 'pass', 'pass', 'none', 3, 0.0361],
    ],
  );

  // org_name, limit and offset; a period with no reports.
  const yahoo = await app.api.get('/v2/domains/acme.test/dmarc/stats/sources?org_name=Yahoo&limit=2&offset=1');
  assert.deepEqual(
    yahoo.body.data.map((s: any) => s.source_ip),
    ['192.0.2.200', '198.51.100.20'],
  );
  assert.deepEqual(yahoo.body.meta, { limit: 2, offset: 1 });
  const later = await app.api.get('/v2/domains/acme.test/dmarc/stats/results?from=2026-01-02');
  assert.deepEqual([later.body.data, later.body.summary.message_count, later.body.summary.dmarc.pass_rate], [[], 0, null]);
  // Breakdowns take at most 200 (docs/api.md, "DMARC reports").
  assert.equal((await app.api.get('/v2/domains/acme.test/dmarc/stats/reporters?limit=200')).status, 200);
  assert.equal((await app.api.get('/v2/domains/acme.test/dmarc/stats/reporters?limit=201')).status, 400);
  assert.equal((await app.api.get('/v2/domains/acme.test/dmarc/stats/sources?offset=-1')).status, 400);
});

test('a domain that does not collect reports gets none: the MX refuses its address until collection is on again', async () => {
  const off = await app.api.patch('/v2/domains/acme.test', { dmarc_reports: false });
  assert.deepEqual([off.status, off.body.dmarc_reports, off.body.dmarc_address], [200, false, null]);
  const refused = await deliver(app.inboundPort, domain.dmarc_address, fixture('microsoft-aggregate.eml'));
  assert.deepEqual([refused.ok, refused.code], [false, 550]);
  assert.match(refused.response, /5\.1\.1/);
  // An upload is refused the same way.
  const upload = await app.api.post('/v2/domains/acme.test/dmarc/reports', { content: fixture('yahoo-aggregate.xml').toString('base64') });
  assert.deepEqual(
    [upload.status, upload.body],
    [422, { error: 'DMARC report collection is off for this domain: turn on dmarc_reports first' }],
  );
  // Reports already collected stay readable.
  assert.equal((await reports()).body.meta.total, 7);

  const on = await app.api.patch('/v2/domains/acme.test', { dmarc_reports: true });
  assert.equal(on.body.dmarc_address, domain.dmarc_address, 'the same address comes back');
  // An address that is not a domain's is refused too.
  const stranger = await deliver(app.inboundPort, 'dmarc-0123456789abcdef@mail.postlane.test', fixture('microsoft-aggregate.eml'));
  assert.equal(stranger.code, 550);
  assert.equal((await reports()).body.meta.total, 7);
});

test('below Pro: 403 plan_required on every DMARC endpoint and at the domain; mail to the address is refused', async () => {
  const payg = await app.newWorkspace({ plan: 'payg' });
  const created = await payg.api.post('/v2/domains', { name: 'payg-reports.test' });
  assert.equal(created.status, 201);
  const gated = await payg.api.patch('/v2/domains/payg-reports.test', { dmarc_reports: true });
  assert.deepEqual([gated.status, gated.body.error, gated.body.required_plan], [403, 'plan_required', 'pro']);
  const paths = ['reports', 'reports/dmr_x', 'forensic', 'forensic/dmr_x', 'stats/sources', 'stats/reporters', 'stats/results'];
  for (const path of paths) {
    const response = await payg.api.get(`/v2/domains/payg-reports.test/dmarc/${path}`);
    assert.deepEqual([response.status, response.body.error, response.body.required_plan], [403, 'plan_required', 'pro'], path);
  }
  const upload = await payg.api.post('/v2/domains/payg-reports.test/dmarc/reports', {
    content: fixture('yahoo-aggregate.xml').toString('base64'),
  });
  assert.deepEqual([upload.status, upload.body.error], [403, 'plan_required']);

  // A Pro workspace whose plan drops to Pay as you go stops collecting at once.
  const pro = await app.newWorkspace({ plan: 'pro' });
  const reportsOn = await collectingDomain(pro.api, 'downgraded.test');
  await updateWorkspace(app.running.ctx.db, pro.workspace.id, { plan: 'payg' });
  assert.equal((await deliver(app.inboundPort, reportsOn.dmarc_address, fixture('google-aggregate.eml'))).code, 550);
  await updateWorkspace(app.running.ctx.db, pro.workspace.id, { plan: 'business' });
  assert.equal((await deliver(app.inboundPort, reportsOn.dmarc_address, fixture('google-aggregate.eml'))).code, 250);
});

test('two workspaces with the same domain name: each sees only the reports sent to its own address', async () => {
  const other = await app.newWorkspace({ plan: 'business' });
  const theirs = await collectingDomain(other.api, 'acme.test');
  assert.notEqual(theirs.dmarc_address, domain.dmarc_address);
  assert.equal((await deliver(app.inboundPort, theirs.dmarc_address, fixture('microsoft-aggregate.eml'))).code, 250);
  const theirList = await settledReports(other.api, 'acme.test', 1);
  // Not a duplicate: the other workspace's report is another domain's.
  assert.deepEqual([theirList[0].status, theirList[0].domain_id], ['processed', theirs.id]);
  assert.equal((await other.api.get('/v2/domains/acme.test/dmarc/stats/sources')).body.data.length, 2);

  assert.equal((await reports()).body.meta.total, 7);
  assert.equal((await app.api.get('/v2/domains/acme.test/dmarc/stats/results')).body.summary.message_count, 83);
  // Neither reaches the other's domain or report by id.
  for (const path of [
    `/v2/domains/${domain.id}/dmarc/reports`,
    `/v2/domains/${domain.id}/dmarc/stats/sources`,
    `/v2/domains/acme.test/dmarc/reports/${ids['google.com']}`,
  ]) {
    const response = await other.api.get(path);
    assert.equal(response.status, 404, path);
  }
  assert.deepEqual((await app.api.get(`/v2/domains/acme.test/dmarc/reports/${theirList[0].id}`)).body, { error: 'DMARC report not found' });
});
