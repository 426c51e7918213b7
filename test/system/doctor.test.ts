// `postlane doctor` and GET /v2/system/health against a loopback DNS server: a correct setup
// passes; each common mistake is reported as a blocker or a warning with its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createSelfSignedCertificate } from '../../src/smtp/tls.ts';
import { runDoctor, type DoctorReport } from '../../src/resources/system/doctor/index.ts';
import { checkClock } from '../../src/resources/system/doctor/runtime.ts';
import { databaseUrlOf, eventually, freePort, freshDatabase, startChildApp, urlWithSchema } from '../helpers/app.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { publish, startDomainApp } from '../domains/helpers.ts';
import { signedInUser } from '../helpers/sessions.ts';

const ADDRESS = '203.0.113.10';
const PTR = '10.113.0.203.in-addr.arpa';
const root = join(import.meta.dirname, '..', '..');

const byId = (report: DoctorReport, id: string) => {
  const check = report.checks.find((c) => c.id === id);
  assert.ok(check, `check ${id} in ${report.checks.map((c) => c.id).join(', ')}`);
  return check;
};

async function setUp(t: import('node:test').TestContext) {
  const sink = await startSmtpSink();
  const dataDir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'doctor-cert-'));
  const made = createSelfSignedCertificate(['mail.example.net'], 90);
  writeFileSync(join(dataDir, 'cert.pem'), made.cert);
  writeFileSync(join(dataDir, 'key.pem'), made.key);
  const app = await startDomainApp({
    env: {
      MAIL_HOSTNAME: 'mail.example.net',
      RETURN_PATH_HOST: 'bounces.mail.example.net',
      SPF_INCLUDE_HOST: '_spf.mail.example.net',
      TRACKING_CNAME_TARGET: 'track.mail.example.net',
      INBOUND_MX_HOST: 'inbound.mail.example.net',
      PUBLIC_URL: 'https://mail.example.net',
      PUBLIC_ADDRESSES: ADDRESS,
      DOCTOR_PROBE_DOMAIN: 'probe.example.org',
      DOCTOR_TIME_URL: 'off',
      MX_PORT: String(sink.port),
      SMTP_TLS_CERT: join(dataDir, 'cert.pem'),
      SMTP_TLS_KEY: join(dataDir, 'key.pem'),
    },
  });
  t.after(async () => {
    await app.close();
    await sink.close();
  });
  const { dns } = app;
  dns.set('mail.example.net', 'A', [ADDRESS]);
  dns.set(PTR, 'PTR', ['mail.example.net']);
  dns.set('probe.example.org', 'MX', [{ exchange: 'mx.probe.example.org', priority: 10 }]);
  dns.set('mx.probe.example.org', 'A', ['127.0.0.1']);
  dns.set('_spf.mail.example.net', 'TXT', [`v=spf1 ip4:${ADDRESS} -all`]);
  const created = await app.api.post('/v2/domains', { name: 'example.com' });
  assert.equal(created.status, 201, created.text);
  publish(dns, created.body);
  return { app, dns, certificate: made };
}

test('a correct setup passes every check; the report is served at /v2/system/health to admins with a full-scope credential', async (t) => {
  const { app } = await setUp(t);
  const response = await app.api.get('/v2/system/health');
  assert.equal(response.status, 200, response.text);
  const report = response.body as DoctorReport;
  const notPassing = report.checks.filter((c) => c.status !== 'pass' && c.status !== 'skip');
  assert.deepEqual(notPassing, [], 'nothing fails or warns');
  assert.equal(report.status, 'pass');
  for (const id of [
    'mail_hostname',
    'public_url',
    'forward_dns',
    `reverse_dns:${ADDRESS}`,
    'outbound_port_25',
    'smtp_certificate',
    `blocklist:${ADDRESS}`,
    'spf:example.com',
    'dkim:example.com',
    'dmarc:example.com',
    'bulk_sender_rules:example.com',
    'domain_blocklist:example.com',
    'disk_space',
    'database',
  ]) {
    assert.equal(byId(report, id).status, 'pass', id);
  }
  assert.match(byId(report, 'outbound_port_25').found, /220/);
  assert.equal(byId(report, 'clock').status, 'skip');

  const sending = await app.api.post('/v2/api-keys', { name: 'sender', scope: 'sending' });
  assert.equal(sending.status, 201, sending.text);
  assert.equal((await app.as(sending.body.key).get('/v2/system/health')).status, 403, 'a sending key may not read it');
  assert.equal((await app.as(null).get('/v2/system/health')).status, 401);
  const member = await signedInUser(app, 'staff@example.org', app.workspace.id, 'member');
  const refused = await member.request('GET', '/v2/system/health');
  assert.equal(refused.status, 403, 'a member may not read it');
  assert.equal(refused.body.error, 'admin_role_required');
  const admin = await signedInUser(app, 'boss@example.org', app.workspace.id, 'admin');
  assert.equal((await admin.request('GET', '/v2/system/health')).status, 200, 'an admin may');

  // Another workspace's report names its own domains only.
  const other = await app.newWorkspace();
  const theirs = await other.api.get('/v2/system/health');
  assert.equal(theirs.status, 200);
  assert.equal(
    theirs.body.checks.some((c: { id: string }) => c.id.endsWith(':example.com')),
    false,
    "no other workspace's domain",
  );
});

