// The DMARC API beyond mail: uploads (every outcome and every refusal), the report list's
// parameters (type, status, org_name, from/to, limit/offset, key.condition filters, order),
// and reports waiting for a worker (`pending`) until one runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startPostlane } from '../../src/server.ts';
import { databaseUrlOf, eventually, freePort, startTestApp } from '../helpers/app.ts';
import { collectingDomain, deliver, fixture, startDmarcApp, type DmarcApp } from './helpers.ts';

let app: DmarcApp;

before(async () => {
  app = await startDmarcApp();
  await collectingDomain(app.api, 'acme.test');
});
after(async () => {
  await app?.close();
});

const GOOGLE_XML = fixture('google-aggregate.xml').toString();
const DAY = 86_400;
const JAN_1 = 1767225600;

/** The Google report with another reporter, report id and period. */
function variant(reportId: string, begin: number, org = 'google.com'): string {
  return GOOGLE_XML.replace('<org_name>google.com</org_name>', `<org_name>${org}</org_name>`)
    .replace('<report_id>4962375528751822301</report_id>', `<report_id>${reportId}</report_id>`)
    .replace('<begin>1767225600</begin>', `<begin>${begin}</begin>`)
    .replace('<end>1767311999</end>', `<end>${begin + DAY - 1}</end>`);
}

const upload = (content: Buffer | string, filename?: string, domain = 'acme.test') =>
  app.api.post(`/v2/domains/${domain}/dmarc/reports`, {
    content: Buffer.from(content).toString('base64'),
    ...(filename ? { filename } : {}),
  });

test('upload: XML, gzip, a report mail (zip inside) and a forensic mail are read at once', async () => {
  const xml = await upload(variant('u-plain', JAN_1), 'google.com!acme.test!1767225600!1767311999.xml');
  assert.equal(xml.status, 201, xml.text);
  assert.deepEqual(
    [xml.body.status, xml.body.type, xml.body.source, xml.body.report_id, xml.body.records.length, xml.body.message_count],
    ['processed', 'aggregate', 'upload', 'u-plain', 3, 50],
  );
  assert.equal(xml.body.filename, 'google.com!acme.test!1767225600!1767311999.xml');
  assert.match(xml.body.id, /^dmr_[A-Za-z0-9]{27}$/);

  const gz = await upload(gzipSync(variant('u-gzip', JAN_1)));
  assert.deepEqual([gz.status, gz.body.status, gz.body.report_id, gz.body.filename], [201, 'processed', 'u-gzip', null]);

  const mail = await upload(fixture('google-aggregate.eml'));
  assert.deepEqual(
    [mail.status, mail.body.status, mail.body.report_id, mail.body.filename],
    [201, 'processed', '4962375528751822301', 'google.com!acme.test!1767225600!1767311999.zip'],
  );

  const forensic = await upload(fixture('forensic-auth-failure.eml'));
  assert.deepEqual(
    [forensic.status, forensic.body.type, forensic.body.status, forensic.body.auth_failure, forensic.body.source_ip],
    [201, 'forensic', 'processed', 'dmarc', '192.0.2.99'],
  );
});

test('upload outcomes: a copy is a duplicate, a broken file failed, a report about another domain failed, a subdomain fine', async () => {
  const first = await upload(variant('u-dup', JAN_1));
  const again = await upload(variant('u-dup', JAN_1));
  assert.deepEqual([again.status, again.body.status, again.body.duplicate_of, again.body.records], [201, 'duplicate', first.body.id, []]);
  // Another reporter may use the same report id.
  assert.equal((await upload(variant('u-dup', JAN_1, 'Yahoo'))).body.status, 'processed');

  const broken = await upload(variant('u-broken', JAN_1).replace('<count>42</count>', '<count>many</count>'));
  assert.deepEqual(
    [broken.status, broken.body.status, broken.body.failure_reason],
    [201, 'failed', 'record 1: count "many" is not a whole number'],
  );

  const elsewhere = await upload(variant('u-other', JAN_1).replace('<domain>acme.test</domain>', '<domain>other.example</domain>'));
  assert.deepEqual(
    [elsewhere.body.status, elsewhere.body.failure_reason],
    ['failed', 'The report is about other.example, not acme.test or one of its subdomains'],
  );
  const sub = await upload(variant('u-sub', JAN_1).replace('<domain>acme.test</domain>', '<domain>news.acme.test</domain>'));
  assert.equal(sub.body.status, 'processed');
});

