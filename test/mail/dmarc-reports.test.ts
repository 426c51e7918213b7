// The pure DMARC report readers (src/mail/dmarc/): the receivers' report shapes, and hostile
// input (XML entity tricks, gzip and zip bombs, lying zip headers, oversized files) refused
// with a reason instead of eating memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { decodeXml, parseAggregateXml } from '../../src/mail/dmarc/aggregate.ts';
import { DmarcReportError } from '../../src/mail/dmarc/errors.ts';
import {
  MAX_REPORT_FILE_BYTES,
  MAX_REPORT_XML_BYTES,
  parseReportFilename,
  reportFileFormat,
  reportXmlBytes,
} from '../../src/mail/dmarc/files.ts';
import { parseForensicReport } from '../../src/mail/dmarc/forensic.ts';
import { looksLikeMessage, reportsInMessage } from '../../src/mail/dmarc/message.ts';
import { fixture } from '../dmarc/helpers.ts';

/** A zip archive written by hand, so that a test can make its headers lie about sizes. */
function zip(files: Array<{ name: string; data: Buffer; declaredSize?: number }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const compressed = deflateRawSync(file.data);
    const size = file.declaredSize ?? file.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc32(file.data), 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc32(file.data), 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

async function reason(promise: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    assert.ok(error instanceof DmarcReportError, `expected a DmarcReportError, got ${error}`);
    return error.message;
  }
  assert.fail('expected the report to be refused');
}

const readXml = async (bytes: Buffer) => parseAggregateXml(decodeXml(await reportXmlBytes(bytes)));
const GOOGLE_XML = fixture('google-aggregate.xml');

test('Google aggregate XML: metadata, published policy and every record as reported', async () => {
  const report = await readXml(GOOGLE_XML);
  assert.equal(report.orgName, 'google.com');
  assert.equal(report.email, 'noreply-dmarc-support@google.com');
  assert.equal(report.extraContactInfo, 'https://support.google.com/a/answer/2466580');
  assert.equal(report.reportId, '4962375528751822301');
  assert.deepEqual([report.begin, report.end], [1767225600, 1767311999]);
  assert.deepEqual(report.policy, { domain: 'acme.test', adkim: 'r', aspf: 'r', p: 'none', sp: 'none', np: 'none', pct: 100, fo: null });
  assert.equal(report.records.length, 3);
  assert.deepEqual(report.records[0], {
    sourceIp: '203.0.113.10',
    count: 42,
    disposition: 'none',
    dkim: 'pass',
    spf: 'pass',
    dmarc: 'pass',
    reasons: [],
    headerFrom: 'acme.test',
    envelopeFrom: null,
    envelopeTo: null,
    dkimResults: [{ domain: 'acme.test', selector: 'postlane', result: 'pass', human_result: null }],
    spfResults: [{ domain: 'postlane.acme.test', scope: null, result: 'pass' }],
  });
  // Forwarded mail: SPF fails alignment but DKIM survives, so DMARC passes.
  assert.deepEqual([report.records[1].spf, report.records[1].dkim, report.records[1].dmarc], ['fail', 'pass', 'pass']);
  // A spoofer without a signature: no dkim results at all.
  assert.deepEqual([report.records[2].dmarc, report.records[2].dkimResults], ['fail', []]);
});

test('Microsoft and Yahoo shapes: envelope identifiers, scopes, several DKIM results, override reasons', async () => {
  const microsoft = await readXml(fixture('microsoft-aggregate.xml'));
  assert.equal(microsoft.orgName, 'Enterprise Outlook');
  assert.equal(microsoft.policy.fo, '1');
  assert.equal(microsoft.records[1].sourceIp, '2001:db8::25');
  assert.equal(microsoft.records[1].disposition, 'quarantine');
  assert.deepEqual([microsoft.records[1].envelopeFrom, microsoft.records[1].envelopeTo], ['acme.test', 'hotmail.com']);
  assert.deepEqual(microsoft.records[1].spfResults, [{ domain: 'acme.test', scope: 'mfrom', result: 'softfail' }]);

  const yahoo = await readXml(fixture('yahoo-aggregate.xml'));
  assert.equal(yahoo.reportId, '1767225600.184467');
  assert.equal(yahoo.policy.p, 'reject');
  assert.equal(yahoo.records[1].headerFrom, 'news.acme.test');
  const forwarded = yahoo.records[2];
  assert.deepEqual(forwarded.reasons, [{ type: 'mailing_list', comment: 'arc=pass as[1].d=lists.forwarder.example' }]);
  assert.deepEqual(
    forwarded.dkimResults.map((r) => [r.domain, r.result]),
    [
      ['acme.test', 'fail'],
      ['lists.forwarder.example', 'pass'],
    ],
  );
});