test('each mistake is a blocker or a warning with its fix', async (t) => {
  const { app, dns } = await setUp(t);
  const deps = { db: app.running.ctx.db, config: app.config };

  // localhost and plain-HTTP or local links
  const local = await runDoctor({ ...deps, config: { ...app.config, mailHostname: 'localhost', publicUrl: 'http://localhost:3000' } });
  assert.equal(local.status, 'fail');
  assert.equal(byId(local, 'mail_hostname').status, 'fail');
  assert.match(byId(local, 'mail_hostname').fix!, /fully qualified name/);
  assert.equal(byId(local, 'public_url').status, 'fail');
  const bareIp = await runDoctor({ ...deps, config: { ...app.config, mailHostname: ADDRESS } });
  assert.match(byId(bareIp, 'mail_hostname').found, /bare IP/);

  // a missing PTR, then a mismatched one
  dns.remove(PTR);
  let report = await runDoctor(deps);
  assert.equal(byId(report, `reverse_dns:${ADDRESS}`).status, 'fail');
  assert.match(byId(report, `reverse_dns:${ADDRESS}`).found, /no PTR record/);
  assert.match(byId(report, `reverse_dns:${ADDRESS}`).fix!, /PTR record to mail\.example\.net/);
  dns.set(PTR, 'PTR', ['vps-203-0-113-10.provider.example']);
  report = await runDoctor(deps);
  assert.match(byId(report, `reverse_dns:${ADDRESS}`).found, /names vps-203-0-113-10\.provider\.example, not mail\.example\.net/);
  dns.set(PTR, 'PTR', ['mail.example.net']);

  // the hostname points elsewhere
  dns.set('mail.example.net', 'A', ['198.51.100.7']);
  report = await runDoctor(deps);
  assert.equal(byId(report, 'forward_dns').status, 'fail');
  assert.match(byId(report, 'forward_dns').fix!, /203\.0\.113\.10/);
  dns.set('mail.example.net', 'A', [ADDRESS]);

  // a listed address and a listed domain
  dns.set(`10.113.0.203.zen.spamhaus.org`, 'A', ['127.0.0.2']);
  dns.set('example.com.dbl.spamhaus.org', 'A', ['127.0.1.2']);
  report = await runDoctor(deps);
  assert.equal(byId(report, `blocklist:${ADDRESS}`).status, 'fail');
  assert.match(byId(report, `blocklist:${ADDRESS}`).found, /zen\.spamhaus\.org \(127\.0\.0\.2\)/);
  assert.match(byId(report, `blocklist:${ADDRESS}`).fix!, /removal/);
  assert.equal(byId(report, 'domain_blocklist:example.com').status, 'fail');
  dns.remove('10.113.0.203.zen.spamhaus.org');
  dns.remove('example.com.dbl.spamhaus.org');

  // a missing DMARC record: a warning, and the bulk-sender rules are unmet
  dns.remove('_dmarc.example.com');
  report = await runDoctor(deps);
  assert.equal(byId(report, 'dmarc:example.com').status, 'warn');
  assert.match(byId(report, 'dmarc:example.com').fix!, /Publish TXT _dmarc\.example\.com "v=DMARC1; p=none;"/);
  assert.equal(byId(report, 'bulk_sender_rules:example.com').status, 'warn');
  assert.match(byId(report, 'bulk_sender_rules:example.com').found, /no DMARC record/);

  // SPF as receivers evaluate it: the include host does not list this address
  dns.set('_spf.mail.example.net', 'TXT', ['v=spf1 ip4:198.51.100.7 -all']);
  report = await runDoctor(deps);
  assert.equal(byId(report, 'spf:example.com').status, 'fail');
  assert.match(byId(report, 'spf:example.com').found, /203\.0\.113\.10 as softfail/);
  assert.match(byId(report, 'spf:example.com').fix!, /v=spf1 ip4:203\.0\.113\.10 -all/);

  // outbound port 25 closed: the probe's MX answers nothing
  dns.set('mx.probe.example.org', 'A', ['127.0.0.1']);
  report = await runDoctor({ ...deps, config: { ...app.config, mxPort: 1 } });
  assert.equal(byId(report, 'outbound_port_25').status, 'fail');
  assert.match(byId(report, 'outbound_port_25').fix!, /port 1\b/);
});