test('upload refusals: not base64, no content, too large, a mail without a report, several reports, unknown domain', async () => {
  const total = async () => (await app.api.get('/v2/domains/acme.test/dmarc/reports')).body.meta.total;
  const before = await total();
  const notBase64 = await app.api.post('/v2/domains/acme.test/dmarc/reports', { content: '<feedback/>' });
  assert.deepEqual([notBase64.status, notBase64.body], [400, { error: 'content must be the report file in base64' }]);
  const missing = await app.api.post('/v2/domains/acme.test/dmarc/reports', { filename: 'x.xml' });
  assert.deepEqual(
    [missing.status, missing.body.error, missing.body.details?.[0]?.params],
    [400, 'Bad Request', { missingProperty: 'content' }],
  );
  const huge = await upload(Buffer.alloc(16 * 1024 * 1024 + 1, 0x20));
  assert.deepEqual([huge.status, huge.body], [413, { error: 'Report too large', message: 'A report file may be at most 16 MB' }]);
  const plain = await upload('From: a@b.example\r\nSubject: hi\r\n\r\nhello\r\n');
  assert.deepEqual(
    [plain.status, plain.body.error],
    [400, 'The message carries no DMARC report (no XML, gzip or zip attachment, no feedback report)'],
  );
  const attachment = (name: string, xml: string) =>
    `--b\r\nContent-Type: application/gzip; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${gzipSync(xml).toString('base64')}\r\n`;
  const two = `From: dmarc@reporter.example\r\nSubject: Two reports\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${attachment('a.xml.gz', variant('two-a', JAN_1))}${attachment('b.xml.gz', variant('two-b', JAN_1))}--b--\r\n`;
  const several = await upload(two);
  assert.deepEqual([several.status, several.body.error], [400, 'The message holds 2 report files; upload them one at a time']);
  const unknown = await upload(GOOGLE_XML, undefined, 'unknown.test');
  assert.deepEqual([unknown.status, unknown.body], [404, { error: 'Domain not found' }]);
  assert.equal(await total(), before, 'nothing was stored');
  // The same two-report mail arriving by SMTP is two reports.
  const domain = (await app.api.get('/v2/domains/acme.test')).body;
  assert.equal((await deliver(app.inboundPort, domain.dmarc_address, two)).code, 250);
  const both = await eventually(async () => {
    const list = await app.api.get('/v2/domains/acme.test/dmarc/reports?source.exact=email&status=processed&order=filename');
    return list.body.data.length === 2 && list.body.data;
  });
  assert.deepEqual(
    both.map((r: any) => [r.filename, r.report_id]),
    [
      ['a.xml.gz', 'two-a'],
      ['b.xml.gz', 'two-b'],
    ],
  );
});

test('the report list: type, status, org_name, from/to, paging, filters and order', async () => {
  await collectingDomain(app.api, 'list.test');
  const post = (xml: string, filename?: string) =>
    app.api.post('/v2/domains/list.test/dmarc/reports', {
      content: Buffer.from(xml.replaceAll('acme.test', 'list.test')).toString('base64'),
      filename,
    });
  // 27 reports: 24 from google.com, one day each from January 1, then Yahoo and Microsoft.
  for (let i = 0; i < 24; i++) assert.equal((await post(variant(`l-${i}`, JAN_1 + i * DAY))).body.status, 'processed');
  await post(variant('l-yahoo', JAN_1 + 2 * DAY, 'Yahoo'));
  await post(variant('l-ms', JAN_1 + 2 * DAY + DAY / 2, 'Enterprise Outlook'));
  // A report that cannot be read: its file name still gives the reporter and period.
  await post(variant('l-bad', JAN_1).replace('<count>3</count>', '<count>x</count>'), 'bad.example!list.test!1767225600!1767311999.xml');
  const list = (query: string) => app.api.get(`/v2/domains/list.test/dmarc/reports${query}`);
  const ids = async (query: string) => (await list(query)).body.data.map((r: any) => r.report_id ?? r.org_name);

  const all = await list('');
  assert.deepEqual(all.body.meta, { total: 27, limit: 25, offset: 0 });
  assert.deepEqual(
    all.body.data.slice(0, 3).map((r: any) => r.report_id ?? r.org_name),
    ['bad.example', 'l-ms', 'l-yahoo'],
    'newest first',
  );
  assert.deepEqual(await ids('?limit=2&offset=25'), ['l-1', 'l-0']);
  assert.equal((await list('?limit=100')).body.data.length, 27);
  for (const bad of ['?limit=101', '?limit=0', '?offset=-1', '?type=weekly', '?status=done'])
    assert.equal((await list(bad)).status, 400, bad);

  assert.deepEqual(await ids('?status=failed'), ['bad.example']);
  assert.deepEqual(await ids('?type=forensic'), []);
  assert.deepEqual(await ids('?org_name=Yahoo'), ['l-yahoo']);
  assert.deepEqual(await ids('?org_name=yahoo'), [], 'org_name is exact');
  // A date covers its whole UTC day; a date-time is an instant.
  assert.deepEqual(await ids('?from=2026-01-03&to=2026-01-03'), ['l-ms', 'l-yahoo', 'l-2']);
  assert.deepEqual(await ids('?from=2026-01-03T12:00:00Z&to=2026-01-04T00:00:00Z'), ['l-ms', 'l-3']);
  assert.deepEqual(await ids('?to=2026-01-01'), ['bad.example', 'l-0']);
  assert.equal((await list('?from=2026-01-20')).body.meta.total, 5);
  const badDate = await list('?from=last+tuesday');
  assert.deepEqual(
    [badDate.status, badDate.body.error],
    [400, 'from must be an ISO 8601 date or date-time, such as 2026-01-31 or 2026-01-31T12:00:00Z'],
  );

  // key.condition filters with match, and sorting by order/direction.
  assert.deepEqual(await ids('?org_name.contains=outl'), ['l-ms']);
  assert.deepEqual(await ids('?org_name.exact=yahoo&report_id.exact=l-5&match=or'), ['l-yahoo', 'l-5']);
  assert.deepEqual(await ids('?message_count.less_than=1'), ['bad.example']);
  assert.deepEqual(await ids('?period_start.before=2026-01-02&status.exact=processed'), ['l-0']);
  assert.deepEqual(await ids('?order=period_start&direction=asc&limit=2&status=processed'), ['l-0', 'l-1']);
  assert.deepEqual(await ids('?order=period_start&direction=desc&limit=2'), ['l-23', 'l-22']);
  assert.equal((await list('?unknown.exact=1')).body.meta.total, 27, 'unknown keys are ignored');
  // Breakdowns of this domain only count its own reports.
  const reporters = await app.api.get('/v2/domains/list.test/dmarc/stats/reporters');
  assert.deepEqual(
    reporters.body.data.map((r: any) => [r.org_name, r.report_count, r.message_count]),
    [
      ['google.com', 24, 1200],
      ['Enterprise Outlook', 1, 50],
      ['Yahoo', 1, 50],
    ],
  );
  const window = await app.api.get('/v2/domains/list.test/dmarc/stats/reporters?from=2026-01-03&to=2026-01-04');
  assert.deepEqual(
    window.body.data.map((r: any) => [r.org_name, r.report_count]),
    [
      ['google.com', 2],
      ['Enterprise Outlook', 1],
      ['Yahoo', 1],
    ],
  );
});