test('report files: plain, gzip and zip give the same XML; the format comes from the bytes, not the name', async () => {
  const gz = gzipSync(GOOGLE_XML);
  const zipped = zip([{ name: 'google.com!acme.test!1767225600!1767311999.xml', data: GOOGLE_XML }]);
  assert.deepEqual([reportFileFormat(GOOGLE_XML), reportFileFormat(gz), reportFileFormat(zipped)], ['xml', 'gzip', 'zip']);
  for (const bytes of [GOOGLE_XML, gz, zipped]) assert.deepEqual(await reportXmlBytes(bytes), GOOGLE_XML);
  // A lone entry without the .xml suffix is read too; a directory entry is passed over.
  assert.deepEqual(
    await reportXmlBytes(
      zip([
        { name: 'reports/', data: Buffer.alloc(0) },
        { name: 'report', data: GOOGLE_XML },
      ]),
    ),
    GOOGLE_XML,
  );
});

test('a gzip bomb stops at the decompressed limit', async () => {
  const bomb = gzipSync(Buffer.alloc(MAX_REPORT_XML_BYTES + 1024 * 1024));
  assert.ok(bomb.length < 100_000, 'the bomb is small');
  assert.match(await reason(reportXmlBytes(bomb)), /gzip file decompresses to more than 32 MB/);
});

test('zip bombs: an entry declaring too much is not opened; one whose header lies is cut off', async () => {
  const big = Buffer.alloc(MAX_REPORT_XML_BYTES + 1024 * 1024);
  assert.match(await reason(reportXmlBytes(zip([{ name: 'r.xml', data: big }]))), /zip entry r\.xml decompresses to more than 32 MB/);
  const lying = zip([{ name: 'r.xml', data: big, declaredSize: 1000 }]);
  assert.match(await reason(reportXmlBytes(lying)), /could not be read: too many bytes in the stream/);
});

test('unreadable files: empty, over 16 MB, a broken zip, a zip without XML, bad gzip', async () => {
  assert.equal(await reason(reportXmlBytes(Buffer.alloc(0))), 'The report file is empty');
  assert.match(await reason(reportXmlBytes(Buffer.alloc(MAX_REPORT_FILE_BYTES + 1, 0x20))), /larger than 16 MB/);
  const good = zip([{ name: 'r.xml', data: GOOGLE_XML }]);
  assert.match(await reason(reportXmlBytes(good.subarray(0, good.length - 30))), /^The zip file could not be read/);
  assert.equal(
    await reason(
      reportXmlBytes(
        zip([
          { name: 'a.txt', data: Buffer.from('a') },
          { name: 'b.txt', data: Buffer.from('b') },
        ]),
      ),
    ),
    'The zip file holds no XML report',
  );
  assert.match(
    await reason(reportXmlBytes(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]))),
    /^The gzip file could not be decompressed/,
  );
});