test('a certificate expiring within 14 days, or for another name, is a blocker', async (t) => {
  const { app } = await setUp(t);
  const dir = app.config.dataDir;
  const soon = createSelfSignedCertificate(['mail.example.net'], 5);
  writeFileSync(join(dir, 'soon.pem'), soon.cert);
  let report = await runDoctor({ db: app.running.ctx.db, config: { ...app.config, smtpTlsCert: join(dir, 'soon.pem') } });
  assert.equal(byId(report, 'smtp_certificate').status, 'fail');
  assert.match(byId(report, 'smtp_certificate').found, /expires in 4 day/);
  assert.match(byId(report, 'smtp_certificate').fix!, /Renew/);
  const other = createSelfSignedCertificate(['other.example.net'], 90);
  report = await runDoctor({ db: app.running.ctx.db, config: { ...app.config, smtpTlsCert: other.cert } });
  assert.match(byId(report, 'smtp_certificate').found, /not valid for mail\.example\.net/);
  report = await runDoctor({ db: app.running.ctx.db, config: { ...app.config, smtpTlsCert: null } });
  assert.equal(byId(report, 'smtp_certificate').status, 'warn');
});

test('the certificate check reads the files as they are now: a renewal shows without a restart, a key from another pair is a blocker', async (t) => {
  const { app } = await setUp(t);
  const deps = { db: app.running.ctx.db, config: app.config };
  const replace = (file: string, text: string) => {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  };
  const renewed = createSelfSignedCertificate(['mail.example.net'], 45);
  replace(app.config.smtpTlsKey!, renewed.key);
  replace(app.config.smtpTlsCert!, renewed.cert);
  let report = await runDoctor(deps);
  assert.equal(byId(report, 'smtp_certificate').status, 'pass');
  assert.match(byId(report, 'smtp_certificate').found, /\(44 days\)/);
  replace(app.config.smtpTlsKey!, createSelfSignedCertificate(['mail.example.net']).key);
  report = await runDoctor(deps);
  assert.equal(byId(report, 'smtp_certificate').status, 'fail');
  assert.equal(byId(report, 'smtp_certificate').found, 'SMTP_TLS_KEY does not match the certificate in SMTP_TLS_CERT');
  assert.match(byId(report, 'smtp_certificate').fix!, /private key of this certificate/);
});

test('the clock is compared with an HTTP Date header, and skipped when unreachable', async (t) => {
  let skewMs = 0;
  const server = createServer((_request, response) => {
    response.setHeader('date', new Date(Date.now() + skewMs).toUTCString());
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/`;
  assert.equal((await checkClock(url)).status, 'pass');
  skewMs = 5 * 60_000;
  const off = await checkClock(url);
  assert.equal(off.status, 'fail');
  assert.match(off.fix!, /timesyncd|chrony/);
  assert.equal((await checkClock('http://127.0.0.1:1/')).status, 'skip');
});

test('postlane doctor --json exits 1 on a blocker and 0 when there is none', async (t) => {
  const { app, dns } = await setUp(t);
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    DATABASE_URL: await databaseUrlOf(app),
    DATA_DIR: app.config.dataDir,
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '300',
    MAIL_HOSTNAME: 'mail.example.net',
    SPF_INCLUDE_HOST: '_spf.mail.example.net',
    RETURN_PATH_HOST: 'bounces.mail.example.net',
    PUBLIC_URL: 'https://mail.example.net',
    PUBLIC_ADDRESSES: ADDRESS,
    DOCTOR_PROBE_DOMAIN: 'probe.example.org',
    DOCTOR_TIME_URL: 'off',
    MX_PORT: String(app.config.mxPort),
    SMTP_TLS_CERT: app.config.smtpTlsCert!,
    SMTP_TLS_KEY: app.config.smtpTlsKey!,
  };
  // Not spawnSync: the DNS server answering the child runs in this process.
  const run = (extra: Record<string, string> = {}, args = ['--json']) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(root, 'bin', 'postlane.js'), 'doctor', ...args],
        { env: { ...env, ...extra } },
        (error, stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
  const clean = await run();
  assert.equal(clean.status, 0, clean.stdout + clean.stderr);
  assert.equal(JSON.parse(clean.stdout).status, 'pass');
  const broken = await run({ MAIL_HOSTNAME: 'localhost' });
  assert.equal(broken.status, 1, broken.stderr);
  assert.equal(byId(JSON.parse(broken.stdout), 'mail_hostname').status, 'fail');
  const text = await run({ MAIL_HOSTNAME: 'localhost' }, []);
  assert.equal(text.status, 1);
  assert.match(text.stdout, /FAIL {2}mail_hostname: .*\n {6}fix: /);
});

test('postlane serve prints one line per blocker at start', async (t) => {
  const database = await freshDatabase();
  t.after(() => database.drop());
  const port = await freePort();
  const server = await startChildApp({
    DATABASE_URL: urlWithSchema(database.url, database.schema),
    DATA_DIR: database.dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    SMTP_SUBMISSION_PORT: '0',
    SMTP_INBOUND_PORT: '0',
    MAIL_HOSTNAME: 'localhost',
    DNS_SERVERS: '127.0.0.1:1',
    DNS_TIMEOUT_MS: '100',
    DOCTOR_TIME_URL: 'off',
  });
  try {
    await eventually(async () => /doctor: BLOCKER mail_hostname: .*Fix: Set MAIL_HOSTNAME/.test(server.output()), 30_000);
    assert.match(server.output(), /doctor: BLOCKER public_url: /);
    assert.doesNotMatch(server.output(), /BLOCKER (database|disk_space)/);
  } finally {
    await server.kill();
  }
});