/** An aggregate report about `domain` with one record per [source IP, count, passed]. */
function reportWith(domain: string, reportId: string, begin: number, rows: Array<[string, number, boolean]>): string {
  const records = rows.map(
    ([ip, count, passed]) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
    <policy_evaluated><disposition>none</disposition><dkim>${passed ? 'pass' : 'fail'}</dkim><spf>${passed ? 'pass' : 'fail'}</spf></policy_evaluated></row>
    <identifiers><header_from>${domain}</header_from></identifiers><auth_results><spf><domain>${domain}</domain><result>${passed ? 'pass' : 'fail'}</result></spf></auth_results></record>`,
  );
  return `<?xml version="1.0" encoding="UTF-8" ?><feedback><report_metadata><org_name>google.com</org_name><email>noreply-dmarc-support@google.com</email>
    <report_id>${reportId}</report_id><date_range><begin>${begin}</begin><end>${begin + DAY - 1}</end></date_range></report_metadata>
    <policy_published><domain>${domain}</domain><p>none</p></policy_published>${records.join('')}</feedback>`;
}

test('breakdowns by country and by network (AS) of the sending IPs, IPv4 and IPv6, unknown last', async () => {
  await collectingDomain(app.api, 'places.test');
  const post = async (xml: string) => {
    const stored = await app.api.post('/v2/domains/places.test/dmarc/reports', { content: Buffer.from(xml).toString('base64') });
    assert.equal(stored.body.status, 'processed', stored.text);
  };
  await post(
    reportWith('places.test', 'p-1', JAN_1, [
      ['8.8.8.8', 40, true], // Google, US
      ['8.8.4.4', 10, false], // Google, US
      ['2001:4860:4860::8888', 5, true], // Google, US
      ['193.0.6.139', 7, true], // RIPE NCC, NL
      ['2001:67c:2e8:22::c100:68b', 2, false], // RIPE NCC, NL
      ['192.0.2.99', 3, false], // documentation range: no country, no network
    ]),
  );
  await post(reportWith('places.test', 'p-2', JAN_1 + 5 * DAY, [['193.0.6.139', 100, true]]));

  const countries = await app.api.get('/v2/domains/places.test/dmarc/stats/countries?to=2026-01-02');
  assert.equal(countries.status, 200, countries.text);
  assert.deepEqual(countries.body.meta, { limit: 50, offset: 0 });
  assert.deepEqual(
    countries.body.data.map((r: any) => [r.country, r.message_count, r.dmarc.pass, r.dmarc.fail, r.source_count]),
    [
      ['US', 55, 45, 10, 3],
      ['NL', 9, 7, 2, 2],
      [null, 3, 0, 3, 1],
    ],
  );
  assert.deepEqual(countries.body.data[0].spf, { pass: 45, fail: 10, pass_rate: 0.8182 });
  assert.deepEqual(countries.body.data[0].dispositions, { none: 55, quarantine: 0, reject: 0 });

  const networks = await app.api.get('/v2/domains/places.test/dmarc/stats/networks?to=2026-01-02');
  assert.equal(networks.status, 200, networks.text);
  assert.deepEqual(
    networks.body.data.map((r: any) => [r.asn, r.organization, r.message_count, r.dmarc.pass, r.source_count]),
    [
      [15169, 'Google LLC', 55, 45, 3],
      [3333, 'Reseaux IP Europeens Network Coordination Centre (RIPE NCC)', 9, 7, 2],
      [null, null, 3, 0, 1],
    ],
  );

  // Every report: the later one puts the Netherlands first; paging and the period apply.
  const all = await app.api.get('/v2/domains/places.test/dmarc/stats/countries');
  assert.deepEqual(
    all.body.data.map((r: any) => [r.country, r.message_count]),
    [
      ['NL', 109],
      ['US', 55],
      [null, 3],
    ],
  );
  const page = await app.api.get('/v2/domains/places.test/dmarc/stats/networks?limit=1&offset=1');
  assert.deepEqual([page.body.data.map((r: any) => r.asn), page.body.meta], [[15169], { limit: 1, offset: 1 }]);
  const later = await app.api.get('/v2/domains/places.test/dmarc/stats/networks?from=2026-01-03');
  assert.deepEqual(
    later.body.data.map((r: any) => [r.asn, r.message_count, r.source_count]),
    [[3333, 100, 1]],
  );
  assert.deepEqual((await app.api.get('/v2/domains/places.test/dmarc/stats/countries?org_name=Yahoo')).body.data, []);
  assert.equal((await app.api.get('/v2/domains/nowhere.test/dmarc/stats/countries')).status, 404);
});

test('deleting a domain deletes its reports: the same name added again starts empty', async () => {
  await collectingDomain(app.api, 'gone.test');
  const stored = await app.api.post('/v2/domains/gone.test/dmarc/reports', {
    content: Buffer.from(variant('g-1', JAN_1).replaceAll('acme.test', 'gone.test')).toString('base64'),
  });
  assert.equal(stored.body.status, 'processed');
  assert.equal((await app.api.delete('/v2/domains/gone.test')).status, 200);
  assert.equal((await app.api.get(`/v2/domains/gone.test/dmarc/reports/${stored.body.id}`)).status, 404);
  await collectingDomain(app.api, 'gone.test');
  assert.deepEqual((await app.api.get('/v2/domains/gone.test/dmarc/reports')).body.meta, { total: 0, limit: 25, offset: 0 });
  assert.deepEqual((await app.api.get('/v2/domains/gone.test/dmarc/stats/sources')).body.data, []);
});

test('a report received while no worker runs is listed as pending, and a worker started later reads it', async () => {
  const port = await freePort();
  const smtpOnly = await startTestApp({
    roles: ['api', 'smtp'],
    env: { SMTP_INBOUND_PORT: String(port), MAIL_HOSTNAME: 'mail.postlane.test' },
  });
  try {
    const domain = await collectingDomain(smtpOnly.api, 'acme.test');
    assert.equal((await deliver(port, domain.dmarc_address, fixture('microsoft-aggregate.eml'))).code, 250);
    const pending = await smtpOnly.api.get('/v2/domains/acme.test/dmarc/reports?status=pending');
    assert.equal(pending.body.meta.total, 1);
    const report = pending.body.data[0];
    assert.deepEqual(
      [report.org_name, report.report_id, report.processed_at, report.filename],
      [null, null, null, 'enterprise.protection.outlook.com!acme.test!1767225600!1767312000.xml.gz'],
    );
    assert.deepEqual((await smtpOnly.api.get(`/v2/domains/acme.test/dmarc/reports/${report.id}`)).body.records, []);

    const worker = await startPostlane(
      { ...smtpOnly.config, databaseUrl: await databaseUrlOf(smtpOnly) },
      { roles: ['worker'], jobPollMs: 50 },
    );
    try {
      const read = await eventually(async () => {
        const one = await smtpOnly.api.get(`/v2/domains/acme.test/dmarc/reports/${report.id}`);
        return one.body.status === 'processed' && one.body;
      });
      assert.deepEqual([read.org_name, read.record_count, read.message_count], ['Enterprise Outlook', 2, 19]);
    } finally {
      await worker.close();
    }
  } finally {
    await smtpOnly.close();
  }
});