test('XML with a DOCTYPE is refused before parsing: entity expansion and external entities', async () => {
  const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
    <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]><feedback><report_metadata><org_name>&lol2;</org_name></report_metadata></feedback>`;
  assert.match(await reason(() => parseAggregateXml(laughs)), /DOCTYPE or entity declarations/);
  const external = `<?xml version="1.0"?><!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><feedback>&xxe;</feedback>`;
  assert.match(await reason(() => parseAggregateXml(external)), /DOCTYPE or entity declarations/);
  // Deep nesting is bounded too.
  assert.match(
    await reason(() => parseAggregateXml(`<feedback>${'<a>'.repeat(5000)}${'</a>'.repeat(5000)}</feedback>`)),
    /Maximum nested tags exceeded/,
  );
  // The five predefined entities still read as text.
  const amp = GOOGLE_XML.toString().replace('<org_name>google.com</org_name>', '<org_name>Mail &amp; Co &lt;x&gt;</org_name>');
  assert.equal(parseAggregateXml(amp).orgName, 'Mail & Co <x>');
});

test('broken reports say what is wrong', async () => {
  const xml = GOOGLE_XML.toString();
  const cases: Array<[string, RegExp]> = [
    [xml.slice(0, 900), /^The XML is cut off: it ends inside feedback, record/],
    [xml.replace('</org_name>', '</org>'), /^The XML is not well-formed \(line 4, column \d+\): Expected closing tag 'org_name'/],
    ['<report/>', /no <feedback> root element/],
    [xml.replace(/<report_id>.*<\/report_id>/, ''), /^report_metadata\.report_id is missing$/],
    [xml.replace('<begin>1767225600</begin>', '<begin>yesterday</begin>'), /date_range\.begin is not a Unix time/],
    [
      xml.replace('<source_ip>203.0.113.10</source_ip>', '<source_ip>mail.example</source_ip>'),
      /^record 1: source_ip "mail\.example" is not an IP address$/,
    ],
    [xml.replace('<count>3</count>', '<count>-3</count>'), /^record 2: count "-3" is not a whole number$/],
    [
      xml.replace('<disposition>none</disposition>', '<disposition>drop</disposition>'),
      /^record 1: disposition must be none, quarantine or reject/,
    ],
    [xml.replace(/<header_from>acme.test<\/header_from>/, ''), /^record 1: identifiers\.header_from is missing$/],
  ];
  for (const [input, expected] of cases) assert.match(await reason(() => parseAggregateXml(input)), expected);
});

test('DMARCbis reports with a namespace, a byte-order mark and another declared encoding are read', () => {
  const namespaced = GOOGLE_XML.toString().replace('<feedback>', '<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0">');
  assert.equal(parseAggregateXml(namespaced).records.length, 3);
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), GOOGLE_XML]);
  assert.equal(parseAggregateXml(decodeXml(bom)).orgName, 'google.com');
  const latin1 = Buffer.from(
    GOOGLE_XML.toString().replace('encoding="UTF-8"', 'encoding="ISO-8859-1"').replace('google.com</org_name>', 'Gérant</org_name>'),
    'latin1',
  );
  assert.equal(parseAggregateXml(decodeXml(latin1)).orgName, 'Gérant');
});

test('RFC 7489 file names still name the reporter and period of a report that cannot be read', () => {
  assert.deepEqual(parseReportFilename('google.com!acme.test!1767225600!1767311999.zip'), {
    receiver: 'google.com',
    domain: 'acme.test',
    begin: 1767225600,
    end: 1767311999,
  });
  assert.deepEqual(parseReportFilename('Mail.Example!acme.test!1767225600!1767311999!u1.xml.gz')?.receiver, 'mail.example');
  assert.equal(parseReportFilename('report.xml'), null);
  assert.equal(parseReportFilename(null), null);
});

test('forensic reports (RFC 6591): the feedback fields and the original headers, never the body', async () => {
  const report = await parseForensicReport(fixture('forensic-auth-failure.eml'));
  assert.equal(report.feedbackType, 'auth-failure');
  assert.equal(report.orgName, 'mx.receiver.example');
  assert.equal(report.reporterEmail, 'dmarc-failures@mx.receiver.example');
  assert.equal(report.reportId, 'afrf-20260102091403.4417@mx.receiver.example');
  assert.equal(report.reportedDomain, 'acme.test');
  assert.equal(report.authFailure, 'dmarc');
  assert.equal(report.sourceIp, '192.0.2.99');
  assert.equal(report.arrivalMs, Date.parse('2026-01-02T09:13:58Z'));
  assert.deepEqual([report.originalMailFrom, report.originalRcptTo], ['billing@acme.test', 'alice@receiver.example']);
  assert.match(report.authenticationResults!, /dmarc=fail .* spf=fail smtp\.mailfrom=acme\.test; dkim=none$/);
  assert.equal(report.original.subject, 'Your invoice is attached');
  assert.equal(report.original.messageId, '<8842.spoof@mail.spoofer.example>');

  // A full message/rfc822 copy: its headers are kept, its body is not.
  const withBody = fixture('forensic-auth-failure.eml')
    .toString()
    .replace('Content-Type: text/rfc822-headers', 'Content-Type: message/rfc822')
    .replace(
      'Message-ID: <8842.spoof@mail.spoofer.example>\r\n',
      'Message-ID: <8842.spoof@mail.spoofer.example>\r\n\r\nSecret body text of the customer\r\n',
    );
  const full = await parseForensicReport(Buffer.from(withBody));
  assert.equal(full.original.messageId, '<8842.spoof@mail.spoofer.example>');
  assert.doesNotMatch(JSON.stringify(full), /Secret body text/);

  // Without Reported-Domain the original From names the domain.
  const noDomain = fixture('forensic-auth-failure.eml').toString().replace('Reported-Domain: acme.test\r\n', '');
  assert.equal((await parseForensicReport(Buffer.from(noDomain))).reportedDomain, 'acme.test');
  // An abuse complaint is not a DMARC failure report.
  const abuse = fixture('forensic-auth-failure.eml').toString().replace('Feedback-Type: auth-failure', 'Feedback-Type: abuse');
  assert.equal(await reason(parseForensicReport(Buffer.from(abuse))), 'Feedback-Type "abuse" is not a DMARC failure report (auth-failure)');
});

test('the reports in a mail: zip, gzip and plain XML attachments, a failure report, or none', async () => {
  const names = async (file: string) => (await reportsInMessage(fixture(file))).reports.map((r) => [r.type, r.filename]);
  assert.deepEqual(await names('google-aggregate.eml'), [['aggregate', 'google.com!acme.test!1767225600!1767311999.zip']]);
  assert.deepEqual(await names('microsoft-aggregate.eml'), [
    ['aggregate', 'enterprise.protection.outlook.com!acme.test!1767225600!1767312000.xml.gz'],
  ]);
  assert.deepEqual(await names('yahoo-aggregate.eml'), [['aggregate', 'yahoo.com!acme.test!1767225600!1767311999.xml']]);
  assert.deepEqual(await names('forensic-auth-failure.eml'), [['forensic', null]]);
  const plain = await reportsInMessage(Buffer.from('From: a@b.example\r\nSubject: hello\r\n\r\nJust text\r\n'));
  assert.deepEqual(plain, {
    reports: [],
    problem: 'The message carries no DMARC report (no XML, gzip or zip attachment, no feedback report)',
  });
  assert.equal(looksLikeMessage(fixture('google-aggregate.eml')), true);
  assert.equal(looksLikeMessage(GOOGLE_XML), false);
  assert.equal(looksLikeMessage(gzipSync(GOOGLE_XML)), false);
});
